//! The sweep: every system at every offered load, alternating, for several rounds, with
//! the machine's floors before and after; raw data to `results/pipeline-<time>.jsonl`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::cli::Options;
use crate::floors::{cache_line_floor, pacing_floor};
use crate::histograms::{percentiles_json, percentiles_line};
use crate::machine::{machine, wait_for_quiet};
use crate::output::json_string;
use crate::params::{GatewayWait, Params};
use crate::systems::run_system;
use crate::verify::verify;

pub fn run(options: &Options, p: &Params, systems: &[&str], command: &str) -> ExitCode {
    let (cpu, cores, kernel) = machine();

    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    std::fs::create_dir_all(&out_dir).expect("results directory");
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    let out_path = out_dir.join(format!("pipeline-{stamp}.jsonl"));
    let mut out = std::fs::File::create(&out_path).expect("results file");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    writeln!(
        out,
        "{{\"type\":\"machine\",\"cpu\":{},\"nproc\":{cores},\"kernel\":{},\"loadavg_before\":{},\"command\":{},\"placement\":{},\"gateways\":{},\"subscribers\":{},\"duration_ms\":{},\"warmup_ms\":{},\"rounds\":{},\"quiet_wait_s\":{},\"seed\":{},\"realtime\":{}}}",
        json_string(&cpu),
        json_string(&kernel),
        json_string(load.trim()),
        json_string(command),
        json_string(&p.placement()),
        p.gateways,
        p.subscribers,
        p.duration_ms,
        p.warmup_ms,
        options.rounds,
        options.quiet_wait_s,
        p.seed,
        p.realtime.map_or("null".to_owned(), |priority| priority.to_string())
    )
    .expect("write results");
    println!(
        "sweep on {cpu}, {cores} cores, Linux {kernel}; placement {}; rates {:?}; {} rounds of {} ms each, systems alternating; raw data {}",
        p.placement(),
        options.rates,
        options.rounds,
        p.duration_ms,
        out_path.display()
    );
    let floor_cores = (p.gateway_core(0), p.engine_core);
    let write_floor = |out: &mut std::fs::File, when: &str| {
        let floor = cache_line_floor(floor_cores.0, floor_cores.1);
        println!(
            "cache-line floor between cores {} and {} ({when}), one way: {}",
            floor_cores.0,
            floor_cores.1,
            percentiles_line(&floor)
        );
        writeln!(
            out,
            "{{\"type\":\"floor\",\"when\":{},\"cores\":[{},{}],\"one_way_ns\":{}}}",
            json_string(when),
            floor_cores.0,
            floor_cores.1,
            percentiles_json(&floor)
        )
        .expect("write results");
    };
    write_floor(&mut out, "before");
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
            percentiles_line(&late)
        );
        writeln!(
            out,
            "{{\"type\":\"pacing_floor\",\"core\":{core},\"threads\":{waiters},\"wait\":{},\"rate_per_s\":{RATE},\"late_ns\":{}}}",
            json_string(&how.to_string()),
            percentiles_json(&late)
        )
        .expect("write results");
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
                writeln!(
                    out,
                    "{{\"type\":\"run\",\"system\":{},\"round\":{round},\"cpu_busy_before\":{busy_before:.3},\"offered_per_s\":{rate},\"achieved_per_s\":{:.0},\"requests\":{},\"events\":{},\"refused_gateway\":{},\"refused_engine\":{},\"verified\":true,\"input_hash\":{},\"output_hash\":{},\"queueing_ns\":{},\"service_ns\":{},\"total_ns\":{},\"engine_ns\":{},\"inbound_ns\":{}}}",
                    json_string(system),
                    summary.achieved,
                    summary.requests,
                    summary.events,
                    summary.refused_gateway,
                    summary.refused_engine,
                    json_string(&format!("{:#018x}", result.engine.input.hash)),
                    json_string(&format!("{:#018x}", result.engine.output.hash)),
                    percentiles_json(&summary.queueing),
                    percentiles_json(&summary.service),
                    percentiles_json(&summary.total),
                    percentiles_json(&summary.processing),
                    percentiles_json(&summary.inbound)
                )
                .expect("write results");
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
    write_floor(&mut out, "after");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    writeln!(
        out,
        "{{\"type\":\"end\",\"loadavg_after\":{},\"seconds\":{:.1},\"failed\":{failed}}}",
        json_string(load.trim()),
        started.elapsed().as_secs_f64()
    )
    .expect("write results");
    println!("raw data: {}", out_path.display());
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
