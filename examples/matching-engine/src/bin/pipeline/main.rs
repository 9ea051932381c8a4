//! The showcase pipeline: gateway processes → `OrderedMpsc<OrderMsg>` → engine process →
//! `FifoFanout<EventMsg>` → market-data subscriber processes, every role a separate process
//! started by this one command, with open-loop latency; and, for comparison in the same
//! run, the same roles as threads over a mutex + condvar queue and over lock-free SPSC rings.
//!
//! ```text
//! pipeline [--rate N] [--duration-ms N]      one salias run (default 1 M orders/s, 1 s)
//! pipeline --sweep [--rates A,B,..] [--rounds N]
//!                                              every system at every offered load,
//!                                              alternating, raw data to results/*.jsonl
//! options: --gateways N (2) --subscribers N (1) --seed N --warmup-ms N (50)
//!          --gateway-cores 0[,..] --engine-core 1 --subscriber-cores 0[,..]
//!          --gateway-wait yield|sleep (how a gateway waits for a planned time)
//!          --realtime PRIORITY (every role under SCHED_RR, so kernel threads cannot take
//!          a role's core; needs root or CAP_SYS_NICE and util-linux's chrt, and runs
//!          short enough for the kernel's real-time throttling)
//!          --subscriber-wait futex|nap (how an idle subscriber waits; the mutex baseline
//!          always sleeps on its condvar)
//!          --system salias|mutex|lockfree|all (single run) --record DIR (single run)
//!          --quiet-wait-s N (sweep: wait up to N s (2) before each run for the machine to
//!          be under 10 % busy; the reading is recorded with the run)
//! ```
//!
//! Measurement (BENCHMARKING.md rule 5): each gateway sends its pre-generated requests at
//! planned times `t0 + (i·gateways + g)·Δ`, waiting for each planned time and never
//! skipping one to catch up. A request carries its planned time and its queueing time
//! (actual offer − planned); the engine copies both into every event it causes. A
//! subscriber stamps the arrival of each request's first event (published only after the
//! engine finished the request, all of its events in one batch). Queueing, service
//! (arrival − actual send), total (arrival − planned) and the engine's own per-request
//! time (received → events published) go to HdrHistograms. Requests planned in the first
//! `--warmup-ms` are sent and verified but not measured.
//!
//! Verification, every run: the engine checks the channel's global sequence is gap-free,
//! hashes its input and output; each subscriber decodes every event, checks each
//! request's events arrive in input order, and hashes what it received. Counts and hashes
//! must agree or the run fails. `--record DIR` writes the engine's input (in the order it
//! received it) and each subscriber's events, so a single-process replay can be compared
//! byte for byte (`tests/pipeline.rs`).

#![forbid(unsafe_code)]

mod cli;
mod clock;
mod floors;
mod histograms;
mod machine;
mod output;
mod params;
mod placement;
mod roles;
mod single;
mod sweep;
mod systems;
mod transport;
mod verify;

use std::process::ExitCode;

use crate::cli::parse;
use crate::placement::round_robin;
use crate::systems::salias::child::run_role;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let options = match parse(&args[1..]) {
        Ok(options) => options,
        Err(problem) => {
            eprintln!("pipeline: {problem}");
            return ExitCode::FAILURE;
        }
    };
    let p = options.params.clone();
    if let Some((role, base, index)) = &options.role {
        run_role(role, base, *index, &p);
        return ExitCode::SUCCESS;
    }
    if let Some(priority) = p.realtime {
        // Find out now, on a throwaway thread, rather than in the middle of a run.
        let probe = std::thread::spawn(move || round_robin(priority)).join();
        if let Ok(Err(problem)) = probe {
            eprintln!("pipeline: --realtime: {problem}");
            return ExitCode::FAILURE;
        }
    }
    if let Some(dir) = &p.record {
        std::fs::create_dir_all(dir).expect("create record directory");
    }
    let systems: Vec<&str> = match options.system.as_str() {
        "all" => vec!["mutex", "lockfree", "salias"],
        one => vec![one],
    };
    // Recorded as the command that reproduces the run from the repository.
    let command = format!(
        "cargo run --release -p matching-engine --bin pipeline -- {}",
        args[1..].join(" ")
    );

    if options.sweep {
        sweep::run(&options, &p, &systems, &command)
    } else {
        single::run(&p, &systems)
    }
}
