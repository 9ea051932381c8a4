//! A single run of each chosen system: print what it measured and what it verified.

use std::process::ExitCode;

use crate::machine::machine;
use crate::output::print_summary;
use crate::params::Params;
use crate::systems::run_system;
use crate::verify::verify;

pub fn run(p: &Params, systems: &[&str]) -> ExitCode {
    let (cpu, cores, kernel) = machine();
    println!(
        "matching-engine pipeline on {cpu}, {cores} cores, Linux {kernel}: {} gateway(s), 1 engine, {} subscriber(s); {:.0} ms at {:.0} requests/s offered, first {} ms not measured",
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
