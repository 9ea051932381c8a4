//! Running the `salias` binary from the tool's tests, and reading what it printed.
#![allow(dead_code)] // each test binary uses its own subset

use std::process::{Command, Output};

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
