//! macOS: sleeping on a word of shared memory until another process wakes it.
//!
//! `os_sync_wait_on_address_with_timeout` / `os_sync_wake_by_address_all`, public API
//! since macOS 14.4, are looked up once at run time, so one binary runs on older systems
//! too; there the calls underneath them serve, `__ulock_wait` / `__ulock_wake` (in every
//! macOS since 10.12; libc++'s `atomic::wait` uses them). Every process on one machine
//! finds the same calls, so a sleeper and the process that wakes it always agree. Both
//! use the `_SHARED` variant: the word is in memory other processes map, so the kernel
//! must key the wait by the memory object, not by this process's address.

use std::ffi::{CStr, c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use super::nap;

// os/os_sync_wait_on_address.h and os/clock.h (the same values as the `libc` crate's).
const OS_SYNC_WAIT_ON_ADDRESS_SHARED: u32 = 0x1;
const OS_SYNC_WAKE_BY_ADDRESS_SHARED: u32 = 0x1;
const OS_CLOCK_MACH_ABSOLUTE_TIME: u32 = 32;

// xnu bsd/sys/ulock.h.
const UL_COMPARE_AND_WAIT_SHARED: u32 = 3;
const ULF_WAKE_ALL: u32 = 0x0000_0100;
/// Errors come back as `-errno` in the return value instead of in `errno`.
const ULF_NO_ERRNO: u32 = 0x0100_0000;

/// The size of the word both calls compare, in bytes.
const WORD: usize = size_of::<u32>();

/// The longest single wait: `__ulock_wait` takes microseconds in a `u32` (71 minutes).
/// A longer wait returns early and the caller waits again; both calls are held to it, so
/// the two behave alike.
const LONGEST: Duration = Duration::from_micros(u32::MAX as u64);

unsafe extern "C" {
    /// Sleeps while the word at `addr` holds `value`, at most `timeout_us` (0: forever).
    fn __ulock_wait(operation: u32, addr: *mut c_void, value: u64, timeout_us: u32) -> c_int;
    /// Wakes the sleepers on `addr` (all of them with `ULF_WAKE_ALL`).
    fn __ulock_wake(operation: u32, addr: *mut c_void, wake_value: u64) -> c_int;
}

/// `os_sync_wait_on_address_with_timeout(addr, value, size, flags, clockid, timeout_ns)`.
type WaitWithTimeout = unsafe extern "C" fn(*mut c_void, u64, usize, u32, u32, u64) -> c_int;
/// `os_sync_wake_by_address_all(addr, size, flags)`.
type WakeAll = unsafe extern "C" fn(*mut c_void, usize, u32) -> c_int;

/// The macOS 14.4 calls, where the system has both.
struct OsSync {
    wait: WaitWithTimeout,
    wake_all: WakeAll,
}

fn os_sync() -> Option<&'static OsSync> {
    static FOUND: OnceLock<Option<OsSync>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let wait = lookup(c"os_sync_wait_on_address_with_timeout")?;
            let wake_all = lookup(c"os_sync_wake_by_address_all")?;
            // SAFETY: libSystem exports these names with exactly these C signatures
            // (os/os_sync_wait_on_address.h); `lookup` returned them non-null, and a
            // function pointer has the size and representation of a data pointer here.
            unsafe {
                Some(OsSync {
                    wait: std::mem::transmute::<*mut c_void, WaitWithTimeout>(wait),
                    wake_all: std::mem::transmute::<*mut c_void, WakeAll>(wake_all),
                })
            }
        })
        .as_ref()
}

/// The address of the loaded symbol `name`, if any image defines it.
fn lookup(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: `name` is NUL-terminated; RTLD_DEFAULT searches every loaded image and
    // returns null for a name none defines.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!found.is_null()).then_some(found)
}

/// Sleeps while `*word == expected`, at most `timeout`. Spurious returns are fine: callers
/// re-check their condition.
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let addr = word.as_ptr().cast::<c_void>();
    // Neither call takes 0 for a timeout (os_sync refuses it, ulock sleeps forever).
    let timeout = timeout.min(LONGEST);
    let error = match os_sync() {
        Some(calls) => {
            let ns = (timeout.as_nanos() as u64).max(1);
            // SAFETY: `addr` is a live, aligned 4-byte word for the whole call (`word`
            // borrows it); the call only reads it, and writes no memory of ours.
            let rc = unsafe {
                (calls.wait)(
                    addr,
                    u64::from(expected),
                    WORD,
                    OS_SYNC_WAIT_ON_ADDRESS_SHARED,
                    OS_CLOCK_MACH_ABSOLUTE_TIME,
                    ns,
                )
            };
            (rc < 0).then(|| std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
        }
        None => {
            let us = (timeout.as_micros() as u32).max(1);
            // SAFETY: as above.
            let rc = unsafe { __ulock_wait(UL_COMPARE_AND_WAIT_SHARED | ULF_NO_ERRNO, addr, u64::from(expected), us) };
            (rc < 0).then_some(-rc)
        }
    };
    match error {
        // Woken, the word had already moved, a signal, or the time is up: all are returns
        // the caller expects.
        None | Some(libc::EINTR | libc::ETIMEDOUT) => {}
        // Anything else (EFAULT when the kernel could not read the word, EINVAL) may well
        // recur at once on every call, and the caller would spin on it: nap instead, so
        // the wait still ends within a bounded delay of a commit and costs little CPU.
        Some(_) => nap(timeout),
    }
}

/// Wakes every process sleeping on `word`.
pub(crate) fn wake_all(word: &AtomicU32) {
    let addr = word.as_ptr().cast::<c_void>();
    // A signal can interrupt the call before it wakes anyone: retried, a few times and no
    // more. No sleepers (ENOENT) is success; other errors leave the sleepers to their
    // timeouts, which is all a waker could do about them.
    for _ in 0..WAKE_TRIES {
        let error = match os_sync() {
            Some(calls) => {
                // SAFETY: `addr` is a live, aligned 4-byte word (`word` borrows it); the
                // call only uses it as a key.
                let rc = unsafe { (calls.wake_all)(addr, WORD, OS_SYNC_WAKE_BY_ADDRESS_SHARED) };
                (rc < 0).then(|| std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
            }
            None => {
                // SAFETY: as above.
                let rc = unsafe { __ulock_wake(UL_COMPARE_AND_WAIT_SHARED | ULF_WAKE_ALL | ULF_NO_ERRNO, addr, 0) };
                (rc < 0).then_some(-rc)
            }
        };
        if error != Some(libc::EINTR) {
            return;
        }
    }
}

/// How many times `wake_all` makes a call that a signal interrupted.
const WAKE_TRIES: usize = 4;
