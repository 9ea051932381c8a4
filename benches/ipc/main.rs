//! Cross-process throughput and latency of salias, by doc/benchmarking.md.
//!
//! Run: `cargo bench --bench ipc` (every ring size, 5 rounds), or add `-- --quick` (1 MiB
//! rings, 3 rounds, about a minute) or `-- --smoke` (seconds; checks the harness, its
//! figures mean nothing); `-- --only throughput`, `-- --only rings` (FIFO 1P1S at 1, 4 and 64 MiB,
//! and at 4 and 64 MiB on 2 MiB huge pages where the machine has them),
//! `-- --only order` (FIFO against Ordered, 1P1S, 1 MiB),
//! `-- --only sizes` (raw frames of 8 B to 4 KiB), `-- --only stress` (4 and 8 publishers into 64 KiB rings), `-- --only lossy`
//! (a tethered subscriber with and without a sleeping lossy one beside it, and a lossy one
//! keeping up) or `-- --only latency`. `-- --help` lists the flags.
//!
//! - Every publisher and subscriber is a separate process: this binary re-executes itself
//!   with a role (`roles.rs`), pinned to a named core (recorded with every figure).
//! - The clock starts only after every process has connected and passed a barrier in
//!   shared memory, and stops when the subscriber has the last message; setup and spawning
//!   stay outside.
//! - Every run verifies its result: message count, per-publisher order and a checksum.
//! - Variants alternate round by round (A B A B …), and the summary is the median with min
//!   and max over the rounds. Raw results are written as JSON lines to
//!   `target/bench-results/ipc-<unix time>.jsonl`, a header with the machine and the
//!   command, then one record per run (the support crate's `records`).
//! - Runs with more spinning processes than cores are marked oversubscribed, in the
//!   records and the printed tables: their processes took turns on the cores.
//! - Latency is ping-pong round trip / 2 between two processes, next to the machine's
//!   floors measured the same way between the same two cores: a bare cache-line
//!   ping-pong, and a 64-byte message on a line of its own each way. Stamps come from the
//!   latency clock (the CPU's counter calibrated at start, or CLOCK_MONOTONIC with the
//!   reason), recorded in the header.

mod cli;
mod huge_pages;
mod lossy;
#[path = "../common/msg64.rs"]
mod msg64;
mod pingpong;
mod report;
mod roles;
mod scenarios;
mod setup;
mod throughput;
mod write_floor;

use std::error::Error;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use support::jsonl::JsonLines;
use support::machine::Machine;
use support::records::Header;

use crate::cli::{Cli, Section};

fn main() -> ExitCode {
    if roles::ROLE.current().is_some() {
        roles::run();
        return ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    match bench(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ipc: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bench(cli: &Cli) -> Result<(), Box<dyn Error>> {
    // Counted before anything is pinned.
    support::cores::cores();
    let mut scale = cli.scale();
    let rounds = scale.rounds;
    // The rings of the sections that repeat on huge pages (`rings` has 1, 4 and 64 MiB at
    // any scale); `usable` leaves out those smaller than a page, and tries none if no such
    // section runs.
    let mut candidates = Vec::new();
    if cli.runs(Section::Throughput) {
        candidates.extend_from_slice(scale.rings);
    }
    if cli.runs(Section::Rings) {
        candidates.extend([1 << 20, 4 << 20, 64 << 20]);
    }
    candidates.sort_unstable();
    candidates.dedup();
    let (huge_page_rings, huge_pages_refused) = huge_pages::usable(&candidates);
    scale.huge_page_rings = huge_page_rings;
    let out_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-results");
    let mut out = JsonLines::create_stamped(&out_dir, "ipc-")?;
    let mut header = Header::new(std::env::args().collect::<Vec<_>>().join(" "), rounds);
    header.config = Some(serde_json::json!({
        "scale": scale.name,
        "messages_per_publisher": scale.messages,
        "throughput_ring_bytes": scale.rings,
        "pings": scale.pings,
        "pingpong_bytes": cli.pingpong_bytes,
        "huge_page_rings": scale.huge_page_rings,
        "huge_pages_refused": huge_pages_refused,
    }));
    out.write(&header)?;
    println!(
        "salias cross-process benchmark on {}; {rounds} alternating rounds; raw data: {}",
        Machine::detect(),
        out.path().display()
    );
    println!("latency clock: {}", header.latency_clock.describe());
    let mibs = |rings: &[usize]| {
        rings
            .iter()
            .map(|ring| format!("{} MiB", ring >> 20))
            .collect::<Vec<_>>()
    };
    match &huge_pages_refused {
        None if scale.huge_page_rings.is_empty() => {}
        None => println!(
            "2 MiB huge pages: FifoMpsc 1P1S repeats on them at {}",
            mibs(&scale.huge_page_rings).join(" and ")
        ),
        Some(why) => println!(
            "2 MiB huge pages: {} ({why}); mount hugetlbfs and reserve pages to run them (doc/benchmarking.md)",
            if scale.huge_page_rings.is_empty() {
                "none".to_owned()
            } else {
                format!("only at {}", mibs(&scale.huge_page_rings).join(" and "))
            }
        ),
    }

    let started = Instant::now();
    let sections = [
        (
            Section::Throughput,
            scenarios::throughput(&scale),
            "",
            "throughput, 64-byte messages",
        ),
        (
            Section::Rings,
            scenarios::rings(&scale),
            "rings ",
            "ring sizes, FifoMpsc 1P1S",
        ),
        (
            Section::Order,
            scenarios::order(&scale),
            "order ",
            "global order's cost, 1P1S, 1 MiB",
        ),
        (
            Section::Receive,
            scenarios::receive(&scale),
            "receive ",
            "the subscriber's loop, 1P1S, 1 MiB",
        ),
        (
            Section::Sizes,
            scenarios::sizes(&scale),
            "size sweep ",
            "message size sweep (raw frames)",
        ),
        (
            Section::Stress,
            scenarios::stress(&scale),
            "stress ",
            "multi-producer stress (64 KiB rings)",
        ),
    ];
    for (section, setups, what, title) in sections {
        if cli.runs(section) {
            let results = throughput::rounds(&setups, rounds, what, started, &mut out)?;
            report::print_throughput(title, &setups, &results);
        }
    }
    if cli.runs(Section::Lossy) {
        lossy::section(&scale, rounds, started, &mut out)?;
    }
    if cli.runs(Section::Latency) {
        pingpong::latency(rounds, scale.pings, cli.pingpong_bytes as usize, &mut out)?;
    }
    println!("\nraw data: {}", out.path().display());
    Ok(())
}
