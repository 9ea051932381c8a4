//! Why a comparison stopped: the run that failed and what went wrong in it.

use std::fmt;

use support::jsonl::JsonLinesError;
use support::role::RoleError;
use support::shm::ShmError;

use crate::plan::PlanError;
use crate::platform::interrupted;

#[derive(Debug)]
pub enum RunError {
    /// A role process could not start, failed, hung, or reported nonsense.
    Role { run: String, source: RoleError },
    /// The barrier or a floor's ring could not be created.
    Shm { run: String, source: ShmError },
    /// A salias channel of the parent could not be created.
    Salias { run: String, source: salias::Error },
    /// The children ended without a report the run needs.
    Missing { run: String, what: &'static str },
    /// The raw data could not be written.
    Output(JsonLinesError),
    /// The plan cannot run as the command line asks.
    Plan(PlanError),
}

impl RunError {
    /// For `map_err`: a role error in run `run`.
    pub fn role(run: &str) -> impl FnOnce(RoleError) -> RunError + '_ {
        move |source| RunError::Role {
            run: run.to_owned(),
            source,
        }
    }

    /// For `map_err`: a shared-memory error in run `run`.
    pub fn shm(run: &str) -> impl FnOnce(ShmError) -> RunError + '_ {
        move |source| RunError::Shm {
            run: run.to_owned(),
            source,
        }
    }

    /// For `map_err`: a salias error in run `run`.
    pub fn salias(run: &str) -> impl FnOnce(salias::Error) -> RunError + '_ {
        move |source| RunError::Salias {
            run: run.to_owned(),
            source,
        }
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Role { run, source } => write!(f, "run {run}: {source}")?,
            RunError::Shm { run, source } => write!(f, "run {run}: {source}")?,
            RunError::Salias { run, source } => write!(f, "run {run}: creating its channel: {source}")?,
            RunError::Missing { run, what } => write!(f, "run {run}: the processes ended without {what}")?,
            RunError::Output(source) => write!(f, "{source}")?,
            RunError::Plan(source) => write!(f, "{source}")?,
        }
        // Ctrl-C kills the children; the failure that follows is that, not a bug.
        f.write_str(interrupted())
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Role { source, .. } => Some(source),
            RunError::Shm { source, .. } => Some(source),
            RunError::Salias { source, .. } => Some(source),
            RunError::Missing { .. } => None,
            RunError::Output(source) => Some(source),
            RunError::Plan(source) => Some(source),
        }
    }
}
