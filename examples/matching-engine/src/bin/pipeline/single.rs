//! A single run of each chosen system: print what it measured and what it verified.

use std::process::ExitCode;

use support::hist::Quantiles;
use support::machine::Machine;

use crate::params::Params;
use crate::systems::run_system;
use crate::verify::{Summary, verify};

pub fn run(p: &Params, systems: &[&str]) -> ExitCode {
    let machine = Machine::detect();
    println!(
        "matching-engine pipeline on {machine}: {} gateway(s), 1 engine, {} subscriber(s); {:.0} ms at {:.0} requests/s offered, first {} ms not measured",
        p.gateways, p.subscribers, p.duration_ms as f64, p.rate, p.warmup_ms
    );
    let mut failed = false;
    for (run, system) in systems.iter().enumerate() {
        let result = run_system(system, p, run);
        match verify(p, &result) {
            Ok(summary) => {
                print_summary(system, p, &summary);
                println!(
                    "  verified: {} requests in, input hash {:#018x}; {} events out, every subscriber's hash {:#018x} matches the engine's",
                    result.engine.input.count,
                    result.engine.input.hash,
                    result.engine.output.count,
                    result.engine.output.hash
                );
                if *system == "salias" {
                    println!(
                        "RESULT input_count {} input_hash {} output_count {} output_hash {}",
                        result.engine.input.count,
                        result.engine.input.hash,
                        result.engine.output.count,
                        result.engine.output.hash
                    );
                }
            }
            Err(problem) => {
                eprintln!("{system}: VERIFICATION FAILED: {problem}");
                failed = true;
            }
        }
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

pub fn print_summary(system: &str, p: &Params, s: &Summary) {
    println!(
        "{system}: offered {:.0} req/s, achieved {:.0} req/s; {} requests, {} events; refused offers: gateways {}, engine {}",
        s.offered, s.achieved, s.requests, s.events, s.refused_gateway, s.refused_engine
    );
    println!(
        "  queueing   (send - planned)     {}",
        Quantiles::of(&s.queueing).micros()
    );
    println!(
        "  service    (arrival - send)     {}",
        Quantiles::of(&s.service).micros()
    );
    println!("  total      (arrival - planned)  {}", Quantiles::of(&s.total).micros());
    println!(
        "  to engine  (received - send)    {}",
        Quantiles::of(&s.inbound).micros()
    );
    println!(
        "  engine     (per request)        {}",
        Quantiles::of(&s.processing).micros()
    );
    println!("  placement: {}", p.placement());
}
