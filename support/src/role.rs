//! Roles as separate processes (BENCHMARKING.md rule 2): the running binary starts itself
//! again with a role named in an environment variable, and its parameters as JSON in a
//! second one; the parent waits for all of them under a watchdog and reads what each
//! reported on its stdout, one `REPORT ` line per report.
//!
//! The environment, not the command line, carries the role, so a re-executed test or
//! bench binary sees the arguments its harness expects (libtest's, cargo bench's
//! `--bench`) and a role's parameters need no parser of their own.

use std::fmt;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

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
    /// `role`, with stdout piped and stderr shared.
    pub fn make<'c>(&self, command: &'c mut Command, role: &str) -> &'c mut Command {
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

/// A child process that is killed (and reaped) when dropped, so a failing parent never
/// leaves one behind.
#[derive(Debug)]
pub struct KillOnDrop(pub Child);

impl KillOnDrop {
    /// Reads the child's stdout up to its next report and returns that report. Reads byte
    /// by byte so that nothing after the report is taken from the pipe.
    pub fn next_report(&mut self) -> Result<String, RoleError> {
        let stdout = self.0.stdout.as_mut().ok_or(RoleError::NotPiped)?;
        let mut line = Vec::new();
        loop {
            let mut byte = [0u8];
            match stdout.read(&mut byte) {
                Ok(0) => return Err(RoleError::EndedBeforeReport),
                Ok(_) if byte[0] == b'\n' => {
                    let text = String::from_utf8_lossy(&line);
                    if let Some(rest) = text.trim_end().strip_prefix(REPORT_PREFIX) {
                        return Ok(rest.to_owned());
                    }
                    line.clear();
                }
                Ok(_) => line.push(byte[0]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(RoleError::Output(e)),
            }
        }
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The children of one run, by name; those still running are killed when it is dropped.
#[derive(Debug, Default)]
pub struct Children(Vec<(String, KillOnDrop)>);

impl Children {
    /// No children yet.
    pub fn new() -> Children {
        Children::default()
    }

    /// Starts `command` as the child `name`.
    pub fn spawn(&mut self, name: impl Into<String>, command: &mut Command) -> Result<(), RoleError> {
        let name = name.into();
        let child = command.spawn().map_err(|source| RoleError::Spawn {
            name: name.clone(),
            program: command.get_program().to_string_lossy().into_owned(),
            source,
        })?;
        self.0.push((name, KillOnDrop(child)));
        Ok(())
    }

    /// Adds a child started elsewhere.
    pub fn push(&mut self, name: impl Into<String>, child: KillOnDrop) {
        self.0.push((name.into(), child));
    }

    /// How many children there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// An error if any child has already ended: for a parent waiting on its children at a
    /// barrier, which a child that ended will never reach.
    pub fn check_running(&mut self) -> Result<(), RoleError> {
        for (name, child) in &mut self.0 {
            if let Some(status) = child.0.try_wait().map_err(RoleError::Output)? {
                return Err(RoleError::EndedEarly {
                    name: name.clone(),
                    status,
                });
            }
        }
        Ok(())
    }

    /// Waits for every child to end, collecting its stdout as it goes (a child never
    /// blocks on a full pipe). The watchdog: a child that fails, or children not done
    /// within `limit`, end the wait with an error, and the others are killed (a hang is a
    /// failure, never a slow pass). Outputs come in the order the children were added.
    pub fn wait_all(mut self, limit: Duration) -> Result<Vec<ChildOutput>, RoleError> {
        let deadline = Instant::now() + limit;
        let readers: Vec<_> = self
            .0
            .iter_mut()
            .map(|(_, child)| {
                child.0.stdout.take().map(|mut stdout| {
                    std::thread::spawn(move || {
                        let mut text = Vec::new();
                        let read = stdout.read_to_end(&mut text);
                        (String::from_utf8_lossy(&text).into_owned(), read)
                    })
                })
            })
            .collect();
        let mut statuses: Vec<Option<ExitStatus>> = vec![None; self.0.len()];
        loop {
            let mut running = Vec::new();
            for (i, (name, child)) in self.0.iter_mut().enumerate() {
                if statuses[i].is_some() {
                    continue;
                }
                match child.0.try_wait().map_err(RoleError::Output)? {
                    Some(status) => statuses[i] = Some(status),
                    None => running.push(name.clone()),
                }
            }
            if let Some(i) = statuses.iter().position(|s| s.is_some_and(|s| !s.success())) {
                let name = self.0[i].0.clone();
                let status = statuses[i].expect("found above");
                // The others, which may wait for this one forever, go first.
                let failed = self.0.swap_remove(i);
                drop(self);
                drop(failed);
                let stdout = readers
                    .into_iter()
                    .nth(i)
                    .flatten()
                    .map_or(String::new(), |r| r.join().map(|(text, _)| text).unwrap_or_default());
                return Err(RoleError::Failed { name, status, stdout });
            }
            if running.is_empty() {
                break;
            }
            if Instant::now() > deadline {
                return Err(RoleError::Watchdog { limit, running });
            }
            std::thread::sleep(POLL);
        }
        let mut outputs = Vec::new();
        for ((name, _), (reader, status)) in self.0.iter().zip(readers.into_iter().zip(statuses)) {
            let stdout = match reader {
                Some(reader) => {
                    let (text, read) = reader.join().map_err(|_| RoleError::ReaderPanicked)?;
                    read.map_err(RoleError::Output)?;
                    text
                }
                None => String::new(),
            };
            outputs.push(ChildOutput {
                name: name.clone(),
                status: status.expect("every child ended"),
                stdout,
            });
        }
        Ok(outputs)
    }
}

/// What a child left when it ended.
#[derive(Clone, Debug)]
pub struct ChildOutput {
    /// The name it was added under.
    pub name: String,
    /// How it ended (successfully: a failure ends [`Children::wait_all`] with an error).
    pub status: ExitStatus,
    /// Everything it printed on stdout.
    pub stdout: String,
}

impl ChildOutput {
    /// Its reports, prefix removed.
    pub fn reports(&self) -> impl Iterator<Item = &str> {
        reports(&self.stdout)
    }

    /// Its reports, each decoded from JSON.
    pub fn json_reports<T: DeserializeOwned>(&self) -> Result<Vec<T>, RoleError> {
        self.reports()
            .map(|line| {
                serde_json::from_str(line).map_err(|source| RoleError::BadReport {
                    name: self.name.clone(),
                    line: line.to_owned(),
                    source,
                })
            })
            .collect()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn shell(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]).stdout(Stdio::piped());
        command
    }

    #[test]
    fn reports_are_the_prefixed_lines() {
        let output = "noise\nREPORT a 1\nREPORT {\"x\":2}\nREPORTED not\n";
        assert_eq!(reports(output).collect::<Vec<_>>(), ["a 1", "{\"x\":2}"]);
    }

    #[test]
    fn wait_all_collects_every_childs_reports_in_order() {
        let mut children = Children::new();
        children.spawn("a", &mut shell("echo 'REPORT {\"n\":1}'")).unwrap();
        children
            .spawn("b", &mut shell("echo hello; echo 'REPORT {\"n\":2}'"))
            .unwrap();
        let outputs = children.wait_all(Duration::from_secs(60)).unwrap();
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct N {
            n: u32,
        }
        let got: Vec<Vec<N>> = outputs.iter().map(|o| o.json_reports().unwrap()).collect();
        assert_eq!(got, [vec![N { n: 1 }], vec![N { n: 2 }]]);
        assert_eq!(outputs[1].name, "b");
    }

    #[test]
    fn a_failing_child_fails_the_wait_with_its_output() {
        let mut children = Children::new();
        children.spawn("sleeper", &mut shell("sleep 600")).unwrap();
        children.spawn("bad", &mut shell("echo oops; exit 3")).unwrap();
        let error = children.wait_all(Duration::from_secs(60)).unwrap_err().to_string();
        assert!(error.starts_with("child bad failed with"), "{error}");
        assert!(error.contains("oops"), "{error}");
    }

    #[test]
    fn the_watchdog_names_the_children_still_running() {
        let mut children = Children::new();
        children.spawn("hang", &mut shell("sleep 600")).unwrap();
        let error = children.wait_all(Duration::from_millis(50)).unwrap_err().to_string();
        assert!(error.starts_with("watchdog: children did not finish within"), "{error}");
        assert!(error.contains("hang"), "{error}");
    }

    #[test]
    fn next_report_skips_other_lines_and_leaves_the_rest() {
        let mut child = KillOnDrop(shell("echo x; echo 'REPORT one'; echo 'REPORT two'").spawn().unwrap());
        assert_eq!(child.next_report().unwrap(), "one");
        assert_eq!(child.next_report().unwrap(), "two");
        assert!(matches!(child.next_report(), Err(RoleError::EndedBeforeReport)));
    }

    #[test]
    fn an_ended_child_is_noticed_before_a_barrier() {
        let mut children = Children::new();
        children.spawn("quick", &mut shell("exit 0")).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while children.check_running().is_ok() {
            assert!(Instant::now() < deadline, "the child never ended");
            std::thread::sleep(POLL);
        }
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
