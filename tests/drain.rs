//! What one `drain` call hands out once it has found a message: the messages behind it in
//! the same ring, taken as a search would take them one by one. FIFO still goes round the
//! rings after a burst, Ordered still follows the numbers from ring to ring, room is still
//! released to publishers while a long call runs, a handler's panic leaves the subscriber
//! past exactly what it handled, and a subscriber demoted during the call stops there.
//! Raw `drain` takes runs of frames of any length the channel accepts.

mod support;

use std::time::{Duration, Instant};

use salias::kind::Mode;
use salias::{
    Bytes, Channel, Config, Fifo, FifoFanout, FifoMpsc, Mpsc, Ordered, OrderedMpsc, RawFifoFanout, RawFifoMpsc,
    RawOrderedMpsc, ReceiveError,
};
use support::{Sample, unique_name};
use zerocopy::FromBytes;

#[test]
fn fifo_drain_goes_round_the_rings_after_a_burst() {
    const EACH: u64 = 300;
    let name = unique_name("drain-burst");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name).publishers(2)).unwrap();
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    let mut subscriber = channel.subscriber().unwrap();
    for (producer, publisher) in publishers.iter_mut().enumerate() {
        for seq in 0..EACH {
            publisher.offer(&Sample::new(producer as u64, seq)).unwrap();
        }
    }
    let mut order = Vec::new();
    let handled = subscriber
        .drain(usize::MAX, |info, sample| {
            assert_eq!(*sample, Sample::new(sample.producer, sample.seq));
            order.push((info.publisher_slot(), sample.producer, sample.seq));
        })
        .unwrap();
    assert_eq!(handled as u64, 2 * EACH);
    // Each publisher's messages in its order, from its own ring.
    for producer in 0..2 {
        let seqs: Vec<u64> = order.iter().filter(|m| m.1 == producer).map(|m| m.2).collect();
        assert_eq!(seqs, (0..EACH).collect::<Vec<_>>());
    }
    let slots: std::collections::HashSet<usize> = order.iter().map(|m| m.0).collect();
    assert_eq!(slots.len(), 2, "{slots:?}");
    // No more than a burst (64) from one ring in a row while the other has messages.
    let runs: Vec<usize> = order.chunk_by(|a, b| a.0 == b.0).map(<[_]>::len).collect();
    let while_both: Vec<usize> = runs[..runs.len() - 1].to_vec();
    assert!(while_both.iter().all(|&run| run <= 64), "runs from one ring: {runs:?}");
    assert!(runs.len() >= 2 * EACH as usize / 64, "runs from one ring: {runs:?}");
}

#[test]
fn ordered_drain_follows_the_numbers_from_ring_to_ring() {
    let name = unique_name("drain-ordered");
    let channel = OrderedMpsc::<Sample>::create(&Config::new(&name).publishers(2)).unwrap();
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    let mut subscriber = channel.subscriber().unwrap();
    // Runs of 1 to 4 messages from one publisher, then the other: each ring holds numbers
    // the other ring's messages come between.
    let producers = [1, 2, 3, 4].iter().cycle().zip([0u64, 1].iter().cycle());
    let mut expected = Vec::new();
    for (&run, &producer) in producers.take(40) {
        for _ in 0..run {
            let seq = expected.len() as u64;
            publishers[producer as usize]
                .offer(&Sample::new(producer, seq))
                .unwrap();
            expected.push((seq, producer, seq));
        }
    }
    let mut delivered = Vec::new();
    let handled = subscriber
        .drain(usize::MAX, |info, sample| {
            assert_eq!(*sample, Sample::new(sample.producer, sample.seq));
            assert_eq!(info.gap_before(), 0);
            delivered.push((info.sequence(), sample.producer, sample.seq));
        })
        .unwrap();
    assert_eq!(handled, expected.len());
    assert_eq!(delivered, expected);
}

#[test]
fn drain_releases_room_to_publishers_while_it_runs() {
    refilled_while_draining::<Fifo>();
    refilled_while_draining::<Ordered>();
}

/// Fills a small ring, then drains it in one call: halfway through, inside the first 64
/// messages (FIFO's burst, which one run hands out) and past the first quarter of the ring,
/// the call has released room, so the publisher, refused before, has room again without the
/// call returning.
fn refilled_while_draining<M: Mode>() {
    let name = unique_name("drain-release");
    let channel = Channel::<Sample, M, Mpsc>::create(&Config::new(&name).capacity(8192)).unwrap();
    let (mut publisher, mut subscriber) = (channel.publisher().unwrap(), channel.subscriber().unwrap());
    let mut seq = 0;
    while publisher.offer(&Sample::new(0, seq)).is_ok() {
        seq += 1;
    }
    let full = seq;
    assert!((64..128).contains(&full), "a ring of 8 KiB holds {full} messages");
    let mut refills = 0;
    let handled = subscriber
        .drain(full as usize, |_, sample| {
            if sample.seq == full / 2 {
                publisher.offer(&Sample::new(0, full)).unwrap();
                refills += 1;
            }
        })
        .unwrap();
    assert_eq!((handled as u64, refills), (full, 1), "{}", M::NAME);
}

