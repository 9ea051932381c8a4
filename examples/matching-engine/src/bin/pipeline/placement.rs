//! Where and how a role runs: its core, and optionally SCHED_RR.

use std::process::Command;

use crate::params::Params;

/// Pins the calling thread to `core`. The command line took only cores this machine has,
/// so a failure is the machine's, and ends the role.
pub fn pin(core: usize) {
    support::cores::pin(core).unwrap_or_else(|e| panic!("{e}"));
}

/// Puts the calling thread under SCHED_RR at `priority`, through util-linux's `chrt`
/// (the crate has no `unsafe` to call `sched_setscheduler` itself).
pub fn round_robin(priority: u32) -> Result<(), String> {
    let tid = rustix::thread::gettid().as_raw_nonzero().to_string();
    let output = Command::new("chrt")
        .args(["-r", "-p", &priority.to_string(), &tid])
        .output()
        .map_err(|e| format!("cannot run chrt (util-linux): {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "chrt -r -p {priority} failed ({}); SCHED_RR needs root or CAP_SYS_NICE",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// How long real-time tasks may run in a row before the kernel throttles them, with some
/// margin, in ms; `None` when it does not throttle them.
pub fn realtime_limit_ms() -> Option<u64> {
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

/// Pins a role to its core and, with `--realtime`, puts it under SCHED_RR: then no
/// ordinary task can take the core from it (on the development VM a kernel thread,
/// `kdamond`, was seen holding the engine's core for 5 ms), and the roles sharing a core
/// take turns strictly.
pub fn place_role(p: &Params, core: usize) {
    pin(core);
    if let Some(priority) = p.realtime {
        round_robin(priority).expect("--realtime");
    }
}
