//! The machine's floors: a minimal SPSC ring in a shared mapping (throughput) and a bare
//! cache-line ping-pong (latency).

use std::sync::atomic::Ordering;

use crate::message::Msg64;
use crate::pingpong::{PING_WARMUP, ping_loop, report_pings};
use crate::platform::now_ns;
use crate::roles::{ChildArgs, report_publisher, report_subscriber};
use crate::shm::{Barrier, ShmFile};
use crate::throughput::{BATCH, POLL_LIMIT};
use crate::verification::Verifier;

// ---- the SPSC floor: a minimal Lamport ring with cached indices and batched publication

/// Layout: word 0 tail (producer), word 16 head (consumer), slots from byte 256.
pub const SPSC_SLOTS_OFFSET: usize = 256;

pub fn spsc_path(name: &str) -> String {
    format!("/dev/shm/{name}.spsc")
}

pub fn spsc_publisher(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let ring = ShmFile::open(&spsc_path(name));
    let slots = (a.param as usize) / 64;
    let mask = slots as u64 - 1;
    let base = ring.map.as_ptr() as *mut Msg64;
    let (tail_word, head_word) = (ring.word(0), ring.word(16));
    let (mut tail, mut published, mut cached_head) = (0u64, 0u64, 0u64);
    let (mut attempts, mut refused) = (0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while tail < a.messages {
        attempts += 1;
        if tail - cached_head == slots as u64 {
            cached_head = head_word.load(Ordering::Acquire);
            if tail - cached_head == slots as u64 {
                if published != tail {
                    tail_word.store(tail, Ordering::Release);
                    published = tail;
                }
                refused += 1;
                std::hint::spin_loop();
                continue;
            }
        }
        // SAFETY: slot `tail & mask` is free (tail - head < slots) and inside the mapping.
        unsafe {
            base.byte_add(SPSC_SLOTS_OFFSET)
                .add((tail & mask) as usize)
                .write(Msg64::new(a.index, tail))
        };
        tail += 1;
        if tail - published >= BATCH as u64 {
            tail_word.store(tail, Ordering::Release);
            published = tail;
        }
    }
    tail_word.store(tail, Ordering::Release);
    let elapsed = now_ns() - started;
    report_publisher(a.index, elapsed, attempts, refused);
    barrier.wait_subscribers_done(1);
}

pub fn spsc_subscriber(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let ring = ShmFile::open(&spsc_path(name));
    let slots = (a.param as usize) / 64;
    let mask = slots as u64 - 1;
    let base = ring.map.as_ptr() as *const Msg64;
    let (tail_word, head_word) = (ring.word(0), ring.word(16));
    let (mut head, mut cached_tail) = (0u64, 0u64);
    let mut v = Verifier::new(1);
    barrier.arrive_and_wait();
    let started = now_ns();
    while v.received < a.messages {
        if head == cached_tail {
            cached_tail = tail_word.load(Ordering::Acquire);
            if head == cached_tail {
                std::hint::spin_loop();
                continue;
            }
        }
        let end = cached_tail.min(head + POLL_LIMIT as u64);
        while head < end {
            // SAFETY: head < tail (published with Release, read with Acquire): the slot is
            // written and will not be overwritten until `head` moves past it.
            let m = unsafe { base.byte_add(SPSC_SLOTS_OFFSET).add((head & mask) as usize).read() };
            v.check(&m);
            head += 1;
        }
        head_word.store(head, Ordering::Release);
    }
    let elapsed = now_ns() - started;
    v.finish(1, a.messages);
    report_subscriber(a.index, elapsed, v.received);
    barrier.subscriber_done();
}

/// The bare cache-line floor: word 2 carries pings, word 3 pongs (one cache line, as in
/// benches/ipc.rs).
pub fn floor_pinger(a: &ChildArgs, barrier: &Barrier) {
    barrier.arrive_and_wait();
    let (ping, pong) = (barrier.word(2), barrier.word(3));
    let samples = ping_loop(a.messages, |seq| {
        ping.store(seq + 1, Ordering::Release);
        while pong.load(Ordering::Acquire) != seq + 1 {
            std::hint::spin_loop();
        }
        Msg64::new(0, seq)
    });
    report_pings(&samples);
}

pub fn floor_ponger(a: &ChildArgs, barrier: &Barrier) {
    barrier.arrive_and_wait();
    let (ping, pong) = (barrier.word(2), barrier.word(3));
    for i in 1..=a.messages + PING_WARMUP {
        while ping.load(Ordering::Acquire) != i {
            std::hint::spin_loop();
        }
        pong.store(i, Ordering::Release);
    }
    barrier.subscriber_done();
}
