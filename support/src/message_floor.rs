//! The floor for a 64-byte message between two cores: the least any protocol can do to
//! move that payload and hear back. Each direction has one cache line of its own, a
//! sequence word and 56 payload bytes; the sender writes the payload, then stores the
//! sequence with Release; the other side spins on the sequence, reads the payload, and
//! echoes it on its line the same way. No other state: no ring, no index, no header.
//! Timed like [`crate::floor`]: one way is the round trip / 2, by the latency clock
//! ([`crate::clock::latency`]). Like it, message `seq` goes on slot `seq % SLOTS` of a
//! [`Slots`] ([`crate::slots`] says why): its ping line is the slot's first, its pong line
//! the slot's second.
//!
//! The slots come from a [`crate::barrier::Barrier`] for processes
//! ([`crate::barrier::Barrier::slots`]), or from an [`OwnedSlots`] for threads
//! ([`between_threads`]).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::cores::{PinError, on_two_cores};
use crate::slots::{OwnedSlots, Slots};
use crate::trips::TripTimer;

/// One direction's cache line: word 0 the sequence, words 1 to 7 the payload.
type Line = [AtomicU64; 8];

/// Message `seq`'s ping and pong lines.
#[inline(always)]
fn lines(slots: Slots<'_>, seq: u64) -> (&Line, &Line) {
    let [ping, pong] = slots.slot(seq);
    (&ping.0, &pong.0)
}

/// Payload word `k` of message `seq`: a different value in every word and message, so an
/// echo that skipped or tore a word shows.
#[inline(always)]
fn word(seq: u64, k: usize) -> u64 {
    seq.rotate_left(k as u32 * 8) ^ k as u64
}

/// The ponger: echoes messages 1, 2, … `count` from each ping line to its pong line,
/// payload and all.
pub fn pong(slots: Slots<'_>, count: u64) {
    for seq in 1..=count {
        let (ping, pong) = lines(slots, seq);
        // SYNC POINT message-ping: pairs with the Release store in `round_trips`; the
        // payload written before it is visible.
        while ping[0].load(Ordering::Acquire) != seq {
            std::hint::spin_loop();
        }
        for (to, from) in pong.iter().zip(ping).skip(1) {
            to.store(from.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        // SYNC POINT message-pong: pairs with the Acquire load in `round_trips`.
        pong[0].store(seq, Ordering::Release);
    }
}

/// The pinger: `warmup` unrecorded then `count` recorded round trips against [`pong`]
/// (which must echo `warmup + count`); returns the round trips in ns, in the order taken,
/// one stamp per trip ([`TripTimer`]).
/// Panics if an echo's payload is not the message sent: a floor that checks nothing may
/// be measuring nothing.
pub fn round_trips(slots: Slots<'_>, warmup: u64, count: u64) -> Vec<u64> {
    let mut timer = TripTimer::start(count);
    for seq in 1..=warmup + count {
        let (ping, pong) = lines(slots, seq);
        for (k, w) in ping.iter().enumerate().skip(1) {
            w.store(word(seq, k), Ordering::Relaxed);
        }
        // SYNC POINT message-ping: pairs with the Acquire load in `pong`.
        ping[0].store(seq, Ordering::Release);
        // SYNC POINT message-pong: pairs with the Release store in `pong`.
        while pong[0].load(Ordering::Acquire) != seq {
            std::hint::spin_loop();
        }
        let mut wrong = 0;
        for (k, w) in pong.iter().enumerate().skip(1) {
            wrong |= w.load(Ordering::Relaxed) ^ word(seq, k);
        }
        timer.lap(seq > warmup);
        assert_eq!(
            wrong, 0,
            "the message floor's echo of message {seq} differs from what was sent"
        );
    }
    timer.into_trips()
}

/// The message floor between cores `a` (pinger) and `b` (ponger), measured by two threads
/// of this process pinned to them: `count` round trips in ns.
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
    fn every_round_trip_is_recorded_and_its_payload_checked() {
        let cores = crate::cores::cores();
        let trips = between_threads(0, cores - 1, 1000).unwrap();
        assert_eq!(trips.len(), 1000);
        assert!(between_threads(0, usize::MAX, 10).is_err());
    }

    #[test]
    fn the_messages_go_round_every_slot_on_its_two_lines() {
        let (owned, last) = after_trips(2 * SLOTS as u64 + 3, round_trips, pong);
        for (slot, last) in (0..).zip(last) {
            let [ping, pong] = owned.slots().slot(slot);
            assert_eq!(ping.0[0].load(Ordering::Relaxed), last);
            assert_eq!(pong.0[0].load(Ordering::Relaxed), last);
            assert_eq!(pong.0[7].load(Ordering::Relaxed), word(last, 7));
        }
    }

    #[test]
    fn every_word_of_every_message_differs() {
        assert_ne!(word(1, 1), word(1, 2));
        assert_ne!(word(1, 3), word(2, 3));
    }

    #[test]
    #[should_panic(expected = "differs from what was sent")]
    fn a_torn_echo_is_caught() {
        let owned = std::sync::Arc::new(OwnedSlots::new());
        let echo = {
            let owned = owned.clone();
            std::thread::spawn(move || {
                let (ping, back) = lines(owned.slots(), 1);
                while ping[0].load(Ordering::Acquire) != 1 {
                    std::hint::spin_loop();
                }
                // Echoes the sequence but not the payload.
                back[0].store(1, Ordering::Release);
            })
        };
        round_trips(owned.slots(), 0, 1);
        echo.join().unwrap();
    }
}
