//! Where and how a role runs: its core, and optionally SCHED_RR.

use support::realtime::Policy;

use crate::params::Params;

/// Pins the calling thread to `core`. The command line took only cores this machine has,
/// so a failure is the machine's, and ends the role.
pub fn pin(core: usize) {
    support::cores::pin(core).unwrap_or_else(|e| panic!("{e}"));
}

/// Puts the calling thread under SCHED_RR at `priority` (`support::realtime`).
pub fn round_robin(priority: u32) -> Result<(), String> {
    support::realtime::schedule(Policy::RoundRobin, priority).map_err(|e| e.to_string())
}

/// How long real-time tasks may run in a row before the kernel throttles them, with some
/// margin, in ms; `None` when it does not throttle them.
pub fn realtime_limit_ms() -> Option<u64> {
    support::realtime::throttle_limit_ms()
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
