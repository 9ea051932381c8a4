//! Shared memory written by a buggy or hostile peer: every case ends in an error or a
//! skipped frame, never a crash, a hang, or an out-of-bounds access. The tests map the
//! channel's objects themselves and scribble on them, deterministically and at random.
#![cfg(target_os = "linux")]

mod support;

use std::time::{Duration, Instant};

use memmap2::MmapMut;
use salias::__private::{RawOffsets, shm_object_names};
use salias::{Config, Error, FifoMpsc, OrderedMpsc, PublishError, RawFifoMpsc, ReceiveError};
use support::{Sample, SplitMix, arg, report, role, spawn, unique_name, wait_all};

/// The channel's control block and rings, mapped writable behind salias's back.
struct Raw {
    control: MmapMut,
    rings: MmapMut,
    offsets: RawOffsets,
}

impl Raw {
    fn open(name: &str, producers: u32, subscribers: u32) -> Raw {
        let [control, rings] = shm_object_names(name);
        let map = |object: &str| {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(format!("/dev/shm{object}"))
                .unwrap();
            // SAFETY: the test owns the channel; concurrent writers are the point of the test,
            // and the test only reads and writes plain integers through this map.
            unsafe { MmapMut::map_mut(&file).unwrap() }
        };
        Raw {
            control: map(&control),
            rings: map(&rings),
            offsets: RawOffsets::new(producers, subscribers),
        }
    }

    fn put(map: &mut MmapMut, at: usize, value: u64) {
        map[at..at + 8].copy_from_slice(&value.to_ne_bytes());
    }

    fn set_control(&mut self, at: usize, value: u64) {
        Self::put(&mut self.control, at, value);
    }

    fn set_ring(&mut self, at: usize, value: u64) {
        Self::put(&mut self.rings, at, value);
    }

    fn cursor(&self, subscriber: usize, producers: usize, producer: usize) -> usize {
        self.offsets.cursors + (subscriber * producers + producer) * self.offsets.cursor_size
    }

    fn progress_tail(&self, producer: usize) -> usize {
        self.offsets.publisher_slot + producer * self.offsets.publisher_slot_size + self.offsets.progress_tail
    }
}

fn corrupt_what(result: Result<impl std::fmt::Debug, Error>) -> String {
    match result {
        Err(Error::Corrupt { what, .. }) => what,
        other => panic!("expected a corruption error, got {other:?}"),
    }
}

/// The `what` of a publish's or receive's corruption: the call must have returned the
/// small `corrupt` error, and the handle's `fault()` the full `Error::Corrupt`.
fn fault_what<E: PartialEq + std::fmt::Debug>(
    result: Result<impl std::fmt::Debug, E>,
    corrupt: E,
    fault: Option<Error>,
) -> String {
    match result {
        Err(e) if e == corrupt => corrupt_what(Err::<(), _>(fault.expect("a corrupt call records its fault"))),
        other => panic!("expected {corrupt:?}, got {other:?}"),
    }
}

/// Polls until the subscriber reports corruption; a delivered message or ten seconds of
/// silence fail the test.
fn until_corrupt<T: salias::message::Payload, M: salias::kind::Mode, K: salias::kind::Topology>(
    subscriber: &mut salias::Subscriber<T, M, K>,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match subscriber.try_recv().map(|m| m.is_some()) {
            Ok(false) => {
                assert!(Instant::now() < deadline, "the subscriber never noticed");
                std::thread::sleep(Duration::from_micros(10));
            }
            Ok(true) => panic!("a damaged frame was delivered"),
            Err(e) => return fault_what(Err::<(), _>(e), ReceiveError::Corrupt, subscriber.fault()),
        }
    }
}

