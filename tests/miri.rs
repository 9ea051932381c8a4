//! The ring protocol under Miri: salias's own ring views (`Ring`) and protocol functions
//! (`salias::protocol`) run by a publisher and a subscriber thread on a heap-backed ring,
//! so Miri's data-race detector and its checks of every pointer and reference see each
//! access a channel makes to a ring:
//!
//! - a tethered subscriber borrowing payloads in place (`Ring::payload`) while the
//!   publisher writes the frames after them, with whole-word and `memcpy` payloads;
//! - a lossy subscriber copying frames out (`Ring::copy_out`) while the publisher laps it
//!   and overwrites them, which is defined only because both sides access the words
//!   atomically: a copy the frontier check accepts must also be whole.
//!
//! Loom (`tests/loom.rs`) explores the interleavings of the orderings; these models check
//! what loom cannot: that the real view code forms no reference, and makes no access, that
//! the memory model does not define. They also run in the plain test suite.
//!
//! Run: `scripts/miri` (nightly Miri; `cargo +nightly miri test --test miri`).

use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::thread;

use salias::__private::{Ring, Shape, Writable};
use salias::protocol::{self, OverwriteWords};

const CAPACITY: usize = 4096;
/// Few enough for Miri, enough to wrap the ring several times.
const MESSAGES: u64 = if cfg!(miri) { 150 } else { 20_000 };

/// The "double view" a channel maps twice: here two pages of heap, so a frame that starts
/// near the end of the first continues into the second, as it does in a channel.
#[repr(C, align(4096))]
struct Page([u8; CAPACITY]);

struct HeapRing {
    pages: NonNull<[Page; 2]>,
}

// SAFETY: the pages are only accessed through ring views, as a channel's mapping is.
unsafe impl Send for HeapRing {}
// SAFETY: as above.
unsafe impl Sync for HeapRing {}

impl HeapRing {
    fn new() -> Arc<Self> {
        let pages = Box::new([Page([0; CAPACITY]), Page([0; CAPACITY])]);
        Arc::new(HeapRing {
            pages: NonNull::from(Box::leak(pages)),
        })
    }

    /// The ring's writable view; the caller is its one writer.
    fn view(&self) -> Ring<Writable> {
        // SAFETY: two page-aligned pages, alive as long as `self` (each thread holds the
        // `Arc`); only the publisher thread uses the writable methods.
        unsafe { Ring::new(self.pages.cast(), CAPACITY).writable() }
    }
}

impl Drop for HeapRing {
    fn drop(&mut self) {
        // SAFETY: made by `Box::leak` in `new`; every view is gone with the threads.
        drop(unsafe { Box::from_raw(self.pages.as_ptr()) });
    }
}

/// Message `seq` of `len` bytes: every byte says which message it belongs to, so a torn
/// copy (parts of two laps) shows.
fn message(seq: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (seq as u8).wrapping_mul(31).wrapping_add(i as u8))
        .collect()
}

/// Alternating whole-word and ragged sizes, short and past four cache lines: both of the
/// publisher's copy paths.
fn len_of(seq: u64) -> usize {
    [64, 13, 8, 300, 256][(seq % 5) as usize]
}

