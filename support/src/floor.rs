//! The machine's floor between two cores (doc/benchmarking.md rule 7): a bare cache-line
//! ping-pong, one word each way on one cache line, timed like any ping-pong: one way is
//! the round trip / 2. Every latency figure is shown next to it. Its sibling for a
//! message, [`crate::message_floor`], moves 64 bytes each way.
//!
//! The two words come from a [`crate::barrier::Barrier`] for processes
//! ([`crate::barrier::Barrier::floor_line`]), or from [`between_threads`] for threads.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::cores::{PinError, on_two_cores};
use crate::trips::TripTimer;

/// The ponger: echoes pings 1, 2, … `count` from `ping` to `pong`.
pub fn pong(ping: &AtomicU64, pong: &AtomicU64, count: u64) {
    for i in 1..=count {
        // SYNC POINT ping: pairs with the Release store in `round_trips`.
        while ping.load(Ordering::Acquire) != i {
            std::hint::spin_loop();
        }
        // SYNC POINT pong: pairs with the Acquire load in `round_trips`.
        pong.store(i, Ordering::Release);
    }
}

/// The pinger: `warmup` unrecorded then `count` recorded round trips against [`pong`]
/// (which must echo `warmup + count`); returns the round trips in ns, in the order taken,
/// by the latency clock, one stamp per trip ([`TripTimer`]).
pub fn round_trips(ping: &AtomicU64, pong: &AtomicU64, warmup: u64, count: u64) -> Vec<u64> {
    let mut timer = TripTimer::start(count);
    for i in 1..=warmup + count {
        // SYNC POINT ping: pairs with the Acquire load in `pong`.
        ping.store(i, Ordering::Release);
        // SYNC POINT pong: pairs with the Release store in `pong`.
        while pong.load(Ordering::Acquire) != i {
            std::hint::spin_loop();
        }
        timer.lap(i > warmup);
    }
    timer.into_trips()
}

/// The floor between cores `a` (pinger) and `b` (ponger) measured by two threads of this
/// process pinned to them: `count` round trips in ns.
pub fn between_threads(a: usize, b: usize, count: u64) -> Result<Vec<u64>, PinError> {
    let line = [AtomicU64::new(0), AtomicU64::new(0)];
    on_two_cores(
        a,
        b,
        || round_trips(&line[0], &line[1], 0, count),
        || pong(&line[0], &line[1], count),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_that_cannot_be_had_stops_both_sides() {
        let too_far = usize::MAX;
        assert!(between_threads(0, too_far, 10).is_err());
        assert!(between_threads(too_far, 0, 10).is_err());
    }

    #[test]
    fn every_round_trip_is_recorded_after_the_warmup() {
        let cores = crate::cores::cores();
        let trips = between_threads(0, cores - 1, 1000).unwrap();
        assert_eq!(trips.len(), 1000);
        let line = std::sync::Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let echo = {
            let line = line.clone();
            std::thread::spawn(move || pong(&line[0], &line[1], 30))
        };
        assert_eq!(round_trips(&line[0], &line[1], 10, 20).len(), 20);
        echo.join().unwrap();
    }
}