#[test]
fn frame_length_past_the_ring_is_an_error() {
    let name = unique_name("hostile-len");
    let channel = RawFifoMpsc::create(&Config::new(&name).capacity(4096).max_message_size(100)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    publisher.offer(b"abc").unwrap();
    for length in [101u64, 5000, u32::MAX as u64] {
        // The length field shares a word with the reserved flags.
        raw.set_ring(raw.offsets.frame_len, length);
        let received = subscriber.try_recv().map(|m| m.map(|m| m.len()));
        let what = fault_what(received, ReceiveError::Corrupt, subscriber.fault());
        assert!(what.contains(&format!("declaring {length} bytes")), "{what}");
    }
    raw.set_ring(raw.offsets.frame_len, 3);
    assert_eq!(&*subscriber.try_recv().unwrap().unwrap(), b"abc");
}

#[test]
fn typed_frame_of_the_wrong_size_is_an_error() {
    let name = unique_name("hostile-typed");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    channel.publisher().unwrap().offer(&Sample::new(0, 0)).unwrap();
    raw.set_ring(raw.offsets.frame_len, 63);
    let mut subscriber = channel.subscriber().unwrap();
    let received = subscriber.try_recv().map(|m| m.is_some());
    let what = fault_what(received, ReceiveError::Corrupt, subscriber.fault());
    assert!(
        what.contains("declaring 63 bytes, but this channel's messages are exactly 64"),
        "{what}"
    );
}

/// A `Sample` channel whose third frame, behind two good ones in the same ring, declares
/// 63 bytes.
fn third_sample_frame_of_63_bytes(name: &str) -> FifoMpsc<Sample> {
    let channel = FifoMpsc::<Sample>::create(&Config::new(name)).unwrap();
    let mut raw = Raw::open(name, 1, 1);
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..4 {
        publisher.offer(&Sample::new(0, seq)).unwrap();
    }
    // A FIFO frame of a 64-byte `Sample` is 80 bytes, its 16-byte header first.
    raw.set_ring(2 * 80 + raw.offsets.frame_len, 63);
    channel
}

/// `drain` takes the frames behind the first in a run, which checks each length as the
/// search does: a typed handle's, and a raw view's of a typed channel (a length that would
/// fit the largest message, but not the type's), stop there, and the search reports it.
#[test]
fn frame_of_the_wrong_size_ends_a_drain_with_an_error() {
    let name = unique_name("hostile-typed-drain");
    let channel = third_sample_frame_of_63_bytes(&name);
    let mut subscriber = channel.subscriber().unwrap();
    let mut handed_out = Vec::new();
    let drained = subscriber.drain(16, |_, sample| handed_out.push(sample.seq));
    let what = fault_what(drained, ReceiveError::Corrupt, subscriber.fault());
    assert!(what.contains("at position 160 declaring 63 bytes"), "{what}");
    assert_eq!(handed_out, [0, 1]);

    let name = unique_name("hostile-raw-view-drain");
    let _channel = third_sample_frame_of_63_bytes(&name);
    let view = FifoMpsc::<salias::Bytes>::connect_as_bytes(&name).unwrap();
    let mut subscriber = view.subscriber().unwrap();
    let mut handed_out = Vec::new();
    let drained = subscriber.drain(16, |_, bytes| handed_out.push(bytes.len()));
    let what = fault_what(drained, ReceiveError::Corrupt, subscriber.fault());
    assert!(
        what.contains("at position 160 declaring 63 bytes, but this channel's messages are exactly 64"),
        "{what}"
    );
    assert_eq!(handed_out, [64, 64]);
}

/// The same for raw frames of a channel of any size: past its largest message.
#[test]
fn raw_frame_past_the_largest_ends_a_drain_with_an_error() {
    let name = unique_name("hostile-raw-drain");
    let channel = RawFifoMpsc::create(&Config::new(&name).capacity(4096).max_message_size(100)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    let mut publisher = channel.publisher().unwrap();
    for len in [10, 20, 30, 40] {
        publisher.offer(&vec![len as u8; len]).unwrap();
    }
    // The third frame: FIFO frames are a 16-byte header and the payload, rounded up to 8.
    raw.set_ring(32 + 40 + raw.offsets.frame_len, 101);
    let mut subscriber = channel.subscriber().unwrap();
    let mut handed_out = Vec::new();
    let drained = subscriber.drain(16, |_, bytes| handed_out.push(bytes.len()));
    let what = fault_what(drained, ReceiveError::Corrupt, subscriber.fault());
    assert!(what.contains("at position 72 declaring 101 bytes"), "{what}");
    assert_eq!(handed_out, [10, 20]);
}

#[test]
fn cursor_outside_the_ring_is_an_error_for_the_publisher() {
    let name = unique_name("hostile-cursor");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name).capacity(4096)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    let cursor = raw.cursor(0, 1, 0);
    for value in [1u64 << 40, u64::MAX - 7] {
        raw.set_control(cursor, value);
        let what = corrupt_what(channel.publisher().map(|_| ()));
        assert!(what.contains(&format!("cursor in ring 0 is {value}")), "{what}");
    }
    // A position that went backwards, more than a ring behind the publisher.
    raw.set_control(cursor, 0);
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    for seq in 0..200 {
        publisher.send(&Sample::new(0, seq)).unwrap();
        assert!(subscriber.try_recv().unwrap().is_some());
    }
    drop(subscriber);
    raw.set_control(cursor, 0);
    let mut refused = None;
    for seq in 0..100 {
        if let Err(e) = publisher.offer(&Sample::new(0, seq)) {
            refused = Some(e);
            break;
        }
    }
    let refused = refused.expect("the publisher noticed the cursor");
    let what = fault_what(Err::<(), _>(refused), PublishError::Corrupt, publisher.fault());
    assert!(what.contains("cursor in ring 0 is 0"), "{what}");
}

/// Fanout: a cursor more than a ring behind is what a subscriber joining with history may
/// store for a moment (a start its publisher has lapped since it read the tail). The
/// publisher holds at its tail until the cursor moves on, as behind a slow subscriber,
/// instead of failing; a cursor ahead of it is still an error.
#[test]
fn fanout_cursor_a_ring_behind_holds_the_publisher_and_one_ahead_is_an_error() {
    let name = unique_name("hostile-fanout-cursor");
    let channel = salias::FifoFanout::<Sample>::create(&Config::new(&name).capacity(4096).subscribers(1)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    let cursor = raw.cursor(0, 1, 0);
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    for seq in 0..200 {
        publisher.send(&Sample::new(0, seq)).unwrap();
        assert_eq!(subscriber.try_recv().unwrap().map(|m| m.seq), Some(seq));
    }
    raw.set_control(cursor, 0);
    let mut seq = 200;
    let refused = loop {
        match publisher.offer(&Sample::new(0, seq)) {
            Ok(()) => seq += 1,
            Err(refused) => break refused,
        }
    };
    // Held at its next limit refresh (every quarter ring), not when the ring filled.
    assert!(seq <= 200 + 4096 / 4 / 80, "held only after {} messages", seq - 200);
    assert_eq!(refused, PublishError::Backpressured);
    // Reading releases: the cursor moves on, and so does the publisher.
    while subscriber.try_recv().unwrap().is_some() {}
    publisher.offer(&Sample::new(0, seq)).unwrap();
    raw.set_control(cursor, 1 << 40);
    let refused = loop {
        if let Err(refused) = publisher.offer(&Sample::new(0, seq)) {
            break refused;
        }
        while subscriber.try_recv().unwrap().is_some() {}
        raw.set_control(cursor, 1 << 40);
    };
    let what = fault_what(Err::<(), _>(refused), PublishError::Corrupt, publisher.fault());
    assert!(what.contains("cursor in ring 0 is 1099511627776"), "{what}");
}

#[test]
fn misaligned_cursor_is_an_error_for_the_subscriber() {
    let name = unique_name("hostile-align");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    let cursor = raw.cursor(0, 1, 0);
    raw.set_control(cursor, 3);
    let what = corrupt_what(channel.subscriber().map(|_| ()));
    assert!(what.contains("is 3, which is not a frame-aligned position"), "{what}");
    raw.set_control(cursor, 0);
    assert!(
        channel.subscriber().is_ok(),
        "the slot was released by the failed attempt"
    );
}

#[test]
fn missing_commit_below_reported_progress_is_an_error_not_a_hang() {
    let name = unique_name("hostile-stuck");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    let mut publisher = channel.publisher().unwrap();
    publisher.offer(&Sample::new(0, 0)).unwrap();
    // Overwrite the committed frame's commit word with another lap's key.
    raw.set_ring(0, 0xA5C3_5A3C_96E1_69F0 ^ (1 << 20));
    let mut subscriber = channel.subscriber().unwrap();
    let what = until_corrupt(&mut subscriber);
    assert!(
        what.contains("reports frames up to position 80, but the frame at 0 is not committed"),
        "{what}"
    );
}

#[test]
fn ordered_sequence_never_taken_is_an_error() {
    /// Scribbles a number never taken over the frame's sequence at `at` and expects the
    /// subscriber to say so.
    fn scribbled<T: salias::message::Payload>(
        channel: &salias::OrderedMpsc<T>,
        name: &str,
        at: impl Fn(&Raw) -> usize,
    ) {
        let mut raw = Raw::open(name, 1, 1);
        raw.set_ring(at(&raw), 1 << 50);
        let what = until_corrupt(&mut channel.subscriber().unwrap());
        let says = format!("carries sequence {} but only 1 were ever taken", 1u64 << 50);
        assert!(what.contains(&says), "{what}");
    }
    let name = unique_name("hostile-seq");
    let channel = OrderedMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    channel.publisher().unwrap().offer(&Sample::new(0, 0)).unwrap();
    // A typed channel's Ordered frame holds its number where others hold their length.
    scribbled(&channel, &name, |raw| raw.offsets.typed_frame_sequence);
    // A raw channel's has its length and flags word, and the number after it.
    let name = unique_name("hostile-raw-seq");
    let channel = salias::RawOrderedMpsc::create(&Config::new(&name).max_message_size(64)).unwrap();
    channel.publisher().unwrap().offer(b"abc").unwrap();
    scribbled(&channel, &name, |raw| raw.offsets.frame_sequence);
}

/// A message frame whose sequence word was given the hole's mark reads as a hole frame,
/// whose count (the message's first word) is checked as any hole's: `Corrupt`, never a
/// message passed over as lost.
#[test]
fn a_message_marked_as_a_hole_is_an_error() {
    let name = unique_name("hostile-hole-mark");
    let channel = OrderedMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    // `producer` is the payload's first word: the count the hole frame seems to declare.
    channel.publisher().unwrap().offer(&Sample::new(1 << 40, 0)).unwrap();
    raw.set_ring(raw.offsets.typed_frame_sequence, raw.offsets.typed_hole_bit);
    let mut subscriber = channel.subscriber().unwrap();
    let what = until_corrupt(&mut subscriber);
    assert!(
        what.contains(&format!(
            "declaring {} numbers lost from 0, but only 1 were ever taken",
            1u64 << 40
        )),
        "{what}"
    );
    assert_eq!(
        subscriber.gaps(),
        &salias::receive::Gaps::default(),
        "a wrong gap was reported"
    );
}

/// A sequence counter overwritten up to the hole's mark: the publisher takes the largest
/// number, then refuses the next with `Corrupt`, writing nothing and holding nothing.
#[test]
fn a_sequence_counter_past_the_largest_number_is_an_error_for_the_publisher() {
    let name = unique_name("hostile-seq-end");
    let channel = OrderedMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    let mut publisher = channel.publisher().unwrap();
    let largest = raw.offsets.typed_hole_bit - 1;
    raw.set_control(raw.offsets.sequence, largest);
    publisher.offer(&Sample::new(0, 0)).unwrap();
    let frame_word = u64::from_ne_bytes(raw.rings[raw.offsets.typed_frame_sequence..][..8].try_into().unwrap());
    assert_eq!(frame_word, largest, "the largest number is a number, not a hole");
    let pending = raw.offsets.publisher_slot + raw.offsets.progress_pending;
    let pending_word = |raw: &Raw| u64::from_ne_bytes(raw.control[pending..][..8].try_into().unwrap());
    let idle = pending_word(&raw);
    for refused in [
        publisher.offer(&Sample::new(0, 1)),
        publisher
            .offer_batch(&[Sample::new(0, 1), Sample::new(0, 2)])
            .map(|_| ()),
        publisher.publish_gap(3),
    ] {
        let what = fault_what(refused, PublishError::Corrupt, publisher.fault());
        assert!(what.contains("past the largest"), "{what}");
        assert_eq!(pending_word(&raw), idle, "the refused numbers are not held");
    }
    let written = u64::from_ne_bytes(raw.rings[80..88].try_into().unwrap());
    assert_eq!(written, 0, "nothing was committed after the largest number");
}

/// A hole frame whose count was scribbled: past the numbers ever taken, or 0. Either is
/// `Corrupt`, never a panic or a wrong gap.
#[test]
fn hole_frame_with_a_scribbled_count_is_an_error() {
    for (count, says) in [
        (
            1u64 << 40,
            format!(
                "declaring {} numbers lost from 0, but only 2 were ever taken",
                1u64 << 40
            ),
        ),
        (u64::MAX, format!("declaring {} numbers lost from 0", u64::MAX)),
        (0, "declaring 0 numbers lost from 0".to_owned()),
    ] {
        let name = unique_name("hostile-hole");
        let channel = OrderedMpsc::<Sample>::create(&Config::new(&name)).unwrap();
        let mut raw = Raw::open(&name, 1, 1);
        let mut subscriber = channel.subscriber().unwrap();
        let mut publisher = channel.publisher().unwrap();
        publisher.publish_gap(2).unwrap();
        // The count is the hole frame's payload.
        raw.set_ring(raw.offsets.ordered_payload, count);
        let what = until_corrupt(&mut subscriber);
        assert!(what.contains(&says), "{what}");
        assert_eq!(
            subscriber.gaps(),
            &salias::receive::Gaps::default(),
            "a wrong gap was reported"
        );
    }
}

#[test]
fn forged_control_block_is_refused_at_connect() {
    let name = unique_name("hostile-connect");
    let _owner = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    let offsets = raw.offsets;
    let original = |raw: &Raw, at: usize| u64::from_ne_bytes(raw.control[at..at + 8].try_into().unwrap());
    let cases: [(usize, u64, &str); 4] = [
        (
            offsets.magic,
            0x1234,
            "not a salias channel (its first bytes are not the salias magic)",
        ),
        (
            offsets.capacity,
            3 << 20,
            "its ring capacity 3145728 is not a power-of-two multiple",
        ),
        (offsets.control_len, 1 << 40, "its control block is"),
        (
            offsets.publishers,
            original(&raw, offsets.publishers) & !0xffff_ffff | 1000,
            "it declares 1000 publisher slots",
        ),
    ];
    for (at, value, says) in cases {
        let saved = original(&raw, at);
        raw.set_control(at, value);
        let err = FifoMpsc::<Sample>::connect(&name).unwrap_err();
        assert!(err.to_string().contains(says), "{err}");
        // Reading the state without connecting refuses it the same way.
        let err = salias::status::channel_status(&name).unwrap_err();
        assert!(err.to_string().contains(says), "{err}");
        raw.set_control(at, saved);
    }
    let version_word = original(&raw, offsets.layout_version);
    raw.set_control(offsets.layout_version, version_word & !0xffff_ffff | 99);
    assert!(matches!(
        FifoMpsc::<Sample>::connect(&name),
        Err(Error::VersionMismatch {
            found: 99,
            supported: 10,
            ..
        })
    ));
    raw.set_control(offsets.layout_version, version_word);
    // A channel of the other platform layer (its wake protocol recorded beside the version).
    let wake_word = original(&raw, offsets.wake_protocol);
    let other_layer = if cfg!(all(target_os = "linux", not(salias_portable))) {
        2
    } else {
        1
    };
    raw.set_control(offsets.wake_protocol, wake_word & !0xffff_ffff | other_layer);
    let err = FifoMpsc::<Sample>::connect(&name).unwrap_err();
    assert!(matches!(err, Error::PlatformMismatch { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("build every process of a channel with the same layer"),
        "{err}"
    );
    raw.set_control(offsets.wake_protocol, wake_word);
    assert!(FifoMpsc::<Sample>::connect(&name).is_ok());
}

/// A dead holder's publisher slot is freed by `reap` in one step: a claim racing the
/// reaper always finds it, never `NoFreeSlot` (it did, while the reaper held the slot for
/// a moment before freeing it, and when the slot was freed between the claim's two
/// passes).
#[test]
fn a_dead_publishers_slot_stays_claimable_while_reaped() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    // Races to see: enough that both windows were hit many times in the failing version.
    const RACES: u32 = 300;
    const MAX_ROUNDS: usize = 2_000_000;
    let name = unique_name("reap-race");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name).publishers(1)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    // A holder word whose pid no process can have: dead.
    let dead = (0x7fff_fff0_u64 << 32) | 1;
    let (stop, reaped) = (AtomicBool::new(false), AtomicU32::new(0));
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                reaped.fetch_add(channel.reap().publishers, Ordering::Relaxed);
            }
        });
        let mut round = 0;
        while reaped.load(Ordering::Relaxed) < RACES && round < MAX_ROUNDS {
            raw.set_control(raw.offsets.publisher_slot, dead);
            if let Err(e) = channel.publisher() {
                stop.store(true, Ordering::Relaxed);
                panic!("round {round}: a claim racing the reaper failed: {e}");
            }
            round += 1;
        }
        stop.store(true, Ordering::Relaxed);
    });
    // The two really raced: the reaper freed the dead holder's slot again and again.
    assert!(
        reaped.load(Ordering::Relaxed) >= RACES,
        "the reaper never got to the slot"
    );
}

