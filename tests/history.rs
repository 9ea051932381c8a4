//! Joining with history: a Fanout subscriber that starts at the oldest message the rings
//! hold, or at the last N, receives exactly that and then the live stream. Racing a
//! publisher that laps the ring in another process, a lossy one receives from its start or
//! reports exactly what it missed, and a tethered one misses nothing: publishers hold back
//! for it from its start.

mod support;

use std::time::{Duration, Instant};

use salias::receive::Start;
use salias::{Config, FifoFanout, OrderedFanout, PublishError, RawFifoFanout};
use support::{Sample, arg, role, spawn, unique_name, wait_all};

/// A small ring, so a few thousand messages lap it.
const CAPACITY: usize = 16 << 10;
/// A `Sample` frame's length in a FIFO ring (16-byte header, 64-byte payload).
const FRAME: usize = 80;

/// A raw message that says who sent it and its place in that publisher's stream; its
/// length varies with the place, so the walk back cannot count on one frame length.
fn raw_message(publisher: u64, seq: u64) -> Vec<u8> {
    let mut bytes = Vec::from(publisher.to_le_bytes());
    bytes.extend(seq.to_le_bytes());
    bytes.extend(std::iter::repeat_n((seq % 251) as u8, (seq * 7 % 90) as usize));
    bytes
}

fn seq_of(raw: &[u8]) -> (u64, u64) {
    (
        u64::from_le_bytes(raw[..8].try_into().unwrap()),
        u64::from_le_bytes(raw[8..16].try_into().unwrap()),
    )
}

#[test]
fn fifo_oldest_is_every_message_each_ring_still_holds_then_the_live_stream() {
    let name = unique_name("history-fifo-oldest");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY).publishers(2)).unwrap();
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    // Publisher 0 laps its ring many times; publisher 1 sends a few, all still held.
    for seq in 0..2_000 {
        publishers[0].offer(&Sample::new(0, seq)).unwrap();
    }
    for seq in 0..7 {
        publishers[1].offer(&Sample::new(1, seq)).unwrap();
    }
    let mut late = channel.lossy_subscriber_from(Start::Oldest).unwrap();
    for seq in 2_000..2_010 {
        publishers[0].offer(&Sample::new(0, seq)).unwrap();
    }
    let mut next = [None::<u64>; 2];
    let mut held = [0u64; 2];
    while let Some(message) = late.try_recv().unwrap() {
        let slot = message.info().publisher_slot();
        assert_eq!(message.missed_before(), 0);
        let sample = *message;
        assert_eq!(sample, Sample::new(slot as u64, sample.seq));
        // From its first, every message of the ring in order: no gap, no duplicate.
        if let Some(expected) = next[slot] {
            assert_eq!(sample.seq, expected);
        }
        next[slot] = Some(sample.seq + 1);
        if sample.seq < 2_000 {
            held[slot] += 1;
        }
    }
    assert_eq!(next, [Some(2_010), Some(7)]);
    // Publisher 1's ring never wrapped: all of it. Publisher 0's: at least three quarters
    // of a ring, at most a ring.
    assert_eq!(held[1], 7);
    let ring = (CAPACITY / FRAME) as u64;
    assert!(
        held[0] >= ring * 3 / 4 && held[0] <= ring,
        "{} of a ring of {ring}",
        held[0]
    );
    assert_eq!(late.missed(), 0);
}

