//! One invocation: the parts round by round (the setups alternating, the first one
//! rotating each round), a raw record per run, then the summary.

use std::path::Path;
use std::time::Instant;

use support::cores::cores;
use support::jsonl::JsonLines;

use crate::cli::Cli;
use crate::error::RunError;
use crate::openloop::{OpenLoop, openloop_run};
use crate::pingpong::pingpong_run;
use crate::plan::Plan;
use crate::platform::catch_interrupt;
use crate::report::summary::{self, OpenLoopLevels, Results};
use crate::report::{header, records};
use crate::resources::Ctx;
use crate::roles::system_name;
use crate::throughput::{Run, throughput_run};
use crate::transports::aeron::start_aeron_driver;
use crate::transports::iceoryx2::ShmTidy;
use crate::wake::wake_run;
use support::records::Wake;

/// The raw data file, with what failed to write it.
struct Output(JsonLines);

impl Output {
    fn write<T: serde::Serialize>(&mut self, record: &T) -> Result<(), RunError> {
        self.0.write(record).map_err(RunError::Output)
    }
}

/// Runs the comparison `cli` asks for; `command` is the command line, for the header.
pub fn run(cli: &Cli, command: &str) -> Result<(), RunError> {
    // Counted before anything is pinned (a pinned process sees only its own core).
    cores();
    catch_interrupt();
    let plan = Plan::new(cli).map_err(RunError::Plan)?;
    plan.check_realtime().map_err(RunError::Plan)?;

    // Leave /dev/shm and /tmp as found: iceoryx2 keeps a global management object in
    // /dev/shm and directories under /tmp/iceoryx2 after its last process exits.
    let _tidy = ShmTidy::snapshot();

    // The embedded Aeron C media driver, for the whole invocation.
    let driver = plan.aeron.then(start_aeron_driver);
    let mut ctx = Ctx {
        aeron_dir: driver.as_ref().map_or(String::new(), |d| d.dir().to_owned()),
        next_stream: 1000,
    };

    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let mut out = Output(JsonLines::create_stamped(&out_dir, "").map_err(RunError::Output)?);
    let aeron_c = driver.as_ref().map(|_| rusteron_client::Aeron::version_full());
    let header = header::header(&plan, command, aeron_c);
    out.write(&header)?;
    println!(
        "salias comparison on {}; {} alternating rounds; raw data: {}",
        header.machine,
        plan.rounds,
        out.0.path().display()
    );
    println!("latency clock: {}", header.latency_clock.describe());
    if let Some(versions) = &header.versions {
        println!("versions: {versions}");
    }
    if plan.marked_oversubscribed {
        println!(
            "(--allow-oversubscribed: {} cores for up to 4 busy processes; every record is marked oversubscribed)",
            cores()
        );
    }
    if !plan.two_publishers && !plan.headline {
        println!("(2P1S skipped: {} cores; pass --two-publishers to force)", cores());
    }

    let started = Instant::now();
    let mut results = Results {
        throughput: Vec::new(),
        latency: Vec::new(),
        batched: Vec::new(),
        pingpong_cores: [0, 0],
        openloop: Vec::new(),
        wake: Vec::new(),
    };
    if plan.throughput {
        results.throughput = throughput(&plan, &mut ctx, &mut out, started)?;
    }
    if plan.latency {
        latency(&plan, &mut ctx, &mut out, started, &mut results)?;
    }
    if plan.openloop {
        results.openloop = openloop(&plan, &mut ctx, &mut out, started)?;
    }
    if plan.wake {
        results.wake = wake(&plan, &mut out, started)?;
    }
    drop(driver);

    summary::print(&plan, &results);
    println!("\nraw data: {}", out.0.path().display());
    Ok(())
}

/// The order of round `round` over `n` variants: each starts a round in turn.
fn rotation(n: usize, round: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |k| (k + round) % n)
}