/// The number after `key=` in a child's report.
fn count(report: &str, key: &str) -> u64 {
    report
        .split_whitespace()
        .find_map(|field| field.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in report {report:?}"))
}

fn stop_file(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("{name}.stop"))
}

/// Random scribbles over the control block and the rings while a publisher and a
/// subscriber in separate processes keep going: both must survive, neither may hang,
/// messages must get through, and the damage must be noticed.
#[test]
fn random_scribbles_never_crash_or_hang() {
    const TEST: &str = "random_scribbles_never_crash_or_hang";
    const CALLS: u64 = 50_000_000;
    match role().as_deref() {
        Some("subscriber") => {
            let channel = OrderedMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let (mut messages, mut corrupt, mut attach_failures) = (0u64, 0u64, 0u64);
            let mut subscriber = channel.subscriber().ok();
            report("ready");
            let stop = stop_file(&arg::<String>("NAME"));
            for call in 0..CALLS {
                if call % 1024 == 0 && stop.exists() {
                    break;
                }
                let Some(subscriber) = subscriber.as_mut() else {
                    // A scribbled cursor can make attaching fail; keep trying.
                    subscriber = channel.subscriber().ok();
                    attach_failures += 1;
                    continue;
                };
                let outcome = if call % 2 == 0 {
                    subscriber
                        .drain(64, |_, sample| {
                            std::hint::black_box(sample.words[5]);
                        })
                        .map(|n| n as u64)
                } else {
                    subscriber.try_recv().map(|m| {
                        m.map_or(0, |m| {
                            std::hint::black_box(m.seq);
                            1
                        })
                    })
                };
                match outcome {
                    Ok(n) => messages += n,
                    Err(ReceiveError::Corrupt) => corrupt += 1,
                    // The publisher process may stop (having found the damage) or have its
                    // slot scribbled free: said once, and the subscriber goes on.
                    Err(ReceiveError::Disconnected) => {}
                    Err(e) => panic!("unexpected error kind: {e}"),
                }
            }
            report(format!(
                "messages={messages} corrupt={corrupt} attach_failures={attach_failures}"
            ));
        }
        Some("publisher") => {
            let channel = OrderedMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let (mut sent, mut corrupt, mut claim_failures, mut seq) = (0u64, 0u64, 0u64, 0u64);
            let mut publisher = channel.publisher().ok();
            report("ready");
            let stop = stop_file(&arg::<String>("NAME"));
            for call in 0..CALLS {
                if call % 1024 == 0 && stop.exists() {
                    break;
                }
                let Some(p) = publisher.as_mut() else {
                    // A scribbled cursor can make claiming a slot fail; keep trying.
                    publisher = channel.publisher().ok();
                    claim_failures += 1;
                    continue;
                };
                match p.offer(&Sample::new(0, seq)) {
                    Ok(()) => sent += 1,
                    // A scribbled holder word may read as a subscriber that left.
                    Err(PublishError::Backpressured | PublishError::NoSubscriber) => {}
                    Err(PublishError::Corrupt) => corrupt += 1,
                    Err(e) => panic!("unexpected error kind: {e}"),
                }
                seq += 1;
            }
            report(format!("sent={sent} corrupt={corrupt} claim_failures={claim_failures}"));
        }
        _ => {
            let name = unique_name("hostile-random");
            let capacity = 16 * 1024;
            let _channel = OrderedMpsc::<Sample>::create(&Config::new(&name).capacity(capacity)).unwrap();
            let mut raw = Raw::open(&name, 1, 1);
            let args = vec![("NAME", name.clone())];
            let mut children = vec![
                ("subscriber", spawn(TEST, "subscriber", &args)),
                ("publisher", spawn(TEST, "publisher", &args)),
            ];
            // Scribbles start on a channel in use, not on one its processes still open.
            for (_, child) in children.iter_mut() {
                assert_eq!(child.next_report(), "ready");
            }
            let mut mix = SplitMix(99);
            let targets = [
                raw.cursor(0, 1, 0),
                raw.progress_tail(0),
                raw.offsets.publisher_slot + raw.offsets.progress_pending,
                raw.offsets.sequence,
            ];
            let mut scribbles = 0u64;
            let started = Instant::now();
            while started.elapsed() < Duration::from_millis(1500) {
                let value = match mix.next() % 4 {
                    0 => mix.next(),
                    1 => mix.next() % (4 * capacity as u64),
                    2 => u64::MAX - mix.next() % 16,
                    _ => 0,
                };
                if mix.next().is_multiple_of(2) {
                    // The sequence counter and pending marker only in the last third: a
                    // forged counter (rightly) stops all ordered delivery.
                    let usable = if started.elapsed() < Duration::from_millis(1000) {
                        2
                    } else {
                        targets.len()
                    };
                    let at = targets[(mix.next() % usable as u64) as usize];
                    raw.set_control(at, value);
                } else {
                    let at = (mix.next() % (capacity as u64 / 8)) as usize * 8;
                    raw.set_ring(at, value);
                }
                scribbles += 1;
                // Whatever it reads, the status view reports it or refuses it.
                let _ = salias::status::channel_status(&name);
                std::thread::sleep(Duration::from_millis(2));
            }
            std::fs::write(stop_file(&name), b"").unwrap();
            let reports = wait_all(children, Duration::from_secs(120));
            let _ = std::fs::remove_file(stop_file(&name));
            let (subscriber, publisher) = (reports[0].last().unwrap(), reports[1].last().unwrap());
            eprintln!("{scribbles} scribbles; subscriber {subscriber}; publisher {publisher}");
            // Floors, so the test cannot pass having exercised nothing.
            assert!(count(publisher, "sent") > 0, "nothing was published: {publisher}");
            assert!(count(subscriber, "messages") > 0, "nothing was delivered: {subscriber}");
            assert!(
                count(subscriber, "corrupt") > 0,
                "the subscriber never reported the damage: {subscriber}"
            );
        }
    }
}

