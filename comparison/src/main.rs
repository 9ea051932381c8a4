//! Same-run, cross-process comparison of salias with Aeron IPC, iceoryx2 and the machine's
//! floors, by the rules of the project's benchmarking guide.
//!
//! Run: `cargo run --release -- [--quick] [--only throughput|latency|openloop] [--two-publishers]`
//! from `comparison/` (or `scripts/compare` from the repository root); `--headline` runs
//! only the C++ original's headline grid (2P1S and 2P2S × 1, 4, 64 MiB, salias FIFO
//! `offer` against Aeron `try_claim`) on >= 4 cores. Exit status 3: the machine cannot run
//! what was asked (too few cores, no real-time privilege); 2 is a usage error.
//!
//! - Every publisher, subscriber, pinger and ponger is a separate process: this binary
//!   re-executes itself with a role (named in the environment, `support::role`), pinned to a
//!   named core (recorded with every figure).
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
//! - Wake-up latency (`wake.rs`): commit to the woken receiver, with 2–5 ms idle gaps, salias's
//!   futex `recv` beside iceoryx2's event listener, and the idle receiver's CPU.
//! - Raw results: JSON lines in `comparison/results/<unix time>.jsonl` with a header record.

use std::process::ExitCode;

use clap::Parser;

mod baselines;
mod child;
mod cli;
mod error;
mod message;
mod openloop;
mod parent;
mod pingpong;
mod plan;
mod platform;
mod report;
mod resources;
mod roles;
mod session;
mod setup;
mod throughput;
mod transport;
mod transports;
mod verification;
mod wake;

fn main() -> ExitCode {
    if let Some(role) = roles::ROLE.current() {
        return match child::child(&role) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("salias-comparison {role}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let cli = cli::Cli::parse();
    let command: Vec<String> = std::env::args().collect();
    match session::run(&cli, &command.join(" ")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            // 3: the machine or its privileges cannot run what was asked (too few cores for
            // --headline, SCHED_FIFO refused), so scripts can tell it from a failed run and
            // from a usage error (2, clap's).
            if matches!(e, error::RunError::Plan(_)) {
                ExitCode::from(3)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
