//! The floor for a 64-byte message between two cores: the least any protocol can do to
//! move that payload and hear back. Each direction has one cache line of its own, a
//! sequence word and 56 payload bytes; the sender writes the payload, then stores the
//! sequence with Release; the other side spins on the sequence, reads the payload, and
//! echoes it on its line the same way. No other state: no ring, no index, no header.
//! Timed like [`crate::floor`]: one way is the round trip / 2, by the latency clock
//! ([`crate::clock::latency`]).
//!
//! The lines come from a [`crate::barrier::Barrier`] for processes
//! ([`crate::barrier::Barrier::message_lines`]), or from [`between_threads`] for threads.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::cores::{PinError, on_two_cores};
use crate::trips::TripTimer;

/// One direction's cache line: word 0 the sequence, words 1 to 7 the payload.
pub type Line = [AtomicU64; 8];

/// Payload word `k` of message `seq`: a different value in every word and message, so an
/// echo that skipped or tore a word shows.
#[inline(always)]
fn word(seq: u64, k: usize) -> u64 {
    seq.rotate_left(k as u32 * 8) ^ k as u64
}

/// The ponger: echoes messages 1, 2, … `count` from `ping` to `pong`, payload and all.
pub fn pong(ping: &Line, pong: &Line, count: u64) {
    for seq in 1..=count {
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
pub fn round_trips(ping: &Line, pong: &Line, warmup: u64, count: u64) -> Vec<u64> {
    let mut timer = TripTimer::start(count);
    for seq in 1..=warmup + count {
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

/// Two lines, each on a cache line of its own, for [`between_threads`].
#[repr(C, align(64))]
struct Lines([Line; 2]);

/// The message floor between cores `a` (pinger) and `b` (ponger), measured by two threads
/// of this process pinned to them: `count` round trips in ns.
pub fn between_threads(a: usize, b: usize, count: u64) -> Result<Vec<u64>, PinError> {
    let lines = Lines(Default::default());
    let [ping, back] = &lines.0;
    on_two_cores(a, b, || round_trips(ping, back, 0, count), || pong(ping, back, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_round_trip_is_recorded_and_its_payload_checked() {
        let cores = crate::cores::cores();
        let trips = between_threads(0, cores - 1, 1000).unwrap();
        assert_eq!(trips.len(), 1000);
        assert!(between_threads(0, usize::MAX, 10).is_err());
    }

    #[test]
    fn every_word_of_every_message_differs() {
        assert_ne!(word(1, 1), word(1, 2));
        assert_ne!(word(1, 3), word(2, 3));
    }

    #[test]
    #[should_panic(expected = "differs from what was sent")]
    fn a_torn_echo_is_caught() {
        let lines = std::sync::Arc::new(Lines(Default::default()));
        let echo = {
            let lines = lines.clone();
            std::thread::spawn(move || {
                let [ping, back] = &lines.0;
                while ping[0].load(Ordering::Acquire) != 1 {
                    std::hint::spin_loop();
                }
                // Echoes the sequence but not the payload.
                back[0].store(1, Ordering::Release);
            })
        };
        let [ping, back] = &lines.0;
        round_trips(ping, back, 0, 1);
        echo.join().unwrap();
    }
}