#[test]
fn raw_history_walks_back_over_frames_of_every_length() {
    let name = unique_name("history-raw");
    let channel = RawFifoFanout::create(&Config::new(&name).capacity(CAPACITY).max_message_size(128)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..3_000 {
        publisher.offer(&raw_message(0, seq)).unwrap();
    }
    for start in [Start::Oldest, Start::Last(25)] {
        let mut late = channel.lossy_subscriber_from(start).unwrap();
        let mut buffer = [0u8; 128];
        let mut seen = Vec::new();
        while let Some(copied) = late.try_recv_into(&mut buffer).unwrap() {
            let (producer, seq) = seq_of(&buffer[..*copied]);
            assert_eq!((producer, &buffer[..*copied]), (0, &raw_message(0, seq)[..]));
            seen.push(seq);
        }
        let first = seen[0];
        assert_eq!(seen, (first..3_000).collect::<Vec<_>>(), "{start:?}");
        match start {
            Start::Last(n) => assert_eq!(seen.len() as u64, n),
            _ => assert!(seen.len() > 100, "{} messages held", seen.len()),
        }
    }
}

#[test]
fn fifo_last_n_reports_what_a_ring_no_longer_holds() {
    let name = unique_name("history-fifo-last");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY).publishers(2)).unwrap();
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    for seq in 0..1_000 {
        publishers[0].offer(&Sample::new(0, seq)).unwrap();
    }
    for seq in 0..3 {
        publishers[1].offer(&Sample::new(1, seq)).unwrap();
    }
    // The last 5 of each: publisher 0's five; publisher 1 sent only 3, none lost.
    let mut late = channel.lossy_subscriber_from(Start::Last(5)).unwrap();
    let mut got: [Vec<u64>; 2] = Default::default();
    while let Some(message) = late.try_recv().unwrap() {
        assert_eq!(message.missed_before(), 0);
        got[message.info().publisher_slot()].push(message.seq);
    }
    assert_eq!(got, [(995..1_000).collect::<Vec<_>>(), vec![0, 1, 2]]);

    // More than the ring holds: what it holds, and the rest of the last 900 as a loss
    // reported before the first of that ring.
    let mut late = channel.lossy_subscriber_from(Start::Last(900)).unwrap();
    let mut first = None;
    let mut count = [0u64; 2];
    while let Some(message) = late.try_recv().unwrap() {
        let slot = message.info().publisher_slot();
        if slot == 0 && first.is_none() {
            first = Some((message.seq, message.missed_before()));
        } else {
            assert_eq!(message.missed_before(), 0);
        }
        count[slot] += 1;
    }
    let (first, missed) = first.unwrap();
    assert_eq!(count[1], 3);
    assert_eq!(first + count[0], 1_000);
    assert_eq!(missed + count[0], 900);
    assert_eq!(late.missed(), missed);
    assert_eq!(late.losses().last.as_ref().map(|loss| loss.messages), Some(missed));
}

#[test]
fn ordered_history_is_in_order_and_a_gap_says_what_is_gone() {
    let name = unique_name("history-ordered");
    let channel = OrderedFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY).publishers(2)).unwrap();
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    // Two publishers, interleaved unevenly: 0 sends three of every four numbers.
    for n in 0..1_200u64 {
        let p = usize::from(n % 4 == 3);
        publishers[p].offer(&Sample::new(p as u64, n)).unwrap();
    }
    let mut late = channel.lossy_subscriber_from(Start::Oldest).unwrap();
    let mut numbers = Vec::new();
    while let Some(message) = late.try_recv().unwrap() {
        assert_eq!(message.info().gap_before(), 0);
        assert_eq!(message.info().sequence(), message.seq);
        numbers.push(message.seq);
    }
    let first = numbers[0];
    assert!(
        first > 0,
        "publisher 0's ring was lapped, so its oldest numbers are gone"
    );
    assert_eq!(numbers, (first..1_200).collect::<Vec<_>>());

    // The last 10 numbers, exactly.
    let mut late = channel.lossy_subscriber_from(Start::Last(10)).unwrap();
    let mut numbers = Vec::new();
    while let Some(message) = late.try_recv().unwrap() {
        numbers.push(message.info().sequence());
    }
    assert_eq!(numbers, (1_190..1_200).collect::<Vec<_>>());

    // More than is held: a gap from the asked-for number to the first held, then all.
    let mut late = channel.lossy_subscriber_from(Start::Last(1_100)).unwrap();
    let message = late.try_recv().unwrap().unwrap();
    assert_eq!(message.info().sequence(), first);
    assert_eq!(message.info().gap_before(), first - 100);
    assert_eq!(late.gaps().last, Some(100..first));
}

#[test]
fn a_tethered_joiner_holds_its_history_and_the_publisher_waits_for_it() {
    let name = unique_name("history-tethered");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY).publishers(2)).unwrap();
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    for seq in 0..2_000 {
        publishers[0].offer(&Sample::new(0, seq)).unwrap();
    }
    for seq in 0..7 {
        publishers[1].offer(&Sample::new(1, seq)).unwrap();
    }
    let mut late = channel.subscriber_from(Start::Oldest).unwrap();
    // From the join on, publisher 0 may not overwrite what the joiner has not read: it
    // runs into backpressure before it laps the history.
    let mut seq = 2_000;
    while publishers[0].offer(&Sample::new(0, seq)).is_ok() {
        seq += 1;
        assert!(seq < 2_000 + 2 * (CAPACITY / FRAME) as u64, "never held back");
    }
    let mut next = [None::<u64>; 2];
    let mut held = [0u64; 2];
    while let Some(message) = late.try_recv().unwrap() {
        let slot = message.publisher_slot();
        let sample = *message;
        assert_eq!(sample, Sample::new(slot as u64, sample.seq));
        if let Some(expected) = next[slot] {
            assert_eq!(sample.seq, expected, "a tethered joiner misses nothing");
        }
        next[slot] = Some(sample.seq + 1);
        held[slot] += u64::from(sample.seq < 2_000);
    }
    assert_eq!(next, [Some(seq), Some(7)]);
    assert_eq!(held[1], 7);
    let ring = (CAPACITY / FRAME) as u64;
    assert!(
        held[0] >= ring * 3 / 4 - 2 && held[0] <= ring,
        "{} of a ring of {ring}",
        held[0]
    );
    // Read, released: the publisher goes on.
    publishers[0].offer(&Sample::new(0, seq)).unwrap();
    assert_eq!(late.try_recv().unwrap().map(|m| m.seq), Some(seq));
}

