//! The systems a run can use: salias across processes, and the in-process baselines.

pub mod lockfree;
pub mod mutex;
pub mod salias;
mod threads;

use self::salias::run_salias;
use crate::params::Params;
use crate::roles::engine::EngineReport;
use crate::roles::gateway::GatewayReport;
use crate::roles::subscriber::SubscriberReport;
use lockfree::run_lockfree;
use mutex::run_mutex;

/// What a run measured, whichever system ran it.
pub struct RunResult {
    pub t0: u64,
    pub gateways: Vec<GatewayReport>,
    pub engine: EngineReport,
    pub subscribers: Vec<SubscriberReport>,
}

pub fn run_system(system: &str, p: &Params, run: usize) -> RunResult {
    match system {
        "mutex" => run_mutex(p),
        "lockfree" => run_lockfree(p),
        _ => run_salias(p, run),
    }
}
