//! The floor for a 64-byte message through a ring of frames laid out as salias lays out a
//! `FifoMpsc<Msg64>` channel's: the least any transport with salias's frame can do. Each
//! direction has a ring of 80-byte frames back to back (a commit word, a length word, 64
//! payload bytes), so every message moves on to lines the other core read one lap ago,
//! and most frames straddle two lines, as salias's do. The sender writes the payload and
//! the length, then stores the commit word (the frame's position under a key, as
//! salias's) with Release; it asks for ownership of the lines 2 KiB ahead whenever it
//! enters a new 1 KiB block. The receiver asks for the line after the commit word's
//! before each look, spins on the commit word with Acquire, reads the payload and echoes
//! it the same way. Nothing else: no validation, cursor, health check or wait strategy.
//!
//! Against the 64-byte message floor ([`crate::message_floor`], a line each way), it
//! shows what moving along a ring costs; against it, salias's ping-pong shows what
//! salias's code costs. Timed like [`crate::floor`]: one way is the round trip / 2, by
//! the latency clock ([`crate::clock::latency`]).
//!
//! The rings live in a [`crate::shm::ShmFile`] of [`FILE_BYTES`] for processes
//! ([`rings`]), or in this process for [`between_threads`].

use std::sync::atomic::{AtomicU64, Ordering};

use crate::cores::{PinError, on_two_cores};
use crate::shm::ShmFile;
use crate::trips::TripTimer;

/// Words in a frame: the commit word, the length word and eight payload words.
const FRAME_WORDS: usize = 10;
/// A frame's bytes: salias's 16-byte header and a 64-byte message.
pub const FRAME_BYTES: usize = FRAME_WORDS * 8;
/// One ring's bytes: the most 80-byte frames that fit in 1 MiB (salias's default ring),
/// so that frames tile the ring and none wraps.
pub const RING_BYTES: usize = (1 << 20) / FRAME_BYTES * FRAME_BYTES;
const _: () = assert!(RING_BYTES.is_multiple_of(FRAME_BYTES) && RING_BYTES + FRAME_BYTES > 1 << 20);

/// The shared file of both rings: the ping ring from byte 0, the pong ring from 1 MiB.
pub const FILE_BYTES: usize = 2 << 20;
/// The payload length every frame declares.
const PAYLOAD_BYTES: u64 = 64;
/// Mixed into a commit word, so that a zeroed ring holds no committed frame.
const COMMIT_KEY: u64 = 0x5a11_a5c0_ffee_0001;
/// How far ahead the sender asks for lines, in blocks of how many bytes (salias's).
const PREFETCH_AHEAD: usize = 2048;
const PREFETCH_BLOCK: usize = 1024;
/// A cache line.
const LINE: usize = 64;

/// One direction's ring: `RING_BYTES / 8` words, 64-byte aligned.
pub type Ring = [AtomicU64];

/// The ping and pong rings of a [`FILE_BYTES`] shared file.
///
/// # Panics
/// If the file is shorter than [`FILE_BYTES`]: a harness's own layout error.
pub fn rings(file: &ShmFile) -> (&Ring, &Ring) {
    assert!(
        file.len() >= FILE_BYTES,
        "the ring floor needs {FILE_BYTES} bytes, the file has {}",
        file.len()
    );
    let words = RING_BYTES / 8;
    let half = (1 << 20) / 8;
    // SAFETY: both rings lie inside the mapping (checked above), which is page aligned and
    // lives as long as `file`; every process of the run accesses these words only as
    // atomics.
    unsafe {
        let base = file.as_ptr().cast::<AtomicU64>();
        (
            std::slice::from_raw_parts(base, words),
            std::slice::from_raw_parts(base.add(half), words),
        )
    }
}

/// Payload word `k` of message `seq`: a different value in every word and message, so an
/// echo that skipped or tore a word shows.
#[inline(always)]
fn word(seq: u64, k: usize) -> u64 {
    seq.rotate_left(k as u32 * 8) ^ k as u64
}

/// The frame of message `seq`: its first word's index and the position its commit word
/// names.
#[inline(always)]
fn frame(seq: u64) -> (usize, u64) {
    let pos = seq * FRAME_BYTES as u64;
    ((pos % RING_BYTES as u64) as usize / 8, pos)
}

/// Sends `payload` as message `seq` on `ring`.
#[inline(always)]
fn send(ring: &Ring, seq: u64, payload: &[u64; 8]) {
    let (at, pos) = frame(seq);
    let byte = at * 8;
    if byte / PREFETCH_BLOCK != (byte + FRAME_BYTES) / PREFETCH_BLOCK {
        let ahead = ((byte + FRAME_BYTES) / PREFETCH_BLOCK * PREFETCH_BLOCK + PREFETCH_AHEAD) % RING_BYTES;
        for line in (ahead..(ahead + PREFETCH_BLOCK).min(RING_BYTES)).step_by(LINE) {
            crate::prefetch::for_write(ring[line / 8].as_ptr().cast());
        }
    }
    for (k, value) in payload.iter().enumerate() {
        ring[at + 2 + k].store(*value, Ordering::Relaxed);
    }
    ring[at + 1].store(PAYLOAD_BYTES, Ordering::Relaxed);
    // SYNC POINT ring-floor-commit (Release side): pairs with the Acquire load in
    // `receive`; the payload and length written above are visible with it.
    ring[at].store(pos ^ COMMIT_KEY, Ordering::Release);
}

