//! The latency runs' two cores, and Ctrl-C.

use std::sync::atomic::{AtomicBool, Ordering};

use support::cores::cores;

/// The cores of the latency runs (ping-pong, floor, open loop): 0 and 1.
pub fn latency_cores() -> [usize; 2] {
    [0, 1 % cores().max(1)]
}

/// Set by the SIGINT handler; read only to explain the failure that follows.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Ctrl-C kills the children (the handler does not survive their exec); the parent only
/// notes it, then fails on the dead child and unwinds, so every shared object it created
/// (salias channels, barrier and ring files, the Aeron directory, iceoryx2 services and
/// leftovers) is removed on the way out.
pub fn catch_interrupt() {
    let handler: extern "C" fn(libc::c_int) = on_interrupt;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe; `signal`
    // takes it as a plain function address.
    unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
}

/// " (interrupted)" after Ctrl-C, else "".
pub fn interrupted() -> &'static str {
    if INTERRUPTED.load(Ordering::Relaxed) {
        " (interrupted)"
    } else {
        ""
    }
}
