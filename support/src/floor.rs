//! The machine's floor between two cores (doc/benchmarking.md rule 7): a bare cache-line
//! ping-pong, one word each way on one cache line, timed like any ping-pong: one way is
//! the round trip / 2. Every latency figure is shown next to it. Its sibling for a
//! message, [`crate::message_floor`], moves 64 bytes each way.
//!
//! Trip `i` runs on slot `i % SLOTS` of a [`Slots`], 64 lines on 16 pages, not on one line:
//! what one line costs to move depends on which line it is ([`crate::slots`] says how
//! much), and a floor is to measure the machine's cores, not the page a run was given.
//! The slots come from a [`crate::barrier::Barrier`] for processes
//! ([`crate::barrier::Barrier::slots`]), or from an [`OwnedSlots`] for threads.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::cores::{PinError, on_two_cores};
use crate::slots::{OwnedSlots, Slots};
use crate::trips::TripTimer;

/// Trip `trip`'s ping and pong words.
#[inline(always)]
fn words(slots: Slots<'_>, trip: u64) -> (&AtomicU64, &AtomicU64) {
    let [line, _] = slots.slot(trip);
    (&line.0[0], &line.0[1])
}

/// The ponger: echoes pings 1, 2, … `count` on `slots`.
pub fn pong(slots: Slots<'_>, count: u64) {
    for i in 1..=count {
        let (ping, pong) = words(slots, i);
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
pub fn round_trips(slots: Slots<'_>, warmup: u64, count: u64) -> Vec<u64> {
    let mut timer = TripTimer::start(count);
    for i in 1..=warmup + count {
        let (ping, pong) = words(slots, i);
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
    let owned = OwnedSlots::new();
    let slots = owned.slots();
    on_two_cores(a, b, || round_trips(slots, 0, count), || pong(slots, count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slots::{SLOTS, after_trips};

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
        let owned = std::sync::Arc::new(OwnedSlots::new());
        let echo = {
            let owned = owned.clone();
            std::thread::spawn(move || pong(owned.slots(), 30))
        };
        assert_eq!(round_trips(owned.slots(), 10, 20).len(), 20);
        echo.join().unwrap();
    }

    #[test]
    fn the_trips_go_round_every_slot() {
        let (owned, last) = after_trips(3 * SLOTS as u64 + 5, round_trips, pong);
        for (slot, last) in (0..).zip(last) {
            let (ping, pong) = words(owned.slots(), slot);
            assert_eq!(
                (ping.load(Ordering::Relaxed), pong.load(Ordering::Relaxed)),
                (last, last)
            );
        }
    }
}
