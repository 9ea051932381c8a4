//! The parent's side of the children's reports: each role prints one JSON report
//! (`support::role::report_json`), and the run's result is gathered from them.

use serde::de::DeserializeOwned;
use support::role::ChildOutput;

use crate::params::Params;
use crate::systems::RunResult;

/// The one report of `output`'s child.
fn only_report<T: DeserializeOwned>(output: &ChildOutput) -> T {
    let mut reports = output.json_reports::<T>().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        reports.len(),
        1,
        "{} made {} reports, not one",
        output.name,
        reports.len()
    );
    reports.remove(0)
}

/// Every child's report, in the order the children were started: the engine, the
/// subscribers, the gateways.
pub fn collect_reports(p: &Params, t0: u64, outputs: Vec<ChildOutput>) -> RunResult {
    let roles = 1 + p.subscribers as usize + p.gateways as usize;
    assert_eq!(outputs.len(), roles, "a pipeline process did not report");
    let (engine, rest) = outputs.split_first().expect("the engine was started");
    let (subscribers, gateways) = rest.split_at(p.subscribers as usize);
    RunResult {
        t0,
        gateways: gateways.iter().map(only_report).collect(),
        engine: only_report(engine),
        subscribers: subscribers.iter().map(only_report).collect(),
    }
}