#[test]
fn a_handler_that_panics_leaves_what_it_handled_behind() {
    panics_inside_drain::<Fifo>();
    panics_inside_drain::<Ordered>();
}

/// A `drain` whose handler panics at the seventh message, caught: the six before it were
/// handled and count as received, and the seventh is the first the next call hands out.
fn panics_inside_drain<M: Mode>() {
    let name = unique_name("drain-panic");
    let channel = Channel::<Sample, M, Mpsc>::create(&Config::new(&name)).unwrap();
    let (mut publisher, mut subscriber) = (channel.publisher().unwrap(), channel.subscriber().unwrap());
    for seq in 0..10 {
        publisher.offer(&Sample::new(0, seq)).unwrap();
    }
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        subscriber.drain(usize::MAX, |_, sample| {
            assert_ne!(sample.seq, 6, "the handler's own panic")
        })
    }));
    assert!(panicked.is_err(), "{}", M::NAME);
    assert_eq!(subscriber.received(), 6, "{}", M::NAME);
    let mut rest = Vec::new();
    subscriber.drain(usize::MAX, |_, sample| rest.push(sample.seq)).unwrap();
    assert_eq!(rest, (6..10).collect::<Vec<_>>(), "{}", M::NAME);
}

#[test]
fn drain_stops_handing_out_views_once_demoted() {
    let name = unique_name("drain-demoted");
    let config = Config::new(&name)
        .capacity(8192)
        .tether_timeout(Duration::from_millis(1));
    let channel = FifoFanout::<Sample>::create(&config).unwrap();
    let (mut publisher, mut subscriber) = (channel.publisher().unwrap(), channel.subscriber().unwrap());
    let slot = subscriber.slot();
    let mut seq = 0;
    while publisher.offer(&Sample::new(0, seq)).is_ok() {
        seq += 1;
    }
    let full = seq;
    let demoted = || salias::status::channel_status(&name).unwrap().subscribers[slot].demoted;
    // While the second message is handled, the publisher, refused for longer than the tether
    // timeout, demotes the subscriber, and may then overwrite anything not yet released: the
    // offer that demotes it writes one frame, over the first message's.
    let mut handed_out = 0;
    let drained = subscriber.drain(usize::MAX, |_, _| {
        if handed_out == 1 {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !demoted() {
                assert!(Instant::now() < deadline, "the publisher never demoted the subscriber");
                let _ = publisher.offer(&Sample::new(0, full));
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        handed_out += 1;
    });
    // The call noticed at its next release, a quarter of the ring on, and stopped there.
    let handled = drained.unwrap();
    assert_eq!(handled, handed_out);
    assert!(
        handled < full as usize / 2,
        "{handled} of {full} handed out after the demotion"
    );
    assert_eq!(subscriber.drain(1, |_, _| {}), Err(ReceiveError::Demoted));
}

/// A raw message of 8 to 47 bytes, its number in the first 8 and in the last byte.
fn raw_message(seq: u64) -> Vec<u8> {
    let mut bytes = vec![seq as u8; 8 + (seq as usize * 7) % 40];
    bytes[..8].copy_from_slice(&seq.to_le_bytes());
    bytes
}

fn raw_seq(bytes: &[u8]) -> u64 {
    let seq = u64::from_le_bytes(bytes[..8].try_into().unwrap());
    assert_eq!(bytes, raw_message(seq), "a frame read at the wrong place or length");
    seq
}

/// Raw Ordered frames of many lengths, in runs from two rings: one call hands them out by
/// their numbers, each frame found from the length of the one before.
#[test]
fn raw_ordered_drain_follows_the_numbers_across_frames_of_many_lengths() {
    let name = unique_name("drain-raw-ordered");
    let channel = RawOrderedMpsc::create(&Config::new(&name).publishers(2)).unwrap();
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    let mut subscriber = channel.subscriber().unwrap();
    let mut seq = 0;
    for (&run, producer) in [1, 2, 3, 4].iter().cycle().zip([0, 1].into_iter().cycle()).take(40) {
        for _ in 0..run {
            publishers[producer].offer(&raw_message(seq)).unwrap();
            seq += 1;
        }
    }
    let mut delivered = Vec::new();
    let handled = subscriber
        .drain(usize::MAX, |info, bytes| {
            assert_eq!(info.sequence(), raw_seq(bytes));
            delivered.push(info.sequence());
        })
        .unwrap();
    assert_eq!(handled as u64, seq);
    assert_eq!(delivered, (0..seq).collect::<Vec<_>>());
}

/// A tethered raw fanout subscriber counts the frames its runs take (raw frames vary in
/// length, so positions alone do not say how many): once it goes on as a lossy subscriber
/// and is lapped, it reports exactly the messages it missed.
#[test]
fn raw_fanout_drain_counts_its_run_for_what_it_misses_later() {
    const READ: u64 = 10;
    let name = unique_name("drain-raw-count");
    let config = Config::new(&name)
        .capacity(4096)
        .tether_timeout(Duration::from_secs(60))
        .max_message_size(64);
    let channel = RawFifoFanout::create(&config).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..READ {
        publisher.offer(&raw_message(seq)).unwrap();
    }
    let mut seqs = Vec::new();
    assert_eq!(
        subscriber
            .drain(usize::MAX, |_, bytes| seqs.push(raw_seq(bytes)))
            .unwrap() as u64,
        READ
    );
    assert_eq!(seqs, (0..READ).collect::<Vec<_>>());
    let mut lossy = subscriber.into_lossy().unwrap();
    // At least three rings' worth (no frame is under 24 bytes): the lossy subscriber
    // holds nobody back, and is lapped.
    let total = READ + 3 * 4096 / 24;
    for seq in READ..total {
        publisher.offer(&raw_message(seq)).unwrap();
    }
    let mut buffer = [0u8; 64];
    let first = lossy.try_recv_into(&mut buffer).unwrap().expect("the ring's oldest");
    let seq = raw_seq(&buffer[..*first]);
    assert!(seq > READ, "lapped");
    assert_eq!(first.missed_before(), seq - READ);
    assert_eq!(lossy.missed(), seq - READ);
}

/// A raw view of a typed Ordered channel, whose frames store no length: the run takes them
/// at the type's size, and stops at a declared gap, which the search reports before the
/// next message.
#[test]
fn raw_view_of_an_ordered_channel_drains_across_a_gap() {
    let name = unique_name("drain-raw-view-ordered");
    let channel = OrderedMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..3 {
        publisher.offer(&Sample::new(0, seq)).unwrap();
    }
    publisher.publish_gap(2).unwrap();
    for seq in 5..8 {
        publisher.offer(&Sample::new(0, seq)).unwrap();
    }
    let view = OrderedMpsc::<Bytes>::connect_as_bytes(&name).unwrap();
    let mut subscriber = view.subscriber().unwrap();
    let mut delivered = Vec::new();
    let handled = subscriber
        .drain(usize::MAX, |info, bytes| {
            let sample = Sample::read_from_bytes(bytes).expect("a whole Sample");
            assert_eq!(sample, Sample::new(0, sample.seq));
            delivered.push((info.sequence(), info.gap_before(), sample.seq));
        })
        .unwrap();
    assert_eq!(handled, 6);
    assert_eq!(
        delivered,
        [(0, 0, 0), (1, 0, 1), (2, 0, 2), (5, 2, 5), (6, 0, 6), (7, 0, 7)]
    );
    assert_eq!(subscriber.gaps().last, Some(3..5));
}

/// Raw `drain` releases room inside a run and leaves a panicking handler's subscriber past
/// what it handled, as the typed one does.
#[test]
fn raw_drain_releases_room_and_survives_a_panicking_handler() {
    let name = unique_name("drain-raw-release");
    let channel = RawFifoMpsc::create(&Config::new(&name).capacity(8192).max_message_size(64)).unwrap();
    let (mut publisher, mut subscriber) = (channel.publisher().unwrap(), channel.subscriber().unwrap());
    let mut seq = 0;
    while publisher.offer(&raw_message(seq)).is_ok() {
        seq += 1;
    }
    let full = seq;
    assert!(full > 100, "a ring of 8 KiB holds {full} messages");
    let mut refills = 0;
    let handled = subscriber
        .drain(full as usize, |_, bytes| {
            // Inside the first run (FIFO's burst is 64) and past the ring's first quarter
            // (frames of 24 to 64 bytes, 44 on average).
            if raw_seq(bytes) == 60 {
                publisher.offer(&raw_message(full)).unwrap();
                refills += 1;
            }
        })
        .unwrap();
    assert_eq!((handled as u64, refills), (full, 1));

    for seq in full + 1..full + 11 {
        publisher.offer(&raw_message(seq)).unwrap();
    }
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        subscriber.drain(usize::MAX, |_, bytes| {
            assert_ne!(raw_seq(bytes), full + 6, "the handler's own panic")
        })
    }));
    assert!(panicked.is_err());
    assert_eq!(subscriber.received(), full + 6);
    let mut rest = Vec::new();
    subscriber
        .drain(usize::MAX, |_, bytes| rest.push(raw_seq(bytes)))
        .unwrap();
    assert_eq!(rest, (full + 6..full + 11).collect::<Vec<_>>());
}
