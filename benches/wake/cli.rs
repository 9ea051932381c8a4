//! The command line, and how much each scale measures.

use clap::Parser;

/// Cross-process wake-up latency of salias's waits and of two readiness-fd designs, and
/// the waiting side's CPU per idle second, by doc/benchmarking.md: publisher and receiver
/// separate pinned processes, rows alternating round by round, raw data as JSON lines in
/// target/bench-results/wake-<unix time>.jsonl.
#[derive(Parser, Debug)]
#[command(name = "wake")]
pub struct Cli {
    /// A tiny run that completes in seconds, to check the harness and its records; its
    /// figures mean little.
    #[arg(long)]
    pub smoke: bool,

    /// Passed by `cargo bench`; changes nothing.
    #[arg(long, hide = true)]
    pub bench: bool,
}

/// How much a run measures.
#[derive(Clone, Debug)]
pub struct Scale {
    pub name: &'static str,
    /// Rounds of every row.
    pub rounds: usize,
    /// Messages per run (each one wake-up).
    pub messages: u64,
    /// The receiver's idle interval whose CPU time is measured, in ms.
    pub idle_ms: u64,
}

impl Cli {
    pub fn scale(&self) -> Scale {
        if self.smoke {
            Scale {
                name: "smoke",
                rounds: 2,
                messages: 40,
                idle_ms: 100,
            }
        } else {
            Scale {
                name: "full",
                rounds: 5,
                messages: 500,
                idle_ms: 1_000,
            }
        }
    }
}
