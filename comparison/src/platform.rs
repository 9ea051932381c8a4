//! Cores, pinning, the clock and Ctrl-C (as in benches/ipc.rs).

use std::sync::atomic::{AtomicU64, Ordering};
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Publishers on the first cores, subscribers on the last: P0@0, S0@1 on two cores.
pub fn core_for(role: &str, index: usize) -> usize {
    let cores = cores().max(1);
    match role {
        "publisher" => index % cores,
        _ => (cores - 1 - index % cores) % cores,
    }
}

pub fn pin(core: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; the calls take pointers to it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0,
            "pin to core {core}"
        );
    }
}

pub fn now_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The cores of the latency runs (ping-pong, floor, open loop): 0 and 1.
pub fn latency_cores() -> [usize; 2] {
    [0, 1 % cores().max(1)]
}

pub static INTERRUPTED: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(1, Ordering::Relaxed);
}

/// Ctrl-C kills the children (the handler does not survive their exec); the parent only
/// notes it, then fails on the dead child and unwinds, so every shared object it created
/// (salias channels, barrier and ring files, the Aeron directory, iceoryx2 services and
/// leftovers) is removed on the way out.
pub fn catch_interrupt() {
    let handler: extern "C" fn(libc::c_int) = on_interrupt;
    // SAFETY: installing a handler that only stores to an atomic.
    unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
}

pub fn interrupted() -> &'static str {
    if INTERRUPTED.load(Ordering::Relaxed) != 0 {
        " (interrupted)"
    } else {
        ""
    }
}
