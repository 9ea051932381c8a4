//! The one clock of every measurement: `CLOCK_MONOTONIC`, read in nanoseconds. It is
//! shared by every process on the machine, so a stamp taken in one process can be
//! compared with one taken in another (BENCHMARKING.md rule 6).

use rustix::time::{ClockId, Timespec, clock_getres, clock_gettime};

/// `CLOCK_MONOTONIC` now, in nanoseconds.
#[inline(always)]
pub fn now_ns() -> u64 {
    nanoseconds(clock_gettime(ClockId::Monotonic))
}

/// The resolution of `CLOCK_MONOTONIC` as the kernel reports it (`clock_getres`), in
/// nanoseconds: the finest step a stamp can show, recorded with the raw data.
pub fn resolution_ns() -> u64 {
    nanoseconds(clock_getres(ClockId::Monotonic))
}

#[inline(always)]
fn nanoseconds(t: Timespec) -> u64 {
    // A monotonic clock is never negative.
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_does_not_go_back() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
    }

    #[test]
    fn the_resolution_is_at_least_one_nanosecond() {
        assert!(resolution_ns() >= 1);
    }
}
