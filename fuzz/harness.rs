//! Fuzzing how salias reads shared memory it does not trust. Each input builds a small,
//! valid channel of one of the four kinds with some messages in it, patches its control
//! block and rings with values taken from the input (the frame headers, cursors, progress,
//! counters and geometry a crashed or hostile peer could leave behind), then connects,
//! attaches and reads and publishes a bounded number of times.
//!
//! Errors are the expected outcome; a panic, crash or hang is a bug. Shared by the
//! `shared_memory` fuzz target and `tests/fuzz_corpus.rs`, which replays the committed
//! corpus on every `cargo test`.

use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::MmapMut;
use salias::__private::{RawOffsets, shm_object_names};
use salias::{Bytes, Channel, Config, Fanout, Fifo, Mpsc, Ordered, SaliasMessage, kind::Mode, kind::Topology};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Tick {
    seq: u64,
    value: u64,
}

const CAPACITY: usize = 4096;
const PRODUCERS: u32 = 2;
/// Bytes per patch: target (1), offset (2), value (8).
const PATCH: usize = 11;

fn unique_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("fuzz-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

fn map(object: &str) -> Option<MmapMut> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/dev/shm{object}"))
        .ok()?;
    // SAFETY: the harness owns the channel; it writes plain integers through this map, as
    // a hostile peer would.
    unsafe { MmapMut::map_mut(&file).ok() }
}

/// Applies `data`'s patches to the channel's raw objects.
fn patch(name: &str, data: &[u8]) {
    let [control, rings] = shm_object_names(name);
    let (Some(mut control), Some(mut rings)) = (map(&control), map(&rings)) else {
        return;
    };
    for chunk in data.chunks_exact(PATCH) {
        let offset = u16::from_le_bytes([chunk[1], chunk[2]]) as usize;
        let value = u64::from_le_bytes(chunk[3..11].try_into().unwrap());
        let target: &mut [u8] = if chunk[0] % 2 == 0 { &mut control } else { &mut rings };
        // Mostly aligned words (where the protocol's fields are), sometimes anywhere.
        let at = if chunk[0] % 4 < 2 { offset & !7 } else { offset } % (target.len() - 8);
        target[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }
}

fn exercise<M: Mode, K: Topology>(messages: u64, data: &[u8]) {
    let name = unique_name();
    let subscribers = if K::FANOUT { 2 } else { 1 };
    let config = Config::new(&name)
        .capacity(CAPACITY)
        .publishers(PRODUCERS)
        .subscribers(subscribers);
    let Ok(owner) = Channel::<Tick, M, K>::create(&config) else {
        return;
    };
    let mut early = owner.subscriber().ok();
    if let Ok(mut publisher) = owner.publisher() {
        for seq in 0..messages {
            let _ = publisher.offer(&Tick { seq, value: seq * 3 });
        }
    }
    patch(&name, data);

    // Handles made before the damage, and a fresh process-view made after it.
    if let Some(subscriber) = early.as_mut() {
        for _ in 0..64 {
            let _ = subscriber.try_recv().map(|m| m.map(|t| std::hint::black_box(t.value)));
        }
        let _ = subscriber.drain(64, |_, t| {
            std::hint::black_box(t.seq);
        });
    }
    if let Ok(peer) = Channel::<Tick, M, K>::connect(&name) {
        if let Ok(mut publisher) = peer.publisher() {
            for seq in 0..64 {
                let _ = publisher.offer(&Tick { seq, value: 0 });
            }
        }
        drop(early.take());
        if let Ok(mut subscriber) = peer.subscriber() {
            for _ in 0..64 {
                let _ = subscriber.try_recv().map(|m| m.map(|t| std::hint::black_box(t.seq)));
            }
        }
        let _ = peer.reap();
    }
    // Raw view of the same damage.
    if let Ok(raw) = Channel::<Bytes, M, K>::connect_as_bytes(&name)
        && let Ok(mut subscriber) = raw.subscriber()
    {
        let _ = subscriber.drain(64, |_, bytes| {
            std::hint::black_box(bytes.len());
        });
    }
}

/// Runs one fuzz input.
pub fn run(data: &[u8]) {
    // A forged "still initialising" channel would make every such input wait 2 s.
    salias::__private::set_connect_init_wait(std::time::Duration::from_millis(5));
    let Some((&head, patches)) = data.split_first() else {
        return;
    };
    let messages = (head >> 2) as u64;
    match head % 4 {
        0 => exercise::<Fifo, Mpsc>(messages, patches),
        1 => exercise::<Fifo, Fanout>(messages, patches),
        2 => exercise::<Ordered, Mpsc>(messages, patches),
        _ => exercise::<Ordered, Fanout>(messages, patches),
    }
}

/// Control-block offsets worth aiming at (used by `tests/fuzz_corpus.rs`, not the fuzzer).
#[allow(dead_code)]
pub fn interesting_offsets() -> Vec<usize> {
    let o = RawOffsets::new(PRODUCERS, 2);
    let mut offsets = vec![
        o.state,
        o.owner,
        o.magic,
        o.layout_version,
        o.capacity,
        o.publishers,
        o.control_len,
        o.sequence,
    ];
    for p in 0..PRODUCERS as usize {
        offsets.push(o.publisher_slot + p * o.publisher_slot_size + o.progress_tail);
        offsets.push(o.publisher_slot + p * o.publisher_slot_size + o.progress_pending);
    }
    for c in 0..(2 * PRODUCERS as usize) {
        offsets.push(o.cursors + c * o.cursor_size);
    }
    offsets
}