/// Waits for message `seq` on `ring` and returns its payload.
#[inline(always)]
fn receive(ring: &Ring, seq: u64) -> [u64; 8] {
    let (at, pos) = frame(seq);
    let next_line = (at * 8 / LINE + 1) * LINE % RING_BYTES;
    loop {
        crate::prefetch::for_read(ring[next_line / 8].as_ptr().cast());
        // SYNC POINT ring-floor-commit (Acquire side): pairs with `send`.
        if ring[at].load(Ordering::Acquire) == pos ^ COMMIT_KEY {
            break;
        }
        std::hint::spin_loop();
    }
    std::array::from_fn(|k| ring[at + 2 + k].load(Ordering::Relaxed))
}

/// The ponger: echoes messages 0, 1, … `count - 1` from `ping` to `pong`, payload and all.
pub fn pong(ping: &Ring, pong: &Ring, count: u64) {
    for seq in 0..count {
        let payload = receive(ping, seq);
        send(pong, seq, &payload);
    }
}

/// The pinger: `count` round trips against [`pong`]; returns them in ns, in the order
/// taken, one stamp per trip ([`TripTimer`]).
/// Panics if an echo's payload is not the message sent: a floor that checks nothing may
/// be measuring nothing.
pub fn round_trips(ping: &Ring, pong: &Ring, count: u64) -> Vec<u64> {
    let mut timer = TripTimer::start(count);
    for seq in 0..count {
        send(ping, seq, &std::array::from_fn(|k| word(seq, k)));
        let echo = receive(pong, seq);
        timer.lap(true);
        let wrong = echo
            .iter()
            .enumerate()
            .fold(0, |wrong, (k, w)| wrong | (w ^ word(seq, k)));
        assert_eq!(
            wrong, 0,
            "the ring floor's echo of message {seq} differs from what was sent"
        );
    }
    timer.into_trips()
}

/// One line of the rings `with_local_rings` makes: 64-byte aligned, as a mapping's lines are.
#[repr(C, align(64))]
struct Lines([AtomicU64; 8]);

/// Runs `f` on a ping and a pong ring in this process's memory.
fn with_local_rings<R>(f: impl FnOnce(&Ring, &Ring) -> R) -> R {
    let lines: Vec<Lines> = (0..(2 * RING_BYTES).div_ceil(LINE))
        .map(|_| Lines(Default::default()))
        .collect();
    // SAFETY: `Lines` is eight atomics in a row with no padding (64 bytes, align 64), so
    // the vector holds at least `2 * RING_BYTES / 8` atomics in a row (its length rounds
    // up), which live as long as it.
    let words = unsafe { std::slice::from_raw_parts(lines.as_ptr().cast::<AtomicU64>(), 2 * RING_BYTES / 8) };
    let (ping, pong) = words.split_at(RING_BYTES / 8);
    f(ping, pong)
}

/// The ring floor between cores `a` (pinger) and `b` (ponger), measured by two threads
/// of this process pinned to them: `count` round trips in ns.
pub fn between_threads(a: usize, b: usize, count: u64) -> Result<Vec<u64>, PinError> {
    with_local_rings(|ping, back| on_two_cores(a, b, || round_trips(ping, back, count), || pong(ping, back, count)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_tile_the_ring_and_straddle_lines_as_salias_frames_do() {
        // Message 1 starts at byte 80: on line 1, its payload running into line 2.
        assert_eq!(frame(1), (10, 80));
        let last = RING_BYTES as u64 / FRAME_BYTES as u64;
        assert_eq!(frame(last), (0, RING_BYTES as u64), "a lap later, the same place");
    }

    #[test]
    fn every_round_trip_is_recorded_over_more_than_a_lap() {
        let cores = crate::cores::cores();
        let laps = 2 * (RING_BYTES / FRAME_BYTES) as u64 + 7;
        let trips = between_threads(0, cores - 1, laps).unwrap();
        assert_eq!(trips.len() as u64, laps);
        assert!(between_threads(0, usize::MAX, 10).is_err());
    }

    #[test]
    #[should_panic(expected = "differs from what was sent")]
    fn a_torn_echo_is_caught() {
        with_local_rings(|ping, back| {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let mut payload = receive(ping, 0);
                    payload[7] ^= 1;
                    send(back, 0, &payload);
                });
                round_trips(ping, back, 1);
            })
        });
    }
}