fn throughput(plan: &Plan, ctx: &mut Ctx, out: &mut Output, started: Instant) -> Result<Vec<Vec<Run>>, RunError> {
    let rounds = plan.rounds;
    let mut results: Vec<Vec<_>> = plan.setups.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for i in rotation(plan.setups.len(), round) {
            let setup = &plan.setups[i];
            let run = throughput_run(setup, round, ctx)?;
            out.write(&records::throughput(setup, round, &run))?;
            eprintln!(
                "  round {}/{rounds} {:<44} delivered {:>7.2} M/s",
                round + 1,
                setup.label(),
                run.delivered_per_s / 1e6
            );
            results[i].push(run);
        }
        eprintln!(
            "throughput round {}/{rounds} done after {:.1?}",
            round + 1,
            started.elapsed()
        );
    }
    Ok(results)
}

fn latency(
    plan: &Plan,
    ctx: &mut Ctx,
    out: &mut Output,
    started: Instant,
    results: &mut Results,
) -> Result<(), RunError> {
    let rounds = plan.rounds;
    results.latency = plan.latency_systems.iter().map(|_| Vec::new()).collect();
    results.batched = plan.latency_systems.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for i in rotation(plan.latency_systems.len(), round) {
            let system = plan.latency_systems[i];
            let run = pingpong_run(system, plan.pings, round, ctx)?;
            results.pingpong_cores = run.cores;
            out.write(&records::pingpong(system, round, &run))?;
            results.batched[i].push(run.batched);
            results.latency[i].push(run.round_trips);
        }
        eprintln!(
            "latency round {}/{rounds} done after {:.1?}",
            round + 1,
            started.elapsed()
        );
    }
    Ok(())
}

fn wake(plan: &Plan, out: &mut Output, started: Instant) -> Result<Vec<Vec<Wake>>, RunError> {
    let (rounds, variants) = (plan.rounds, &plan.wake_variants);
    let mut results: Vec<Vec<Wake>> = variants.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for i in rotation(variants.len(), round) {
            let record = wake_run(variants[i], plan.wake_plan, round)?;
            out.write(&record)?;
            results[i].push(record);
        }
        eprintln!("wake round {}/{rounds} done after {:.1?}", round + 1, started.elapsed());
    }
    Ok(results)
}

/// Level by level; within a level the systems alternate round by round, and a system
/// that saturated in most of a level's rounds is not run at the levels above.
fn openloop(plan: &Plan, ctx: &mut Ctx, out: &mut Output, started: Instant) -> Result<OpenLoopLevels, RunError> {
    let (rounds, systems) = (plan.rounds, &plan.openloop_systems);
    let timing = (plan.ol_duration, plan.ol_warmup);
    let mut levels = Vec::new();
    let mut sweeping: Vec<bool> = systems.iter().map(|_| true).collect();
    for &load in &plan.loads {
        let active: Vec<usize> = (0..systems.len()).filter(|&i| sweeping[i]).collect();
        if active.is_empty() {
            break;
        }
        let mut runs: Vec<Vec<OpenLoop>> = systems.iter().map(|_| Vec::new()).collect();
        for round in 0..rounds {
            for k in rotation(active.len(), round) {
                let i = active[k];
                let (system, param) = systems[i];
                let r = openloop_run(system, param, load * 1e6, timing, plan.realtime, round, ctx)?;
                out.write(&records::openloop(system, round, load * 1e6, timing, &r))?;
                eprintln!(
                    "  open loop {load:>5} M/s round {}/{rounds} {:<9} total p50 {:>9} p99 {:>9} p99.9 {:>10} ns, sent at {:.2} M/s{}",
                    round + 1,
                    system_name(system),
                    r.total.p50(),
                    r.total.get("p99").unwrap_or(0),
                    r.total.get("p99.9").unwrap_or(0),
                    r.achieved_per_s / 1e6,
                    if r.saturated() { " (saturated)" } else { "" }
                );
                runs[i].push(r);
            }
        }
        for &i in &active {
            let saturated = runs[i].iter().filter(|r| r.saturated()).count();
            if saturated * 2 > runs[i].len() {
                sweeping[i] = false;
            }
        }
        levels.push((load, runs));
        eprintln!("open loop {load} M/s done after {:.1?}", started.elapsed());
    }
    Ok(levels)
}
