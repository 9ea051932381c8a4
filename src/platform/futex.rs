//! Linux: sleeping on a word of shared memory until another process wakes it (futex).
//! Both layers use it: the Linux one, and the portable one as its wait-on-address, so the
//! portable layer's wait and wake logic runs on Linux too.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use rustix::io::Errno;
use rustix::thread::futex;

use super::nap;

/// Sleeps while `*word == expected`, at most `timeout`. Spurious returns are fine: callers
/// re-check their condition.
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = futex::Timespec {
        // A longer wait than the type holds returns early; callers wait again.
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as _,
        tv_nsec: timeout.subsec_nanos() as _,
    };
    // Not FUTEX_PRIVATE: the word is in memory shared between processes.
    match futex::wait(word, futex::Flags::empty(), expected, Some(&ts)) {
        // Woken, the word had already moved, a signal, or the time is up: all are returns
        // the caller expects.
        Ok(()) | Err(Errno::AGAIN | Errno::INTR | Errno::TIMEDOUT) => {}
        // Anything else (a seccomp filter refusing futex, say) would return at once every
        // time, and the caller would spin on it: nap instead, so the wait still ends
        // within a bounded delay of a commit and costs little CPU.
        Err(_) => nap(timeout),
    }
}

/// Wakes every process sleeping on `word`.
pub(crate) fn wake_all(word: &AtomicU32) {
    let _ = futex::wake(word, futex::Flags::empty(), i32::MAX as u32);
}
