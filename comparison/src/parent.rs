//! A run's parent's side of its processes: starts each role and collects their reports.

use std::time::Duration;

use support::barrier::Barrier;
use support::records::System;
use support::role::Children;

use crate::error::RunError;
use crate::roles::{Params, ROLE, Report, system_name};

/// How long the parent waits for every process of a run to reach the start barrier
/// (connecting an Aeron client takes a while; a process that never arrives is a failure).
const START_LIMIT: Duration = Duration::from_secs(60);

/// Starts `role` of `system` with `params` as one of `children`.
pub fn spawn(children: &mut Children, system: System, role: &str, params: &Params) -> Result<(), RunError> {
    let role = format!("{} {role}", system_name(system));
    let mut command = ROLE.command_with(&role, params).map_err(RunError::role(&params.name))?;
    children
        .spawn(format!("{role} {}", params.index), &mut command)
        .map_err(RunError::role(&params.name))
}

/// Releases the `children` from the start barrier once all have arrived, waits for them
/// to finish within `limit`, and returns their reports.
pub fn collect(
    name: &str,
    barrier: &Barrier,
    mut children: Children,
    limit: Duration,
) -> Result<Vec<Report>, RunError> {
    let parties = children.len() as u64;
    barrier
        .release(parties, &mut children, START_LIMIT)
        .map_err(RunError::role(name))?;
    let mut reports = Vec::new();
    for output in children.wait_all(limit).map_err(RunError::role(name))? {
        reports.extend(output.json_reports::<Report>().map_err(RunError::role(name))?);
    }
    Ok(reports)
}
