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
/// Async-signal-safe: one store.
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

/// Whether the holder `token` lives, answering for this process's own slots without a
/// system call (a process asking is alive). For every liveness question a peer asks of a
/// slot: reaping, counting holders, the watcher's crash check.
pub(crate) fn holder_alive(token: u64) -> bool {
    token == Identity::current().token() || token_alive(token)
}

/// Whether the process that wrote slot-holder word `token` still runs.
pub(crate) fn token_alive(token: u64) -> bool {
    is_alive(token_pid(token), token & 0xffff_ffff)
}

/// Whether the process recorded as `pid` with the low 32 bits `start_low` of its start
/// time still runs. Allocates nothing: it runs every millisecond on a backpressured
/// fanout publisher and on an ordered subscriber waiting for a held number.
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
    match state(pid) {
        State::Gone => false,
        // Ask again: gone now means it exited meanwhile; still there means `/proc` hides
        // it (another user's process under `hidepid`), and a holder is presumed alive.
        State::Unreadable => !matches!(test_kill_process(raw), Err(Errno::SRCH)),
        // A different start time means the pid was recycled.
        State::Running(Some(now)) => start_low == 0 || now & 0xffff_ffff == start_low,
        // Running but its start time unreadable: a holder is presumed alive unless proven
        // dead.
        State::Running(None) => true,
    }
}

/// What the OS says about a process that `kill(pid, 0)` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// A zombie, or gone since (Linux: no `/proc/PID/stat` with a state to read).
    Gone,
    /// Running, with its start time where it could be read.
    Running(Option<u64>),
    /// `/proc/PID/stat` could not be opened.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Unreadable,
}

#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<u64> {
    match state(pid) {
        State::Running(start) => start,
        State::Gone | State::Unreadable => None,
    }
}

/// Reads `/proc/PID/stat` once, into stack buffers: no allocation.
#[cfg(target_os = "linux")]
fn state(pid: u32) -> State {
    use rustix::fs::{Mode, OFlags, open};

    let mut path = [0u8; 32];
    let Some(path) = proc_stat_path(pid, &mut path) else {
        return State::Gone;
    };
    let Ok(file) = open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()) else {
        // Exited since `kill` found it, or hidden (`/proc` mounted with `hidepid`).
        return State::Unreadable;
    };
    // Lines are a few hundred bytes; however long its numbers, the start time (field 22)
    // ends within about 530 (the command name is at most 64), and later fields may be cut.
    let mut stat = [0u8; 1024];
    let mut filled = 0;
    while filled < stat.len() {
        match rustix::io::read(&file, &mut stat[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(Errno::INTR) => {}
            Err(_) => return State::Gone,
        }
    }
    parse_stat(&stat[..filled], filled == stat.len())
}

/// `/proc/PID/stat` as a C string, written into `buf`.
#[cfg(target_os = "linux")]
fn proc_stat_path(pid: u32, buf: &mut [u8; 32]) -> Option<&std::ffi::CStr> {
    const PREFIX: &[u8] = b"/proc/";
    const SUFFIX: &[u8] = b"/stat\0";
    let mut digits = [0u8; 10]; // u32::MAX has 10
    let mut start = digits.len();
    let mut rest = pid;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digits = &digits[start..];
    let len = PREFIX.len() + digits.len() + SUFFIX.len();
    buf[..PREFIX.len()].copy_from_slice(PREFIX);
    buf[PREFIX.len()..PREFIX.len() + digits.len()].copy_from_slice(digits);
    buf[PREFIX.len() + digits.len()..len].copy_from_slice(SUFFIX);
    std::ffi::CStr::from_bytes_with_nul(&buf[..len]).ok()
}

/// Parses a `/proc/PID/stat` line: the state and the start time come after the command
/// name, which may itself contain spaces and parentheses (and need not be UTF-8), so
/// parsing starts after the last ')'. With `truncated`, the last field may be cut short
/// and is ignored.
#[cfg(target_os = "linux")]
fn parse_stat(stat: &[u8], truncated: bool) -> State {
    let Some(after_comm) = stat.iter().rposition(|&b| b == b')') else {
        return State::Gone; // no command name: unreadable
    };
    let mut rest = &stat[after_comm + 1..];
    if truncated {
        rest = &rest[..rest.iter().rposition(u8::is_ascii_whitespace).unwrap_or(0)];
    }
    let mut fields = rest.split(u8::is_ascii_whitespace).filter(|field| !field.is_empty());
    // Field 3 (state) is first here; field 22 (starttime) is the 20th.
    match fields.next() {
        None | Some(b"Z" | b"X" | b"x") => State::Gone,
        Some(_) => State::Running(fields.nth(18).and_then(parse_u64)),
    }
}

/// A decimal number, or `None` for anything else (including overflow).
#[cfg(target_os = "linux")]
fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |value, &b| {
        let digit = b.checked_sub(b'0').filter(|&d| d < 10)?;
        value.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

#[cfg(not(target_os = "linux"))]
fn state(pid: u32) -> State {
    match start_time(pid) {
        Some(start) => State::Running(Some(start)),
        None if is_zombie(pid) => State::Gone,
        None => State::Running(None),
    }
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
    fn stat_is_parsed_after_the_last_parenthesis() {
        // Field 22 (starttime) is 4242; the command name holds spaces, ')' and a non-UTF-8 byte.
        let tail = b" S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21\n";
        for comm in [&b"(sh)"[..], b"(a) b (c) d)", b"( ) )", b"(\xff\xfe)"] {
            let line = [&b"1234 "[..], comm, tail].concat();
            assert_eq!(
                parse_stat(&line, false),
                State::Running(Some(4242)),
                "{}",
                line.escape_ascii()
            );
        }
        let zombie = b"1234 (x) y) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242";
        assert_eq!(parse_stat(zombie, false), State::Gone);
        assert_eq!(parse_stat(b"1234 (no state)", false), State::Gone);
        assert_eq!(parse_stat(b"1234 no parenthesis S 1 2", false), State::Gone);
        let unreadable_start = b"1234 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42x 20";
        assert_eq!(parse_stat(unreadable_start, false), State::Running(None));
        let overflow = b"1234 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99999999999999999999";
        assert_eq!(parse_stat(overflow, false), State::Running(None));
        // Cut inside the start time: its digits so far are not taken for the whole.
        let cut = b"1234 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42";
        assert_eq!(parse_stat(cut, true), State::Running(None));
        assert_eq!(parse_stat(&[cut, &b" 2"[..]].concat(), true), State::Running(Some(42)));
    }

    #[test]
    fn proc_stat_paths_are_written_in_full() {
        let mut buf = [0u8; 32];
        for (pid, path) in [
            (0, "/proc/0/stat"),
            (7, "/proc/7/stat"),
            (u32::MAX, "/proc/4294967295/stat"),
        ] {
            assert_eq!(proc_stat_path(pid, &mut buf).unwrap().to_str(), Ok(path));
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
