//! Real-time scheduling for a spinning role: under SCHED_FIFO or SCHED_RR no ordinary task
//! can take its core from it, so tail latencies say less about the scheduler's other
//! work. Set through util-linux's `chrt` on the calling thread (this crate calls no libc
//! scheduler functions itself); the kernel throttles real-time tasks after
//! `kernel.sched_rt_runtime_us` of every `sched_rt_period_us`, which [`throttle_limit_ms`]
//! reads so a harness can keep its runs shorter.

use std::fmt;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// A real-time policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Policy {
    /// SCHED_FIFO: runs until it blocks or a higher priority comes.
    #[serde(rename = "SCHED_FIFO")]
    Fifo,
    /// SCHED_RR: as FIFO, with a time slice among equal priorities.
    #[serde(rename = "SCHED_RR")]
    RoundRobin,
}

/// A policy and its priority, as the records write it:
/// `{"policy":"SCHED_FIFO","priority":50}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Realtime {
    /// The policy.
    pub policy: Policy,
    /// Its priority, 1 to 99.
    pub priority: u32,
}

impl Realtime {
    /// Puts the calling thread under it ([`schedule`]).
    pub fn apply(self) -> Result<(), RealtimeError> {
        schedule(self.policy, self.priority)
    }
}

impl Policy {
    /// `SCHED_FIFO` or `SCHED_RR`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Fifo => "SCHED_FIFO",
            Policy::RoundRobin => "SCHED_RR",
        }
    }

    fn chrt_flag(self) -> &'static str {
        match self {
            Policy::Fifo => "-f",
            Policy::RoundRobin => "-r",
        }
    }
}

/// The calling thread could not be put under a real-time policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealtimeError {
    /// The policy asked for.
    pub policy: Policy,
    /// The priority asked for.
    pub priority: u32,
    /// What `chrt` said, or why it did not run.
    pub why: String,
}

impl fmt::Display for RealtimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot run under {} at priority {}: {}; real-time scheduling needs root or CAP_SYS_NICE \
             (and util-linux's chrt), and a priority of 1 to 99",
            self.policy.name(),
            self.priority,
            self.why
        )
    }
}

impl std::error::Error for RealtimeError {}

/// The calling thread's id as chrt takes it, where chrt exists.
fn thread_id() -> Option<String> {
    #[cfg(target_os = "linux")]
    return Some(rustix::thread::gettid().as_raw_nonzero().to_string());
    #[cfg(not(target_os = "linux"))]
    None
}

/// Puts the calling thread under `policy` at `priority`.
pub fn schedule(policy: Policy, priority: u32) -> Result<(), RealtimeError> {
    let error = |why: String| RealtimeError { policy, priority, why };
    let tid = thread_id().ok_or_else(|| error("chrt, which sets it per thread, is Linux-only".into()))?;
    let output = Command::new("chrt")
        .args([policy.chrt_flag(), "-p", &priority.to_string(), &tid])
        .output()
        .map_err(|e| error(format!("chrt did not start ({e})")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(error(format!(
            "chrt {} -p {priority} failed ({})",
            policy.chrt_flag(),
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}

/// Whether this process may use `policy` at `priority`: tried on a new thread, which then
/// ends, so the caller's own scheduling stays as it was.
pub fn check(policy: Policy, priority: u32) -> Result<(), RealtimeError> {
    std::thread::spawn(move || schedule(policy, priority))
        .join()
        .expect("the check's thread does not panic")
}

/// How long real-time tasks may run in a row before the kernel throttles them, with
/// 100 ms of margin, in ms; `None` when it does not throttle them.
pub fn throttle_limit_ms() -> Option<u64> {
    let read = |name: &str| -> Option<i64> {
        std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let runtime_us = read("sched_rt_runtime_us")?;
    let period_us = read("sched_rt_period_us")?;
    if runtime_us < 0 || runtime_us >= period_us {
        return None;
    }
    Some((runtime_us as u64 / 1_000).saturating_sub(100))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_priority_out_of_range_is_refused_with_the_reason() {
        let error = check(Policy::Fifo, 1000).unwrap_err();
        assert_eq!((error.policy, error.priority), (Policy::Fifo, 1000));
        let text = error.to_string();
        assert!(text.contains("SCHED_FIFO at priority 1000"), "{text}");
        assert!(text.contains("CAP_SYS_NICE"), "{text}");
    }

    #[test]
    fn the_names_are_the_kernels() {
        assert_eq!(
            [Policy::Fifo.name(), Policy::RoundRobin.name()],
            ["SCHED_FIFO", "SCHED_RR"]
        );
    }
}
