//! Running the `salias` binary from the tool's tests, and reading what it printed.
#![allow(dead_code)] // each test binary uses its own subset

use std::process::{Child, Command, ExitStatus, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Runs the tool on `args` and waits for it.
pub fn salias(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_salias"))
        .args(args)
        .output()
        .expect("run the salias tool")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The lines of JSON the tool printed, each parsed.
pub fn json_lines(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The child's exit status, under a watchdog: a tool that does not end is a failure.
pub fn exit_of(child: &mut Child) -> ExitStatus {
    let limit = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().expect("wait for the tool") {
            return status;
        }
        assert!(Instant::now() < limit, "the tool did not end");
        std::thread::sleep(Duration::from_millis(10));
    }
}
