//! What can go wrong with a role, said so that the reader knows what to do.

use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

/// A role could not be started, did not finish, or reported what could not be read.
#[derive(Debug)]
pub enum RoleError {
    /// The running binary's path is unknown.
    CurrentExe(std::io::Error),
    /// The role's parameters do not encode as JSON.
    EncodeParams(serde_json::Error),
    /// A child was started without its parameters.
    MissingParams {
        /// The variable that should carry them.
        var: String,
    },
    /// A child's parameters do not decode.
    BadParams {
        /// The variable that carries them.
        var: String,
        /// Its value.
        json: String,
        /// Why it does not decode.
        source: serde_json::Error,
    },
    /// A child could not be started.
    Spawn {
        /// Its name.
        name: String,
        /// The program run.
        program: String,
        /// Why not.
        source: std::io::Error,
    },
    /// A child ended while the parent still waited for it to arrive.
    EndedEarly {
        /// Its name.
        name: String,
        /// How it ended.
        status: ExitStatus,
    },
    /// A child failed.
    Failed {
        /// Its name.
        name: String,
        /// How it ended.
        status: ExitStatus,
        /// What it printed.
        stdout: String,
    },
    /// Children were still running when the watchdog's limit passed.
    Watchdog {
        /// The limit.
        limit: Duration,
        /// Those still running.
        running: Vec<String>,
    },
    /// Not every process reached a start barrier in time.
    BarrierTimeout {
        /// How many did.
        arrived: u64,
        /// How many were expected.
        parties: u64,
        /// The time they had.
        limit: Duration,
    },
    /// A child's stdout could not be read or waited on.
    Output(std::io::Error),
    /// The child's stdout is not piped, so it cannot be read.
    NotPiped,
    /// The child's stdout ended before its next report.
    EndedBeforeReport,
    /// A thread reading a child's stdout panicked.
    ReaderPanicked,
    /// A report is not the JSON expected.
    BadReport {
        /// The child's name.
        name: String,
        /// The report.
        line: String,
        /// Why it does not decode.
        source: serde_json::Error,
    },
}

impl fmt::Display for RoleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoleError::CurrentExe(e) => write!(f, "cannot find this binary's path to start a role: {e}"),
            RoleError::EncodeParams(e) => write!(f, "a role's parameters do not encode as JSON: {e}"),
            RoleError::MissingParams { var } => write!(
                f,
                "{var} is not set: a role is started by its parent (Role::command_with), not by hand"
            ),
            RoleError::BadParams { var, json, source } => {
                write!(
                    f,
                    "{var}={json} does not decode ({source}): parent and child are different builds?"
                )
            }
            RoleError::Spawn { name, program, source } => write!(f, "cannot start child {name} ({program}): {source}"),
            RoleError::EndedEarly { name, status } => {
                write!(f, "child {name} ended with {status} before the others were ready")
            }
            RoleError::Failed { name, status, stdout } => {
                write!(f, "child {name} failed with {status}; its output:\n{stdout}")
            }
            RoleError::Watchdog { limit, running } => write!(
                f,
                "watchdog: children did not finish within {limit:?} (still running: {})",
                running.join(", ")
            ),
            RoleError::BarrierTimeout {
                arrived,
                parties,
                limit,
            } => write!(
                f,
                "watchdog: only {arrived} of {parties} processes reached the start barrier within {limit:?}"
            ),
            RoleError::Output(e) => write!(f, "cannot read or wait for a child: {e}"),
            RoleError::NotPiped => write!(f, "the child's stdout is not piped (start it with Role::command)"),
            RoleError::EndedBeforeReport => write!(f, "child exited before reporting"),
            RoleError::ReaderPanicked => write!(f, "the thread reading a child's output panicked"),
            RoleError::BadReport { name, line, source } => {
                write!(f, "child {name} reported {line:?}, which does not decode: {source}")
            }
        }
    }
}

impl std::error::Error for RoleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RoleError::CurrentExe(e) | RoleError::Output(e) | RoleError::Spawn { source: e, .. } => Some(e),
            RoleError::EncodeParams(e)
            | RoleError::BadParams { source: e, .. }
            | RoleError::BadReport { source: e, .. } => Some(e),
            _ => None,
        }
    }
}
