//! The showcase pipeline: gateway processes → `OrderedMpsc<OrderMsg>` → engine process →
//! `FifoFanout<EventMsg>` → market-data subscriber processes, every role a separate process
//! started by this one command, with open-loop latency; and, for comparison in the same
//! run, the same roles as threads over a mutex + condvar queue and over lock-free SPSC rings.
//!
//! `pipeline --help` lists the options (`cli.rs`): a single run of each chosen system by
//! default, `--sweep` for every system at every offered load with raw data to
//! `results/*.jsonl`, `--quick` for a smoke run.
//!
//! Measurement (doc/benchmarking.md rule 5): each gateway sends its pre-generated requests
//! at planned times `t0 + (i·gateways + g)·Δ`, waiting for each planned time and never
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
mod codec;
mod floors;
mod pacing;
mod params;
mod placement;
mod quiet;
mod records;
mod roles;
mod single;
mod sweep;
mod systems;
mod transport;
mod verify;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

use crate::cli::Cli;
use crate::placement::round_robin;
use crate::systems::salias::child::{self, ROLE};

fn main() -> ExitCode {
    // A process this pipeline started for one of its roles: everything it needs is in
    // its environment.
    if let Some(role) = ROLE.current() {
        return child::main(&role);
    }
    let args: Vec<String> = std::env::args().collect();
    let options = match Cli::parse().options() {
        Ok(options) => options,
        Err(problem) => Cli::command().error(ErrorKind::ArgumentConflict, problem).exit(),
    };
    let p = options.params.clone();
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
    // Recorded as the command that reproduces the run from the repository.
    let command = format!(
        "cargo run --release -p matching-engine --bin pipeline -- {}",
        args[1..].join(" ")
    );

    if options.sweep {
        sweep::run(&options, &p, &options.systems, &command)
    } else {
        single::run(&p, &options.systems)
    }
}
