//! Ordered channels: the only publisher takes global sequence numbers alone, with a plain
//! load and store instead of a locked add; a second publisher that joins marks them shared
//! and waits out a take in flight (`protocol::join_takers`), so no number is taken twice.
//! The interleavings are loom's (`tests/loom.rs`); these tests check the role as the
//! control block records it, and a join in the middle of another process's flood.

mod support;

use std::os::unix::fs::FileExt;
use std::time::Duration;

use salias::__private::{RawOffsets, shm_object_names};
use salias::{Config, OrderedMpsc};
use support::{Checker, Sample, arg, report, role, spawn, unique_name, wait_all};

const SOLE_SHARED: u64 = 1 << 63;

/// What the only publisher's slot records in `sole_taker`: its slot + 1 on the Linux
/// layer, where joiners' membarrier reaches it; shared from the start on the portable
/// layer, which has no such barrier.
fn alone(slot: u64) -> u64 {
    if cfg!(salias_portable) { SOLE_SHARED } else { slot + 1 }
}

/// The channel's `sole_taker` word, read from its control object.
fn sole_taker(name: &str, publishers: u32) -> u64 {
    let [control, _] = shm_object_names(name);
    let file = std::fs::File::open(format!("/dev/shm{control}")).unwrap();
    let mut word = [0; 8];
    file.read_exact_at(&mut word, RawOffsets::new(publishers, 1).sole_taker as u64)
        .unwrap();
    u64::from_ne_bytes(word)
}

