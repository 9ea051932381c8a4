//! Identifying processes: a pid plus the process's start time, so a pid the kernel has
//! since handed to another process is not mistaken for the original one.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rustix::io::Errno;
use rustix::process::{Pid, test_kill_process};

/// A process as recorded in a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    pub pid: u32,
    /// Start time in an OS-specific unit; 0 when it could not be read.
    pub start_time: u64,
}

/// This process's identity, computed once; a `fork()` child forgets it (see `guard`).
/// `CACHED_PID` is 0 while unknown and is stored last.
static CACHED_PID: AtomicU32 = AtomicU32::new(0);
static CACHED_START: AtomicU64 = AtomicU64::new(0);

impl Identity {
    /// This process.
    pub(crate) fn current() -> Identity {
        // SYNC POINT identity-cache (Acquire side): a pid seen means its start time is too.
        let pid = CACHED_PID.load(Ordering::Acquire);
        if pid != 0 {
            return Identity {
                pid,
                start_time: CACHED_START.load(Ordering::Relaxed),
            };
        }
        let pid = std::process::id();
        let start_time = start_time(pid).unwrap_or(0);
        CACHED_START.store(start_time, Ordering::Relaxed);
        // SYNC POINT identity-cache (Release side).
        CACHED_PID.store(pid, Ordering::Release);
        Identity { pid, start_time }
    }
}

/// Called in a `fork()` child, which is another process than the one cached.
/// Async-signal-safe: two stores.
pub(crate) fn forget_identity() {
    CACHED_PID.store(0, Ordering::Release);
}

impl Identity {
    /// The slot-holder word for this identity (see `layout::Holder`).
    pub(crate) fn token(self) -> u64 {
        (self.pid as u64) << 32 | (self.start_time & 0xffff_ffff)
    }
}

/// The pid recorded in a slot-holder word.
pub(crate) fn token_pid(token: u64) -> u32 {
    (token >> 32) as u32
}

/// Whether the process that wrote slot-holder word `token` still runs.
pub(crate) fn token_alive(token: u64) -> bool {
    is_alive(token_pid(token), token & 0xffff_ffff)
}

/// Whether the process recorded as `pid` with the low 32 bits `start_low` of its start
/// time still runs.
pub(crate) fn is_alive(pid: u32, start_low: u64) -> bool {
    // Slot words come from shared memory: a pid that no process can have is not alive
    // (and rustix rejects negative pids with a panic).
    let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    // EPERM also means it exists (it belongs to another user).
    if let Err(Errno::SRCH) = test_kill_process(raw) {
        return false;
    }
    match start_time(pid) {
        // A different start time means the pid was recycled.
        Some(now) => start_low == 0 || now & 0xffff_ffff == start_low,
        // Exists but unreadable (another user's process, or exited mid-read): a holder
        // is presumed alive unless proven dead.
        None => !is_zombie(pid),
    }
}

#[cfg(target_os = "linux")]
fn stat_fields(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()
}

/// Fields after the command name, which may itself contain spaces and parentheses.
#[cfg(target_os = "linux")]
fn after_comm(stat: &str) -> Option<&str> {
    stat.rfind(')').map(|at| &stat[at + 1..])
}

#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<u64> {
    let stat = stat_fields(pid)?;
    let rest = after_comm(&stat)?;
    let mut fields = rest.split_whitespace();
    // Field 3 (state) is first here; field 22 (starttime) is the 20th.
    let state = fields.next()?;
    if matches!(state, "Z" | "X" | "x") {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

#[cfg(target_os = "linux")]
fn is_zombie(pid: u32) -> bool {
    let Some(stat) = stat_fields(pid) else {
        return true;
    };
    after_comm(&stat)
        .and_then(|rest| rest.split_whitespace().next())
        .is_none_or(|state| matches!(state, "Z" | "X" | "x"))
}

#[cfg(target_os = "macos")]
fn start_time(pid: u32) -> Option<u64> {
    let mut info: libc::proc_bsdinfo = unsafe_zeroed();
    let size = size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: `info` is a writable `proc_bsdinfo` of exactly `size` bytes.
    let got = unsafe {
        libc::proc_pidinfo(
            pid as libc::c_int,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    if got != size || info.pbi_status == libc::SZOMB as u32 {
        return None;
    }
    Some(info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec)
}

#[cfg(target_os = "macos")]
fn unsafe_zeroed() -> libc::proc_bsdinfo {
    // SAFETY: `proc_bsdinfo` is a plain C struct of integers and byte arrays.
    unsafe { std::mem::zeroed() }
}

#[cfg(target_os = "macos")]
fn is_zombie(pid: u32) -> bool {
    start_time(pid).is_none()
        && i32::try_from(pid)
            .ok()
            .and_then(Pid::from_raw)
            .is_none_or(|raw| test_kill_process(raw).is_err())
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn start_time(_pid: u32) -> Option<u64> {
    None
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn is_zombie(_pid: u32) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn current_process_is_alive_and_a_recycled_pid_is_not() {
        let me = Identity::current();
        assert!(me.start_time > 0);
        assert!(token_alive(me.token()));
        assert!(!token_alive(
            Identity {
                start_time: me.start_time + 1,
                ..me
            }
            .token()
        ));
    }

    #[test]
    fn impossible_pids_are_dead_not_a_panic() {
        for pid in [0, i32::MAX as u32 + 1, u32::MAX] {
            assert!(!is_alive(pid, 0));
            assert!(!token_alive((pid as u64) << 32 | 1));
        }
    }

    #[test]
    fn reaped_child_is_dead() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!is_alive(pid, 0));
    }
}
