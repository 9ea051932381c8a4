//! The tools the salias benchmarks and integration tests share, each written once: the
//! clock, core pinning, the shared-memory start barrier, running roles as separate
//! processes under a watchdog, statistics and the machine's description, HdrHistogram
//! helpers with one quantile list, the cache-line, 64-byte message and ring floors, and the raw-data records with
//! their JSON-lines writer.
//!
//! It does not depend on salias, so a harness links the library once, its own way.
//!
//! - Time: [`clock::now_ns`] (CLOCK_MONOTONIC, one clock for every process on the
//!   machine) and [`clock::resolution_ns`]; for latency [`clock::latency`], the CPU's
//!   counter ([`tsc`]) calibrated at run time, or CLOCK_MONOTONIC with the reason.
//! - CPU: [`cpu::CpuTime`] of a process from /proc, and [`cpu::IdleCpu`] over an idle
//!   interval; [`wake`]: the schedule of a wake-up latency run; [`epoll::Readable`],
//!   a raw event loop's wait on one descriptor.
//! - Placement: [`cores::cores`], [`cores::pin`], [`cores::core_for`],
//!   [`cores::Placement`].
//! - Scheduling: [`realtime`] (SCHED_FIFO / SCHED_RR for a spinning role).
//! - Processes: [`role::Role`] re-executes the running binary as a role,
//!   [`role::Children`] waits for them under a watchdog, [`role::report`] and
//!   [`role::report_json`] are the one child report format.
//! - Speed states: [`state::Bracket`], the cache-line probe around every run.
//! - Shared memory: [`shm::ShmFile`], [`barrier::Barrier`], [`floor`], [`message_floor`]
//!   (both going round [`slots`]) and [`ring_floor`].
//! - Figures: [`stats::Spread`], [`stats::ratios`], [`machine::Machine`],
//!   [`hist::Quantiles`] over [`hist::QUANTILES`], [`throughput::Finished`] reports
//!   added up by [`throughput::Tally`].
//! - Raw data: [`records`] (the records every harness writes) and [`jsonl::JsonLines`].

pub mod barrier;
pub mod clock;
pub mod cores;
pub mod cpu;
#[cfg(target_os = "linux")]
pub mod epoll;
pub mod floor;
pub mod hist;
pub mod jsonl;
pub mod machine;
pub mod message_floor;
pub mod prefetch;
pub mod realtime;
pub mod records;
pub mod ring_floor;
pub mod role;
pub mod shm;
pub mod slots;
pub mod state;
pub mod stats;
pub mod throughput;
pub mod trips;
pub mod tsc;
pub mod wake;
