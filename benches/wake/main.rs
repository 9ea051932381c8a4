//! Cross-process wake-up latency: how long a receiver that sleeps takes to run again after
//! a publisher commits, and what its waiting costs while idle, by doc/benchmarking.md.
//!
//! Run: `cargo bench --bench wake --features tokio` (5 rounds of 500 wake-ups per row,
//! about two minutes; without the feature, no `recv_async` row), or `-- --smoke`
//! (seconds; checks the harness, its figures mean little).
//!
//! - Rows: salias `Subscriber::recv` (the default `Adaptive` strategy, and one that
//!   sleeps in the futex at once, the kernel's wake alone), and prototypes of the two
//!   designs for a pollable readiness descriptor, built here far enough to measure:
//!   A, a watcher thread futex-waits on a shared word and writes the receiver's eventfd,
//!   which its epoll loop watches; B, the waking publisher writes one byte to the sleeping
//!   receiver's named FIFO, which its epoll loop watches. Then the library's design A:
//!   the `Subscriber`'s own descriptor in a raw epoll loop, and `recv_async` in a
//!   current-thread tokio runtime.
//! - The publisher is this process, pinned to core 0; the receiver a re-executed child,
//!   pinned to core 1 (with its threads). Each message follows the receiver's
//!   acknowledgement of the one before by a random 2–5 ms gap, so the receiver is asleep
//!   when it is committed; it carries `CLOCK_MONOTONIC` read just before the commit, and
//!   the receiver reads the clock as its wait returns. The prototypes count the messages
//!   they found before sleeping and leave them out; `recv` cannot tell.
//! - Then the receiver idles while the parent reads its CPU time from /proc (utime +
//!   stime, and the threads' scheduler run time) over an interval that starts as it goes
//!   back to waiting (so a strategy's spin counts).
//! - Rows alternate within each round, the first row rotating; the table gives the median
//!   [min, max] over rounds of each quantile, the per-round ratio to the futex wake, and
//!   the quantiles of all rounds' samples pooled. Raw data: one record a run
//!   (`support::records::Wake`) in `target/bench-results/wake-<unix time>.jsonl`.

mod cli;
mod receiver;
mod report;
mod rows;
mod run;
mod stamp;
mod sys;
mod words;

use std::error::Error;
use std::process::ExitCode;

use clap::Parser;
use support::jsonl::JsonLines;
use support::machine::Machine;
use support::records::Header;

use crate::cli::Cli;
use crate::rows::Row;
use support::wake::GAP_US;

fn main() -> ExitCode {
    if receiver::ROLE.current().is_some() {
        receiver::run();
        return ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    match bench(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wake: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bench(cli: &Cli) -> Result<(), Box<dyn Error>> {
    // Counted before anything is pinned.
    support::cores::cores();
    let scale = cli.scale();
    let out_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-results");
    let mut out = JsonLines::create_stamped(&out_dir, "wake-")?;
    let mut header = Header::new(std::env::args().collect::<Vec<_>>().join(" "), scale.rounds);
    header.config = Some(serde_json::json!({
        "scale": scale.name,
        "messages_per_run": scale.messages,
        "gap_us": GAP_US,
        "idle_ms": scale.idle_ms,
        "placement": report::placement(),
    }));
    out.write(&header)?;
    println!(
        "salias wake-up benchmark on {}; {} alternating rounds of {} wake-ups per row; clock resolution {} ns; {}; raw data: {}",
        Machine::detect(),
        scale.rounds,
        scale.messages,
        support::clock::resolution_ns(),
        report::placement(),
        out.path().display()
    );
    let rows = Row::all();
    let mut results = vec![Vec::new(); rows.len()];
    let mut pooled = vec![Vec::new(); rows.len()];
    let pid = std::process::id();
    for round in 0..scale.rounds {
        for k in 0..rows.len() {
            let i = (round + k) % rows.len();
            let name = format!("wake-{pid}-{round}-{i}");
            let seed = support::clock::now_ns() ^ ((round * rows.len() + i) as u64) << 32;
            let run = run::run(rows[i], &name, &scale, seed)?;
            let record = report::record(rows[i], round, &run);
            out.write(&record)?;
            pooled[i].extend_from_slice(&run.report.wake_ns);
            results[i].push(record);
        }
    }
    for all in &mut pooled {
        all.sort_unstable();
    }
    report::print(&rows, &results, &pooled);
    println!("\nraw data: {}", out.path().display());
    Ok(())
}
