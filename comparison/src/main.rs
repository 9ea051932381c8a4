//! Same-run, cross-process comparison of salias with Aeron IPC, iceoryx2 and the machine's
//! floors, by the rules of the project's benchmarking guide.
//!
//! Run: `cargo run --release -- [--quick] [--only throughput|latency|openloop] [--two-publishers]`
//! from `comparison/` (or `scripts/compare` from the repository root).
//!
//! - Every publisher, subscriber, pinger and ponger is a separate process: this binary
//!   re-executes itself with a role, pinned to a named core (recorded with every figure).
//!   The parent only orchestrates, creates the shared objects and, for Aeron, hosts the
//!   embedded C media driver (one driver for the whole invocation, on an unpinned thread).
//! - The clock starts after every process has connected and passed a barrier in shared
//!   memory and stops when the publisher made its last offer / the subscriber has the last
//!   message; setup, prefault, spawn and teardown stay outside.
//! - Every run verifies message count, per-publisher order, a payload word and a checksum.
//! - Variants alternate round by round (A B C … A B C …, the starting variant rotating each
//!   round); the summary is the median with min and max over the rounds, and ratios.
//! - Latency: ping-pong round trip / 2 next to the bare cache-line floor, and an open-loop
//!   sweep of offered load (planned send times, never skipped; HdrHistograms of queueing,
//!   service and total time), both between cores 0 and 1.
//! - Raw results: JSON lines in `comparison/results/<unix time>.jsonl` with a header record.

mod baselines;
mod cli;
mod message;
mod openloop;
mod pingpong;
mod plan;
mod platform;
mod report;
mod roles;
mod session;
mod shm;
mod throughput;
mod transports;
mod verification;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() >= 6 && args[1] == "--role" {
        roles::child(&args[2], &args[3], args[4].parse().unwrap(), &args[6..]);
        return;
    }
    let cli = <cli::Cli as clap::Parser>::parse_from(&args);
    session::run(&cli, &args.join(" "));
}
