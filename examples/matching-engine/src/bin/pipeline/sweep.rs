//! The sweep: every system at every offered load, alternating, for several rounds, with
//! the machine's floors before and after; raw data to `results/pipeline-<time>.jsonl`.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use support::hist::Quantiles;
use support::jsonl::JsonLines;
use support::machine::Machine;

use crate::cli::Options;
use crate::floors::{cache_line_floor, pacing_floor};
use crate::params::{GatewayWait, Params};
use crate::quiet::wait_for_quiet;
use crate::records::{Record, loadavg, rounded};
use crate::systems::run_system;
use crate::verify::verify;

pub fn run(options: &Options, p: &Params, systems: &[&str], command: &str) -> ExitCode {
    let machine = Machine::detect();
    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let mut out = match JsonLines::create_stamped(&out_dir, "pipeline-") {
        Ok(out) => out,
        Err(problem) => {
            eprintln!("pipeline: {problem}");
            return ExitCode::FAILURE;
        }
    };
    let path = out.path().to_owned();
    let mut write = |record: &Record| out.write(record).unwrap_or_else(|e| panic!("{e}"));
    write(&Record::Machine {
        cpu: &machine.cpu,
        nproc: machine.cores,
        kernel: &machine.kernel,
        loadavg_before: loadavg(),
        command,
        placement: p.placement(),
        gateways: p.gateways,
        subscribers: p.subscribers,
        duration_ms: p.duration_ms,
        warmup_ms: p.warmup_ms,
        rounds: options.rounds,
        quiet_wait_s: options.quiet_wait_s,
        seed: p.seed,
        realtime: p.realtime,
    });
    println!(
        "sweep on {machine}; placement {}; rates {:?}; {} rounds of {} ms each, systems alternating; raw data {}",
        p.placement(),
        options.rates,
        options.rounds,
        p.duration_ms,
        path.display()
    );
    let floor_cores = [p.gateway_core(0), p.engine_core];
    let floor = |when| {
        let one_way_ns = cache_line_floor(floor_cores[0], floor_cores[1]);
        println!(
            "cache-line floor between cores {} and {} ({when}), one way: {}",
            floor_cores[0],
            floor_cores[1],
            one_way_ns.micros()
        );
        Record::Floor {
            when,
            cores: floor_cores,
            one_way_ns,
        }
    };
    write(&floor("before"));
    for (waiters, how) in [
        (1, GatewayWait::Sleep),
        (2, GatewayWait::Sleep),
        (2, GatewayWait::Yield),
    ] {
        const RATE: f64 = 100_000.0;
        let core = p.gateway_core(0);
        let late = pacing_floor(core, waiters, RATE, how);
        println!(
            "pacing floor, {waiters} thread(s) on core {core} waiting by {how} for {RATE} planned times/s in total, lateness: {}",
            late.micros()
        );
        write(&Record::PacingFloor {
            core,
            threads: waiters,
            wait: how,
            rate_per_s: RATE,
            late_ns: late,
        });
    }
    let started = Instant::now();
    let mut run = 0;
    let mut failed = false;
    for round in 0..options.rounds {
        for &rate in &options.rates {
            for system in systems {
                let params = Params { rate, ..p.clone() };
                let busy_before = wait_for_quiet(Duration::from_secs(options.quiet_wait_s));
                let result = run_system(system, &params, run);
                run += 1;
                let summary = match verify(&params, &result) {
                    Ok(summary) => summary,
                    Err(problem) => {
                        eprintln!("{system} at {rate} req/s, round {round}: VERIFICATION FAILED: {problem}");
                        failed = true;
                        continue;
                    }
                };
                write(&Record::Run {
                    system,
                    round,
                    cpu_busy_before: rounded(busy_before, 3),
                    offered_per_s: rate,
                    achieved_per_s: summary.achieved.round(),
                    requests: summary.requests,
                    events: summary.events,
                    refused_gateway: summary.refused_gateway,
                    refused_engine: summary.refused_engine,
                    verified: true,
                    input_hash: format!("{:#018x}", result.engine.input.hash),
                    output_hash: format!("{:#018x}", result.engine.output.hash),
                    queueing_ns: Quantiles::of(&summary.queueing),
                    service_ns: Quantiles::of(&summary.service),
                    total_ns: Quantiles::of(&summary.total),
                    engine_ns: Quantiles::of(&summary.processing),
                    inbound_ns: Quantiles::of(&summary.inbound),
                });
                println!(
                    "round {round} {system:>8} offered {:>9.0}/s achieved {:>9.0}/s  total p50 {:>8.2} µs p99 {:>9.2} µs  service p50 {:>7.2} µs  engine p50 {:>5} ns",
                    rate,
                    summary.achieved,
                    summary.total.value_at_quantile(0.5) as f64 / 1000.0,
                    summary.total.value_at_quantile(0.99) as f64 / 1000.0,
                    summary.service.value_at_quantile(0.5) as f64 / 1000.0,
                    summary.processing.value_at_quantile(0.5)
                );
            }
        }
        eprintln!(
            "round {}/{} done after {:.1?}",
            round + 1,
            options.rounds,
            started.elapsed()
        );
    }
    write(&floor("after"));
    write(&Record::End {
        loadavg_after: loadavg(),
        seconds: rounded(started.elapsed().as_secs_f64(), 1),
        failed,
    });
    println!("raw data: {}", path.display());
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
