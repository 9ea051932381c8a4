//! The CPU time a process has used, read from /proc, for the idle cost of a waiting
//! process: CPU seconds per idle second, measured from outside over an idle interval.
//!
//! Two readings: `utime + stime` (`/proc/<pid>/stat`, every thread, in clock ticks of
//! usually 10 ms), and the scheduler's run time of each thread (`/proc/<pid>/task/*/schedstat`,
//! in ns), which sees the microseconds a sleeper spends when it wakes and goes back.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A process's CPU time so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTime {
    /// `utime + stime` of every thread, in ns (a multiple of [`tick_ns`]).
    pub user_system_ns: u64,
    /// The scheduler's run time of the threads alive now, in ns.
    pub runtime_ns: u64,
}

/// The length of one clock tick, the unit of `utime` and `stime`, in ns.
pub fn tick_ns() -> u64 {
    1_000_000_000 / rustix::param::clock_ticks_per_second()
}

impl CpuTime {
    /// Process `pid`'s CPU time now.
    pub fn of(pid: u32) -> Result<CpuTime, CpuTimeError> {
        let stat_path = PathBuf::from(format!("/proc/{pid}/stat"));
        let stat = read(&stat_path)?;
        // The fields after the command name (in parentheses, which may hold spaces):
        // state is field 3, utime field 14, stime field 15.
        let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        let fields: Vec<&str> = after.split_whitespace().collect();
        let ticks = |i: usize| fields.get(i - 3).and_then(|f| f.parse::<u64>().ok());
        let (Some(utime), Some(stime)) = (ticks(14), ticks(15)) else {
            return Err(CpuTimeError::Unreadable { path: stat_path });
        };
        let mut runtime_ns = 0;
        let tasks = PathBuf::from(format!("/proc/{pid}/task"));
        let entries = std::fs::read_dir(&tasks).map_err(|source| CpuTimeError::Io {
            path: tasks.clone(),
            source,
        })?;
        for entry in entries.flatten() {
            let path = entry.path().join("schedstat");
            // A thread that ended since the listing has no run time left to count.
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let first = text.split_whitespace().next().and_then(|f| f.parse::<u64>().ok());
            runtime_ns += first.ok_or(CpuTimeError::Unreadable { path })?;
        }
        Ok(CpuTime {
            user_system_ns: (utime + stime) * tick_ns(),
            runtime_ns,
        })
    }
}

/// A process's CPU time over an idle interval, per idle second.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdleCpu {
    /// The interval, in seconds.
    pub idle_s: f64,
    /// `utime + stime` per idle second (resolution: `tick_s` over `idle_s`).
    pub cpu_s_per_s: f64,
    /// The scheduler's run time per idle second.
    pub runtime_s_per_s: f64,
    /// One clock tick, in seconds.
    pub tick_s: f64,
}

impl IdleCpu {
    /// Sleeps for `idle` and returns what process `pid` used meanwhile.
    pub fn measure(pid: u32, idle: std::time::Duration) -> Result<IdleCpu, CpuTimeError> {
        let before = CpuTime::of(pid)?;
        std::thread::sleep(idle);
        let after = CpuTime::of(pid)?;
        let idle_s = idle.as_secs_f64();
        let per_s = |ns: u64| ns as f64 / 1e9 / idle_s;
        Ok(IdleCpu {
            idle_s,
            cpu_s_per_s: per_s(after.user_system_ns.saturating_sub(before.user_system_ns)),
            runtime_s_per_s: per_s(after.runtime_ns.saturating_sub(before.runtime_ns)),
            tick_s: tick_ns() as f64 / 1e9,
        })
    }
}

fn read(path: &PathBuf) -> Result<String, CpuTimeError> {
    std::fs::read_to_string(path).map_err(|source| CpuTimeError::Io {
        path: path.clone(),
        source,
    })
}

/// /proc did not give a process's CPU time.
#[derive(Debug)]
pub enum CpuTimeError {
    /// A file could not be read.
    Io {
        /// Which.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file did not have the fields expected.
    Unreadable {
        /// Which.
        path: PathBuf,
    },
}

impl fmt::Display for CpuTimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuTimeError::Io { path, source } => write!(
                f,
                "cannot read {}: {source} (has the process ended? is /proc mounted?)",
                path.display()
            ),
            CpuTimeError::Unreadable { path } => write!(
                f,
                "{} lacks the CPU time fields of a Linux /proc (this needs Linux's procfs)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for CpuTimeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CpuTimeError::Io { source, .. } => Some(source),
            CpuTimeError::Unreadable { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_process_has_run_time_that_grows() {
        let before = CpuTime::of(std::process::id()).unwrap();
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while started.elapsed() < std::time::Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let after = CpuTime::of(std::process::id()).unwrap();
        assert!(after.runtime_ns > before.runtime_ns);
        assert!(after.user_system_ns >= before.user_system_ns);
    }

    #[test]
    fn a_process_that_does_not_exist_is_an_error_that_says_so() {
        let error = CpuTime::of(u32::MAX).unwrap_err();
        assert!(error.to_string().contains("has the process ended"), "{error}");
    }
}
