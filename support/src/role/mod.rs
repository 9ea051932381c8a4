//! Roles as separate processes (doc/benchmarking.md rule 2): the running binary starts
//! itself again with a role named in an environment variable, and its parameters as JSON in
//! a second one; the parent waits for all of them under a watchdog and reads what each
//! reported on its stdout, one `REPORT ` line per report.
//!
//! The environment, not the command line, carries the role, so a re-executed test or
//! bench binary sees the arguments its harness expects (libtest's, cargo bench's
//! `--bench`) and a role's parameters need no parser of their own.

use std::fmt;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

mod children;
mod error;

pub use children::{ChildOutput, Children, KillOnDrop};
pub use error::RoleError;

/// What starts every line a child reports to its parent.
pub const REPORT_PREFIX: &str = "REPORT ";

/// How often the watchdogs look at their children.
const POLL: Duration = Duration::from_millis(5);

/// The environment variable that names a re-executed binary's role (its parameters go in
/// the same name with `_PARAMS` appended).
#[derive(Clone, Copy, Debug)]
pub struct Role {
    var: &'static str,
}

impl Role {
    /// Roles named in the environment variable `var`.
    pub const fn new(var: &'static str) -> Role {
        Role { var }
    }

    /// The variable that names the role.
    pub fn var(&self) -> &'static str {
        self.var
    }

    /// The variable that carries the role's parameters, as JSON.
    pub fn params_var(&self) -> String {
        format!("{}_PARAMS", self.var)
    }

    /// The role this process was started as, if it is a child.
    pub fn current(&self) -> Option<String> {
        std::env::var(self.var).ok()
    }

    /// A command that runs this binary again as `role`, with its stdout piped (for its
    /// reports) and its stderr shared with this process. The caller adds arguments.
    pub fn command(&self, role: &str) -> Result<Command, RoleError> {
        let exe = std::env::current_exe().map_err(RoleError::CurrentExe)?;
        let mut command = Command::new(exe);
        self.make(&mut command, role);
        Ok(command)
    }

    /// Makes `command`, which runs this binary (perhaps under another program), run it as
    /// `role`, with stdout piped and stderr shared, and this process's latency clock, if it
    /// has one ([`crate::clock::latency`]).
    pub fn make<'c>(&self, command: &'c mut Command, role: &str) -> &'c mut Command {
        // The child stamps on the parent's calibration, so their stamps compare.
        if let Some(clock) = crate::clock::latency_for_children() {
            command.env(crate::clock::CLOCK_VAR, clock);
        }
        command
            .env(self.var, role)
            .env_remove(self.params_var())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
    }

    /// Like [`Role::command`], with `params` handed to the child as JSON; the child reads
    /// them with [`Role::params`].
    pub fn command_with<P: Serialize>(&self, role: &str, params: &P) -> Result<Command, RoleError> {
        let json = serde_json::to_string(params).map_err(RoleError::EncodeParams)?;
        let mut command = self.command(role)?;
        command.env(self.params_var(), json);
        Ok(command)
    }

    /// The parameters this child was started with by [`Role::command_with`].
    pub fn params<P: DeserializeOwned>(&self) -> Result<P, RoleError> {
        let var = self.params_var();
        let json = std::env::var(&var).map_err(|_| RoleError::MissingParams { var: var.clone() })?;
        serde_json::from_str(&json).map_err(|source| RoleError::BadParams { var, json, source })
    }
}

/// Prints `line` as a report for the parent.
pub fn report(line: impl fmt::Display) {
    println!("{REPORT_PREFIX}{line}");
}

/// Prints `value` as a JSON report for the parent, which reads it with
/// [`ChildOutput::json_reports`].
pub fn report_json<T: Serialize>(value: &T) {
    // A serde derive over plain numbers and strings cannot fail to encode.
    report(serde_json::to_string(value).expect("a report encodes as JSON"));
}

/// The reports in a child's `output`, prefix removed.
pub fn reports(output: &str) -> impl Iterator<Item = &str> {
    output.lines().filter_map(|line| line.strip_prefix(REPORT_PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn reports_are_the_prefixed_lines() {
        let output = "noise\nREPORT a 1\nREPORT {\"x\":2}\nREPORTED not\n";
        assert_eq!(reports(output).collect::<Vec<_>>(), ["a 1", "{\"x\":2}"]);
    }

    #[test]
    fn params_travel_as_json() {
        let role = Role::new("SALIAS_SUPPORT_TEST_ROLE");
        let command = role.command_with("x", &[1u32, 2]).unwrap();
        let envs: Vec<_> = command.get_envs().collect();
        assert!(envs.contains(&(OsStr::new("SALIAS_SUPPORT_TEST_ROLE"), Some(OsStr::new("x")))));
        assert!(envs.contains(&(OsStr::new("SALIAS_SUPPORT_TEST_ROLE_PARAMS"), Some(OsStr::new("[1,2]")))));
        assert!(matches!(
            role.params::<Vec<u32>>(),
            Err(RoleError::MissingParams { .. })
        ));
    }
}