/// A control block that claims huge pages and a hugetlbfs directory longer than the field
/// that holds it is refused as corrupt by `connect` and the status view, not a panic.
#[test]
fn a_forged_hugetlbfs_directory_length_is_refused() {
    let name = unique_name("hostile-hugedir");
    // A 2 MiB ring, so the forged page size still divides the capacity.
    let _owner = FifoMpsc::<Sample>::create(&Config::new(&name).capacity(2 << 20)).unwrap();
    let mut raw = Raw::open(&name, 1, 1);
    let offsets = raw.offsets;
    let word = |raw: &Raw, at: usize| u64::from_ne_bytes(raw.control[at..at + 8].try_into().unwrap());
    // 2 MiB huge pages (the frame alignment after it kept), and a directory length far
    // past its 256-byte field (the name length before it kept).
    let pages = word(&raw, offsets.huge_pages);
    raw.set_control(offsets.huge_pages, pages & !0xffff_ffff | 1);
    let lengths = word(&raw, offsets.name_len);
    raw.set_control(offsets.name_len, lengths & 0xffff_ffff | 0xffff << 32);
    let connect = FifoMpsc::<Sample>::connect(&name).map(drop).unwrap_err();
    let status = salias::status::channel_status(&name).map(drop).unwrap_err();
    for err in [connect, status] {
        assert!(
            matches!(&err, Error::Corrupt { what, .. } if what.contains("hugetlbfs directory")),
            "{err}"
        );
    }
}

/// A field table forged after creation (a renamed field, a length past the table) is not
/// reported as the channel's layout: it no longer hashes to the recorded fingerprint.
#[test]
fn a_forged_field_table_is_not_reported() {
    let name = unique_name("hostile-fields");
    let _owner = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let fields = |name: &str| {
        let status = salias::status::channel_status(name).unwrap();
        status.recorded_type.unwrap().fields
    };
    assert!(fields(&name).is_some_and(|fields| !fields.is_empty()));
    let mut raw = Raw::open(&name, 1, 1);
    let offsets = raw.offsets;
    // The first field's name starts after its two length bytes.
    let first = offsets.field_table + 2;
    raw.control[first] ^= 0x20;
    assert_eq!(fields(&name), None);
    raw.control[first] ^= 0x20;
    assert!(fields(&name).is_some());
    let len = u32::from_ne_bytes(raw.control[offsets.field_table_len..][..4].try_into().unwrap());
    raw.control[offsets.field_table_len..][..4].copy_from_slice(&(len + 4096).to_ne_bytes());
    assert_eq!(fields(&name), None);
    // The fingerprint still identifies the type: connect is unaffected.
    FifoMpsc::<Sample>::connect(&name).unwrap();
}