#[test]
fn tethered_last_n_says_what_each_ring_no_longer_held() {
    let name = unique_name("history-tethered-last");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY).publishers(2)).unwrap();
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    for seq in 0..1_000 {
        publishers[0].offer(&Sample::new(0, seq)).unwrap();
    }
    for seq in 0..3 {
        publishers[1].offer(&Sample::new(1, seq)).unwrap();
    }
    let drain = |late: &mut salias::Subscriber<Sample, salias::Fifo, salias::Fanout>| {
        let mut got: [Vec<u64>; 2] = Default::default();
        while let Some(message) = late.try_recv().unwrap() {
            got[message.publisher_slot()].push(message.seq);
        }
        got
    };
    let mut late = channel.subscriber_from(Start::Last(5)).unwrap();
    assert_eq!(late.history_missed(), [0, 0]);
    assert_eq!(drain(&mut late), [(995..1_000).collect::<Vec<_>>(), vec![0, 1, 2]]);
    drop(late);
    let mut late = channel.subscriber_from(Start::Last(900)).unwrap();
    let got = drain(&mut late);
    let missed = late.history_missed()[0];
    assert_eq!(late.history_missed()[1], 0);
    assert_eq!(got[1], [0, 1, 2]);
    assert_eq!(got[0].len() as u64 + missed, 900);
    assert_eq!(got[0], (1_000 - got[0].len() as u64..1_000).collect::<Vec<_>>());
    assert!(missed > 0, "a ring of {} frames cannot hold 900", CAPACITY / FRAME);
}

#[test]
fn tethered_ordered_history_is_in_order_and_a_gap_says_what_is_gone() {
    let name = unique_name("history-tethered-ordered");
    let channel = OrderedFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY).publishers(2)).unwrap();
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    for n in 0..1_200u64 {
        let p = usize::from(n % 4 == 3);
        publishers[p].offer(&Sample::new(p as u64, n)).unwrap();
    }
    let mut late = channel.subscriber_from(Start::Oldest).unwrap();
    let mut numbers = Vec::new();
    while let Some(message) = late.try_recv().unwrap() {
        assert_eq!(message.gap_before(), 0);
        assert_eq!(message.sequence(), message.seq);
        numbers.push(message.seq);
    }
    let first = numbers[0];
    assert!(first > 0, "publisher 0's ring was lapped");
    assert_eq!(numbers, (first..1_200).collect::<Vec<_>>());
    drop(late);

    let mut late = channel.subscriber_from(Start::Last(1_100)).unwrap();
    let message = late.try_recv().unwrap().unwrap();
    assert_eq!((message.sequence(), message.gap_before()), (first, first - 100));
    drop(message);
    assert_eq!(late.gaps().last, Some(100..first));
}

