//! The header's facts (machine, versions) and the summary statistics.

use std::process::Command;

use crate::platform::cores;

pub fn stats(samples: &[f64]) -> (f64, f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    (sorted[sorted.len() / 2], sorted[0], sorted[sorted.len() - 1])
}

pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown cpu".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cpu}, {} cores, Linux {}", cores(), kernel.trim())
}

/// Versions of the peers, read from this crate's Cargo.lock at build time.
pub fn lock_version(package: &str) -> String {
    let lock = include_str!("../../Cargo.lock");
    let needle = format!("name = \"{package}\"\nversion = \"");
    lock.find(&needle)
        .map(|at| {
            let rest = &lock[at + needle.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .unwrap_or_else(|| "unknown".into())
}

pub fn salias_revision() -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let run = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let head = run(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = run(&["status", "--porcelain", "--", "src", "Cargo.toml"]).is_some_and(|s| !s.is_empty());
    format!("{head}{}", if dirty { "+dirty" } else { "" })
}

pub fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
