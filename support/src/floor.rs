//! The machine's floor between two cores (doc/benchmarking.md rule 7): a bare cache-line
//! ping-pong, one word each way on one cache line, timed like any ping-pong: one way is
//! the round trip / 2. Every latency figure is shown next to it. Its sibling for a
//! message, [`crate::message_floor`], moves 64 bytes each way.
//!
//! # Which lines
//! What moving one line costs depends on the line: on the development host (Intel, 2
//! vCPU guest) lines of one buffer took 96 to 173 ns one way between the same two cores in
//! one invocation, each line the same every time it was measured (the host keeps each line
//! at a place chosen by its physical address; a reading, the VM has no counters). A floor
//! on one line was therefore decided by the page a run happened to get: from one round to
//! the next the floor moved between about 106 and 166 ns while salias, whose messages
//! move along thousands of lines, did not. So a floor goes round a [`Spread`]: trip `i`
//! runs on slot `i % LINES`, each slot on a page of its own at an offset of its own, and
//! its figure is the cost at a typical line, as a ring pays it.
//!
//! The spread comes from a [`crate::barrier::Barrier`] for processes
//! ([`crate::barrier::Barrier::spread`]), or from an [`OwnedSpread`] for threads.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::cores::{PinError, on_two_cores};
use crate::trips::TripTimer;

/// Eight words on one cache line of their own.
#[repr(C, align(64))]
#[derive(Default)]
pub struct CacheLine(pub [AtomicU64; 8]);

/// Slots a floor goes round, one trip each in turn (a power of two).
pub const LINES: usize = 64;
/// Lines of one slot: the first carries the cache-line floor's two words and the message
/// floor's ping; the third its pong, so the two are not one 128-byte pair, which the
/// cache's spatial prefetcher fetches together.
pub const SLOT_LINES: usize = 3;
/// Lines from one slot to the next: a page and a line, so every slot sits on a page of
/// its own at an offset of its own.
pub const STRIDE_LINES: usize = 4096 / 64 + 1;
/// Lines a spread of [`LINES`] slots takes.
pub const SPREAD_LINES: usize = (LINES - 1) * STRIDE_LINES + SLOT_LINES;
const _: () = assert!(LINES.is_power_of_two());

/// The slots a floor's trips go round: trip `i` on slot `i % LINES`.
#[derive(Clone, Copy)]
pub struct Spread<'a>(&'a [CacheLine; SPREAD_LINES]);

impl<'a> Spread<'a> {
    /// The spread over `lines`.
    pub fn new(lines: &'a [CacheLine; SPREAD_LINES]) -> Spread<'a> {
        Spread(lines)
    }

    /// Trip `trip`'s slot.
    #[inline(always)]
    pub fn slot(self, trip: u64) -> &'a [CacheLine; SLOT_LINES] {
        let at = (trip as usize % LINES) * STRIDE_LINES;
        self.0[at..at + SLOT_LINES]
            .try_into()
            .expect("a slot lies inside the spread")
    }
}

/// A spread in this process's memory, for floors between two threads.
pub struct OwnedSpread(Box<[CacheLine; SPREAD_LINES]>);

impl OwnedSpread {
    /// A zeroed spread.
    pub fn new() -> OwnedSpread {
        let lines: Box<[CacheLine]> = (0..SPREAD_LINES).map(|_| CacheLine::default()).collect();
        OwnedSpread(
            lines
                .try_into()
                .unwrap_or_else(|_| unreachable!("SPREAD_LINES lines were made")),
        )
    }

    /// Its slots.
    pub fn spread(&self) -> Spread<'_> {
        Spread::new(&self.0)
    }
}

impl Default for OwnedSpread {
    fn default() -> Self {
        OwnedSpread::new()
    }
}

/// Trip `trip`'s ping and pong words.
#[inline(always)]
fn words(spread: Spread<'_>, trip: u64) -> (&AtomicU64, &AtomicU64) {
    let [line, ..] = spread.slot(trip);
    (&line.0[0], &line.0[1])
}

/// The ponger: echoes pings 1, 2, … `count` on `spread`.
pub fn pong(spread: Spread<'_>, count: u64) {
    for i in 1..=count {
        let (ping, pong) = words(spread, i);
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
pub fn round_trips(spread: Spread<'_>, warmup: u64, count: u64) -> Vec<u64> {
    let mut timer = TripTimer::start(count);
    for i in 1..=warmup + count {
        let (ping, pong) = words(spread, i);
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
    let lines = OwnedSpread::new();
    let spread = lines.spread();
    on_two_cores(a, b, || round_trips(spread, 0, count), || pong(spread, count))
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
        let lines = std::sync::Arc::new(OwnedSpread::new());
        let echo = {
            let lines = lines.clone();
            std::thread::spawn(move || pong(lines.spread(), 30))
        };
        assert_eq!(round_trips(lines.spread(), 10, 20).len(), 20);
        echo.join().unwrap();
    }

    #[test]
    fn every_slot_is_on_a_page_and_at_an_offset_of_its_own() {
        let lines = OwnedSpread::new();
        let spread = lines.spread();
        let address = |slot: u64| spread.slot(slot).as_ptr() as usize;
        let mut pages: Vec<usize> = (0..LINES as u64).map(|slot| address(slot) / 4096).collect();
        let mut offsets: Vec<usize> = (0..LINES as u64).map(|slot| address(slot) % 4096).collect();
        pages.dedup();
        offsets.sort_unstable();
        offsets.dedup();
        assert_eq!((pages.len(), offsets.len()), (LINES, LINES));
        assert_eq!(
            address(LINES as u64),
            address(0),
            "trip LINES goes back to the first slot"
        );
    }

    #[test]
    fn the_trips_go_round_every_slot() {
        let lines = std::sync::Arc::new(OwnedSpread::new());
        let count = 3 * LINES as u64 + 5;
        let echo = {
            let lines = lines.clone();
            std::thread::spawn(move || pong(lines.spread(), count))
        };
        round_trips(lines.spread(), 0, count);
        echo.join().unwrap();
        for slot in 0..LINES as u64 {
            let last = (1..=count).rev().find(|trip| trip % LINES as u64 == slot).unwrap();
            let (ping, pong) = words(lines.spread(), slot);
            assert_eq!(
                (ping.load(Ordering::Relaxed), pong.load(Ordering::Relaxed)),
                (last, last)
            );
        }
    }
}