#[test]
fn a_joiner_racing_a_publisher_that_laps_the_ring_loses_nothing_unreported() {
    const TEST: &str = "a_joiner_racing_a_publisher_that_laps_the_ring_loses_nothing_unreported";
    if role().is_some() {
        // The publisher: floods until told to stop (by the test removing `NAME-stop`).
        let name: String = arg("NAME");
        let ordered: bool = arg("ORDERED");
        let stop = std::path::PathBuf::from(arg::<String>("STOP"));
        let mut seq = 0;
        macro_rules! flood {
            ($channel:expr) => {{
                let mut publisher = $channel.publisher().unwrap();
                while stop.exists() {
                    for _ in 0..256 {
                        match publisher.offer(&Sample::new(0, seq)) {
                            Ok(()) => seq += 1,
                            Err(PublishError::Backpressured) => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            }};
        }
        if ordered {
            flood!(OrderedFanout::<Sample>::connect(&name).unwrap());
        } else {
            flood!(FifoFanout::<Sample>::connect(&name).unwrap());
        }
        return;
    }
    for ordered in [false, true] {
        let name = unique_name("history-race");
        let stop = std::env::temp_dir().join(format!("{name}-running"));
        std::fs::write(&stop, b"").unwrap();
        let config = Config::new(&name).capacity(CAPACITY);
        let fifo = (!ordered).then(|| FifoFanout::<Sample>::create(&config).unwrap());
        let sequenced = ordered.then(|| OrderedFanout::<Sample>::create(&config).unwrap());
        let args = [
            ("NAME", name.clone()),
            ("ORDERED", ordered.to_string()),
            ("STOP", stop.display().to_string()),
        ];
        let publisher = spawn(TEST, "publisher", &args);
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut joins = 0;
        while Instant::now() < deadline || joins < 20 {
            for start in [Start::Oldest, Start::Last(50)] {
                joins += 1;
                // Each join reads a few hundred messages while the publisher laps the
                // ring: every one whole, in order, and each skip reported as missed.
                macro_rules! check {
                    ($late:expr, $position:expr) => {{
                        let mut late = $late;
                        let mut last: Option<u64> = None;
                        let mut received = 0;
                        while received < 300 {
                            let Some(message) = late.try_recv().unwrap() else {
                                std::thread::yield_now();
                                continue;
                            };
                            let sample = *message;
                            assert_eq!(sample, Sample::new(0, sample.seq), "torn or foreign");
                            let (position, missed) = $position(&message);
                            if let Some(last) = last {
                                assert_eq!(position, last + 1 + missed, "{start:?} ordered {ordered}");
                            }
                            last = Some(position);
                            received += 1;
                        }
                    }};
                }
                // Tethered: nothing missed at all, from wherever it started.
                match (&fifo, &sequenced) {
                    (Some(channel), _) => check!(channel.subscriber_from(start).unwrap(), |m: &salias::Received<
                        Sample,
                        salias::Fifo,
                        salias::Fanout,
                    >| (
                        m.seq, 0
                    )),
                    (_, Some(channel)) => check!(channel.subscriber_from(start).unwrap(), |m: &salias::Received<
                        Sample,
                        salias::Ordered,
                        salias::Fanout,
                    >| (
                        m.sequence(),
                        0
                    )),
                    _ => unreachable!(),
                }
                match (&fifo, &sequenced) {
                    (Some(channel), _) => check!(
                        channel.lossy_subscriber_from(start).unwrap(),
                        |m: &salias::receive::Copied<Sample, salias::Fifo>| (m.seq, m.missed_before())
                    ),
                    (_, Some(channel)) => check!(
                        channel.lossy_subscriber_from(start).unwrap(),
                        |m: &salias::receive::Copied<Sample, salias::Ordered>| (
                            m.info().sequence(),
                            m.info().gap_before()
                        )
                    ),
                    _ => unreachable!(),
                }
            }
        }
        std::fs::remove_file(&stop).unwrap();
        wait_all(vec![("publisher", publisher)], Duration::from_secs(60));
    }
}

#[test]
fn a_payload_that_looks_like_a_frame_start_is_not_taken_for_one() {
    // The frame format's commit key (src/wire/frame.rs): a frame at position `p` begins
    // with `p ^ KEY`.
    const KEY: u64 = 0xA5C3_5A3C_96E1_69F0;
    let name = unique_name("history-forged");
    let channel = RawFifoFanout::create(&Config::new(&name).capacity(CAPACITY).max_message_size(128)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    // A 64-byte message is the frame 0..80, its payload at 16..80. Its last two words, at
    // ring positions 64 and 72, read as the start of an 8-byte message's frame: the key of
    // position 64 and a length of 8. That frame would end at 88, not at 80 where the next
    // frame starts, so it is no frame.
    let mut forged = vec![0u8; 64];
    forged[48..56].copy_from_slice(&(64 ^ KEY).to_ne_bytes());
    forged[56..64].copy_from_slice(&8u64.to_ne_bytes());
    publisher.offer(&forged).unwrap();
    publisher.offer(b"next").unwrap();
    let mut late = channel.lossy_subscriber_from(Start::Last(2)).unwrap();
    let mut buffer = [0u8; 128];
    let mut seen = Vec::new();
    while let Some(copied) = late.try_recv_into(&mut buffer).unwrap() {
        seen.push(buffer[..*copied].to_vec());
    }
    assert_eq!(seen, [forged, b"next".to_vec()]);
}