#[test]
fn a_tethered_subscriber_borrows_frames_the_publisher_does_not_touch() {
    let ring = HeapRing::new();
    let shape = Shape::new(false, 8, None);
    let cursor = Arc::new(AtomicU64::new(0));
    let tail = Arc::new(AtomicU64::new(0));
    let publisher = {
        let (ring, cursor, tail_word) = (ring.clone(), cursor.clone(), tail.clone());
        thread::spawn(move || {
            let view = ring.view();
            let (mut tail, mut limit) = (0u64, 0u64);
            for seq in 0..MESSAGES {
                let bytes = message(seq, len_of(seq));
                let frame = shape.len(bytes.len()) as u64;
                while tail + frame > limit {
                    limit = protocol::write_limit(tail, CAPACITY as u64, CAPACITY as u64, false, [&*cursor]).unwrap();
                    thread::yield_now();
                }
                // SAFETY: `[tail, tail + frame)` is below the limit the subscriber's cursor
                // allows, so it holds no frame the subscriber still borrows; not committed.
                unsafe {
                    view.write_payload(tail, shape, &bytes);
                    view.write_header(tail, shape, bytes.len(), seq);
                }
                protocol::commit_frame(view.commit_word(tail), tail);
                tail += frame;
                protocol::report_tail(&*tail_word, tail);
            }
        })
    };
    let view = ring.view().read_only();
    let mut head = 0u64;
    for seq in 0..MESSAGES {
        // As a tethered subscriber reads: the frame's address once, then its words.
        let frame = view.frame(head);
        while !protocol::is_committed(frame.commit_word(), head) {
            thread::yield_now();
        }
        let header = frame.header(shape);
        assert_eq!(header.len, len_of(seq), "message {seq}'s length");
        // SAFETY: committed (Acquire above), its length checked, and the cursor holds the
        // publisher off it until the release below.
        let payload = unsafe { frame.payload(shape, header.len) };
        assert_eq!(payload, &message(seq, header.len)[..], "message {seq}");
        head += shape.len(header.len) as u64;
        protocol::release(&*cursor, head);
    }
    publisher.join().unwrap();
    assert_eq!(protocol::reported_tail(&*tail), head);
}

#[test]
fn a_lossy_copy_of_a_frame_being_overwritten_is_defined_and_never_accepted_torn() {
    let ring = HeapRing::new();
    let shape = Shape::new(false, 8, None);
    // Whole words up to four lines: the sizes the publisher stores atomically.
    const LEN: usize = 64;
    let frame = shape.len(LEN) as u64;
    let words = Arc::new(OverwriteWords::<AtomicU64>::default());
    let tail = Arc::new(AtomicU64::new(0));
    let publisher = {
        let (ring, words, tail_word) = (ring.clone(), words.clone(), tail.clone());
        thread::spawn(move || {
            let view = ring.view();
            let (mut tail, mut frontier) = (0u64, 0u64);
            for seq in 0..MESSAGES {
                if tail + frame > frontier {
                    // A quarter ring at a time, as a channel's publisher steps it.
                    frontier = tail + frame + CAPACITY as u64 / 4;
                    protocol::advance_frontier(&words, frontier, tail, seq);
                }
                // SAFETY: no subscriber borrows frames of this ring (it only copies them),
                // and the frame is below the frontier just published; not committed.
                unsafe {
                    view.write_payload(tail, shape, &message(seq, LEN));
                    view.write_header(tail, shape, LEN, seq);
                }
                protocol::commit_frame(view.commit_word(tail), tail);
                tail += frame;
                protocol::report_tail(&*tail_word, tail);
                if seq % 8 == 0 {
                    thread::yield_now();
                }
            }
        })
    };
    let view = ring.view().read_only();
    let (mut head, mut accepted, mut overrun) = (0u64, 0u64, 0u64);
    let mut copy = [0u8; LEN];
    while head < MESSAGES * frame {
        if !protocol::is_committed(view.commit_word(head), head) {
            if protocol::overwritten(&words.frontier, head, CAPACITY as u64) {
                // Lapped: start again at the publisher's tail, as a rejoin does.
                overrun += 1;
                head = protocol::reported_tail(&*tail);
            } else if publisher.is_finished() && protocol::reported_tail(&*tail) <= head {
                break;
            } else {
                thread::yield_now();
            }
            continue;
        }
        let header = view.racing_header(head, shape);
        view.copy_out(head, shape, &mut copy);
        if protocol::overwritten(&words.frontier, head, CAPACITY as u64) {
            overrun += 1;
            head = protocol::reported_tail(&*tail);
            continue;
        }
        let seq = head / frame;
        assert_eq!(header.len, LEN, "frame at {head}");
        assert_eq!(
            copy,
            &message(seq, LEN)[..],
            "an accepted copy of message {seq} is torn"
        );
        accepted += 1;
        head += frame;
    }
    publisher.join().unwrap();
    assert!(accepted > 0, "the reader accepted nothing ({overrun} overruns)");
}
