//! The children of a run: killed when dropped, waited for under a watchdog, their
//! output collected and their reports read.

use std::io::Read;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use super::{POLL, REPORT_PREFIX, RoleError, reports};

/// A child process that is killed (and reaped) when dropped, so a failing parent never
/// leaves one behind.
#[derive(Debug)]
pub struct KillOnDrop(pub Child);

impl KillOnDrop {
    /// Reads the child's stdout up to its next report and returns that report, for a test
    /// that steps through a child's reports.
    ///
    /// # Panics
    /// Where [`KillOnDrop::try_next_report`] fails, with its error's message (e.g. "child
    /// exited before reporting").
    pub fn next_report(&mut self) -> String {
        self.try_next_report().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Reads the child's stdout up to its next report and returns that report. Reads byte
    /// by byte so that nothing after the report is taken from the pipe.
    pub fn try_next_report(&mut self) -> Result<String, RoleError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    /// `sh -c script`. A long-running script must `exec` its last command: killing the
    /// child kills the shell only, and a command it forked would live on holding the
    /// test's inherited descriptors.
    fn shell(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]).stdout(Stdio::piped());
        command
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
        children.spawn("sleeper", &mut shell("exec sleep 600")).unwrap();
        children.spawn("bad", &mut shell("echo oops; exit 3")).unwrap();
        let error = children.wait_all(Duration::from_secs(60)).unwrap_err().to_string();
        assert!(error.starts_with("child bad failed with"), "{error}");
        assert!(error.contains("oops"), "{error}");
    }

    #[test]
    fn the_watchdog_names_the_children_still_running() {
        let mut children = Children::new();
        children.spawn("hang", &mut shell("exec sleep 600")).unwrap();
        let error = children.wait_all(Duration::from_millis(50)).unwrap_err().to_string();
        assert!(error.starts_with("watchdog: children did not finish within"), "{error}");
        assert!(error.contains("hang"), "{error}");
    }

    #[test]
    fn next_report_skips_other_lines_and_leaves_the_rest() {
        let mut child = KillOnDrop(shell("echo x; echo 'REPORT one'; echo 'REPORT two'").spawn().unwrap());
        assert_eq!(child.next_report(), "one");
        assert_eq!(child.try_next_report().unwrap(), "two");
        assert!(matches!(child.try_next_report(), Err(RoleError::EndedBeforeReport)));
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
}
