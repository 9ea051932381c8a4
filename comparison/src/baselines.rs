//! The machine's floors: a minimal SPSC ring in a shared mapping (throughput), the bare
//! cache-line ping-pong of `support::floor` and the 64-byte message ping-pong of
//! `support::message_floor` (latency).

use std::sync::atomic::Ordering;

use support::barrier::Barrier;
use support::shm::{ShmError, ShmFile};
use support::{floor, message_floor};

use crate::message::Msg64;
use crate::pingpong::{PING_WARMUP, report_round_trips};
use crate::roles::Params;
use crate::throughput::{BATCH, POLL_LIMIT, drain, flood};

// ---- the SPSC floor: a minimal Lamport ring with cached indices and batched publication

/// Layout: word 0 tail (producer), word 16 head (consumer), slots from byte 256.
const SLOTS_OFFSET: usize = 256;
const TAIL: usize = 0;
const HEAD: usize = 16;

fn ring_name(name: &str) -> String {
    format!("{name}.spsc")
}

/// The parent creates run `name`'s ring of `bytes` (a power of two, >= 64).
pub fn spsc_ring(name: &str, bytes: u64) -> Result<ShmFile, ShmError> {
    ShmFile::create(&ring_name(name), SLOTS_OFFSET + bytes as usize)
}

/// The ring's first slot and its index mask.
fn slots(ring: &ShmFile, bytes: u64) -> (*mut Msg64, u64) {
    let slots = bytes / 64;
    // SAFETY: the mapping is SLOTS_OFFSET + bytes long (`spsc_ring`), so the slots start
    // inside it; page aligned + 256 keeps them 64-byte aligned.
    let base = unsafe { ring.as_ptr().add(SLOTS_OFFSET) } as *mut Msg64;
    (base, slots - 1)
}

pub fn spsc_publisher(a: &Params, barrier: &Barrier) {
    let ring = ShmFile::open(&ring_name(&a.name)).expect("open the SPSC floor's ring");
    let (base, mask) = slots(&ring, a.param);
    let size = mask + 1;
    let (tail_word, head_word) = (ring.word(TAIL), ring.word(HEAD));
    let (mut published, mut cached_head) = (0u64, 0u64);
    let last = a.messages;
    let result = flood(a, barrier, |tail| {
        if tail - cached_head == size {
            // SYNC POINT head: pairs with the subscriber's Release store of `head`; the
            // slots below it are read and may be overwritten.
            cached_head = head_word.load(Ordering::Acquire);
            if tail - cached_head == size {
                if published != tail {
                    // SYNC POINT tail: pairs with the subscriber's Acquire load of `tail`.
                    tail_word.store(tail, Ordering::Release);
                    published = tail;
                }
                return 0;
            }
        }
        // SAFETY: slot `tail & mask` is free (tail - head < slots) and inside the mapping.
        unsafe { base.add((tail & mask) as usize).write(Msg64::new(a.index, tail)) };
        let next = tail + 1;
        if next - published >= BATCH as u64 || next == last {
            // SYNC POINT tail: as above; the slots below `next` are written.
            tail_word.store(next, Ordering::Release);
            published = next;
        }
        1
    });
    result.report(barrier);
}

pub fn spsc_subscriber(a: &Params, barrier: &Barrier) {
    let ring = ShmFile::open(&ring_name(&a.name)).expect("open the SPSC floor's ring");
    let (base, mask) = slots(&ring, a.param);
    let (tail_word, head_word) = (ring.word(TAIL), ring.word(HEAD));
    let (mut head, mut cached_tail) = (0u64, 0u64);
    drain(a, barrier, |verifier| {
        if head == cached_tail {
            // SYNC POINT tail: pairs with the publisher's Release stores of `tail`.
            cached_tail = tail_word.load(Ordering::Acquire);
            if head == cached_tail {
                std::hint::spin_loop();
                return;
            }
        }
        let end = cached_tail.min(head + POLL_LIMIT as u64);
        while head < end {
            // SAFETY: head < tail (published with Release, read with Acquire): the slot is
            // written and will not be overwritten until `head` moves past it.
            let m = unsafe { base.add((head & mask) as usize).read() };
            verifier.check(&m);
            head += 1;
        }
        // SYNC POINT head: pairs with the publisher's Acquire load of `head`.
        head_word.store(head, Ordering::Release);
    });
}

// ---- the cache-line floor, between two processes

pub fn floor_pinger(a: &Params, barrier: &Barrier) {
    let (ping, pong) = barrier.floor_line();
    barrier.arrive_and_wait();
    report_round_trips(floor::round_trips(ping, pong, PING_WARMUP, a.messages));
}

pub fn floor_ponger(a: &Params, barrier: &Barrier) {
    let (ping, pong) = barrier.floor_line();
    barrier.arrive_and_wait();
    floor::pong(ping, pong, PING_WARMUP + a.messages);
    barrier.done();
}

// ---- the 64-byte message floor, between two processes

pub fn message_floor_pinger(a: &Params, barrier: &Barrier) {
    let (ping, pong) = barrier.message_lines();
    barrier.arrive_and_wait();
    report_round_trips(message_floor::round_trips(ping, pong, PING_WARMUP, a.messages));
}

pub fn message_floor_ponger(a: &Params, barrier: &Barrier) {
    let (ping, pong) = barrier.message_lines();
    barrier.arrive_and_wait();
    message_floor::pong(ping, pong, PING_WARMUP + a.messages);
    barrier.done();
}