#[test]
fn the_only_publisher_takes_numbers_alone_until_a_second_one_joins() {
    let name = unique_name("sole");
    let channel = OrderedMpsc::<Sample>::create(&Config::new(&name).publishers(2)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    assert_eq!(sole_taker(&name, 2), 0, "nobody takes numbers before a publisher joins");

    // Alone; leaving gives the role up, and the next one takes it again.
    let first = channel.publisher().unwrap();
    assert_eq!(sole_taker(&name, 2), alone(0));
    drop(first);
    assert_eq!(
        sole_taker(&name, 2),
        if cfg!(salias_portable) { SOLE_SHARED } else { 0 }
    );
    let mut first = channel.publisher().unwrap();
    assert_eq!(sole_taker(&name, 2), alone(0));
    for seq in 0..3 {
        first.offer(&Sample::new(0, seq)).unwrap();
    }

    // A second publisher: shared for good, the first one's tag kept for later joiners.
    let mut second = channel.publisher().unwrap();
    assert_eq!(sole_taker(&name, 2), SOLE_SHARED | (alone(0) & !SOLE_SHARED));
    second.offer(&Sample::new(1, 0)).unwrap();
    first.offer(&Sample::new(0, 3)).unwrap();
    second.offer_batch(&[Sample::new(1, 1), Sample::new(1, 2)]).unwrap();
    drop(second);
    drop(first);
    assert_ne!(sole_taker(&name, 2) & SOLE_SHARED, 0, "shared numbers stay shared");
    let mut again = channel.publisher().unwrap();
    again.offer(&Sample::new(0, 4)).unwrap();

    let mut received = Vec::new();
    while let Some(message) = subscriber.try_recv().unwrap() {
        assert_eq!(message.gap_before(), 0);
        received.push((message.sequence(), message.producer, message.seq));
    }
    let sent = [(0, 0), (0, 1), (0, 2), (1, 0), (0, 3), (1, 1), (1, 2), (0, 4)];
    let expected: Vec<_> = (0..)
        .zip(sent)
        .map(|(number, (producer, seq))| (number, producer, seq))
        .collect();
    assert_eq!(received, expected, "every message once, numbered in the order sent");
}

/// A publisher process takes numbers alone; a second one joins while it is taking them,
/// then both publish at full speed on the two cores, with nobody reading yet (the rings
/// hold every message). A subscriber then finds every number from 0 once, in order, and
/// every message of each publisher: a number taken twice would leave one of its messages
/// passed over as stale, and a publisher's order broken.
#[test]
fn a_publisher_joining_a_sole_taker_shares_the_numbers_without_a_duplicate() {
    const TEST: &str = "a_publisher_joining_a_sole_taker_shares_the_numbers_without_a_duplicate";
    // Both rings hold all of their messages (80-byte frames in 8 MiB).
    const PER_PUBLISHER: u64 = 60_000;
    match role().as_deref() {
        Some("publisher") => {
            let name = arg::<String>("NAME");
            let channel = OrderedMpsc::<Sample>::connect(&name).unwrap();
            let producer: u64 = arg("PRODUCER");
            let mut publisher = channel.publisher().unwrap();
            let mut batch = Vec::with_capacity(16);
            let mut seq = 0;
            // The first publishes a quarter alone, then one message at a time, looking
            // for the second before each, until it has joined: the join lands while the
            // first is taking numbers, whatever the processes' start-up times.
            let mut joined_at = None;
            while seq < PER_PUBLISHER {
                if producer == 0 && joined_at.is_none() && seq >= PER_PUBLISHER / 4 {
                    // Joined: it marked the numbers shared (on the portable layer, where
                    // they are shared from the start, it holds its slot).
                    let joined = if cfg!(salias_portable) {
                        let status = salias::status::channel_status(&name).unwrap();
                        matches!(status.publishers[1].holder, salias::status::SlotHolder::Alive { .. })
                    } else {
                        sole_taker(&name, 2) == SOLE_SHARED | 1
                    };
                    if joined {
                        joined_at = Some(seq);
                    }
                    publisher.offer(&Sample::new(producer, seq)).unwrap();
                    seq += 1;
                } else if seq % 64 < 48 {
                    publisher.offer(&Sample::new(producer, seq)).unwrap();
                    seq += 1;
                } else {
                    batch.clear();
                    let end = (seq + 16).min(PER_PUBLISHER);
                    batch.extend((seq..end).map(|s| Sample::new(producer, s)));
                    // A batch may stop at the publisher's cached limit: the rest goes next.
                    let mut sent = 0;
                    while sent < batch.len() {
                        sent += publisher.offer_batch(&batch[sent..]).unwrap();
                    }
                    seq = end;
                }
            }
            if producer == 0 {
                report(format!(
                    "joined {}",
                    joined_at.map_or("after".to_owned(), |at| at.to_string())
                ));
            }
        }
        _ => {
            let name = unique_name("sole-join");
            let config = Config::new(&name).publishers(2).capacity(8 << 20);
            let channel = OrderedMpsc::<Sample>::create(&config).unwrap();
            let args = |producer: u64| vec![("NAME", name.clone()), ("PRODUCER", producer.to_string())];
            let first = spawn(TEST, "publisher", &args(0));
            // The second joins once the first is taking numbers alone.
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while salias::status::channel_status(&name).unwrap().sequence < Some(PER_PUBLISHER / 8) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the first publisher never started"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            assert_eq!(sole_taker(&name, 2), alone(0), "the first publisher takes alone");
            let second = spawn(TEST, "publisher", &args(1));
            let reports = wait_all(vec![("first", first), ("second", second)], Duration::from_secs(300));
            let joined = reports[0][0].strip_prefix("joined ").unwrap().parse::<u64>();
            assert!(
                joined.is_ok(),
                "the second publisher joined after the first was done: {reports:?}"
            );
            assert_eq!(sole_taker(&name, 2), SOLE_SHARED | (alone(0) & !SOLE_SHARED));

            let mut subscriber = channel.subscriber().unwrap();
            let mut checker = Checker::new(2);
            for sequence in 0..2 * PER_PUBLISHER {
                let message = subscriber
                    .try_recv()
                    .unwrap()
                    .unwrap_or_else(|| panic!("number {sequence} is missing: taken twice, or lost"));
                assert_eq!(
                    (message.sequence(), message.gap_before()),
                    (sequence, 0),
                    "every number once, in order"
                );
                checker.check(message.publisher_slot(), &message);
            }
            assert!(subscriber.try_recv().unwrap().is_none(), "nothing more");
        }
    }
}
