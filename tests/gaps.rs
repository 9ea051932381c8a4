//! Gaps a live publisher declares (`Publisher::publish_gap`), across processes: a child
//! process publishes messages and gaps into an Ordered channel, and the subscribers here
//! must see every message, and every declared range as a gap, exactly once.

mod support;

use std::time::Duration;

use salias::{Channel, Config, Mpsc, Ordered, OrderedFanout, OrderedMpsc, PublishError, kind::Topology};
use support::{Sample, spawn, unique_name, wait_all};

const WATCHDOG: Duration = Duration::from_secs(120);

/// What the publisher does, in order: `Some(n)` declares `n` numbers lost, `None`
/// publishes a message. A gap at the very start, a no-op gap of 0, two adjacent gaps.
const SCRIPT: &[Option<u64>] = &[Some(2), None, Some(0), Some(3), Some(1), None, None, Some(4), None];

/// The last gap's range, as (start, end).
type Range = Option<(u64, u64)>;

/// What every subscriber must receive: (sequence, gap_before, gaps().last, gaps().events).
const EXPECTED: &[(u64, u64, Range, u64)] = &[
    (2, 2, Some((0, 2)), 1),
    (7, 4, Some((6, 7)), 3),
    (8, 0, Some((6, 7)), 3),
    (13, 4, Some((9, 13)), 4),
];

/// The child: runs `SCRIPT` on the channel `NAME` of topology `K`.
fn publish_script<K: Topology>() {
    let channel = Channel::<Sample, Ordered, K>::connect(&support::arg::<String>("NAME")).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for (step, action) in SCRIPT.iter().enumerate() {
        match action {
            Some(count) => publisher.publish_gap(*count).unwrap(),
            None => publisher.send(&Sample::new(0, step as u64)).unwrap(),
        }
    }
    // Past the limit: a typed error, and nothing taken.
    assert_eq!(
        publisher.publish_gap(salias::error::MAX_GAP + 1),
        Err(PublishError::GapTooLarge {
            count: salias::error::MAX_GAP + 1
        })
    );
    assert_eq!(publisher.published(), 4, "a gap is not a message");
}

/// Receives `EXPECTED` from `subscriber`, one message at a time, then nothing more. The
/// publisher has finished: each message is there at the first try, its gap read from the
/// hole frames, not found later by the health check's search for dead publishers.
fn expect_script<K: Topology>(subscriber: &mut salias::Subscriber<Sample, Ordered, K>) {
    for &(sequence, gap_before, last, events) in EXPECTED {
        let message = subscriber.try_recv().unwrap().expect("a committed message");
        assert_eq!((message.sequence(), message.gap_before()), (sequence, gap_before));
        drop(message);
        let gaps = subscriber.gaps();
        assert_eq!(
            (gaps.last.clone().map(|r| (r.start, r.end)), gaps.events),
            (last, events)
        );
    }
    assert_eq!(subscriber.gaps().missing, 10);
    assert!(subscriber.try_recv().unwrap().is_none(), "a hole frame was handed out");
}

/// The same through `drain`, which must not hand out a hole either.
fn expect_script_polled<K: Topology>(subscriber: &mut salias::Subscriber<Sample, Ordered, K>) {
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while seen.len() < EXPECTED.len() {
        assert!(std::time::Instant::now() < deadline, "only {seen:?} arrived");
        subscriber
            .drain(16, |info, _| seen.push((info.sequence(), info.gap_before())))
            .unwrap();
    }
    let want: Vec<_> = EXPECTED.iter().map(|&(s, g, ..)| (s, g)).collect();
    assert_eq!(seen, want);
    assert_eq!(subscriber.gaps().last, Some(9..13));
    assert_eq!(
        subscriber
            .drain(16, |_, _| panic!("a hole frame was handed out"))
            .unwrap(),
        0
    );
}

#[test]
fn declared_gaps_reach_an_ordered_mpsc_subscriber() {
    const TEST: &str = "declared_gaps_reach_an_ordered_mpsc_subscriber";
    if support::role().as_deref() == Some("publisher") {
        return publish_script::<Mpsc>();
    }
    let name = unique_name("gap-mpsc");
    let channel = OrderedMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    wait_all(
        vec![("publisher", spawn(TEST, "publisher", &[("NAME", name)]))],
        WATCHDOG,
    );
    expect_script(&mut subscriber);
}

#[test]
fn declared_gaps_reach_every_ordered_fanout_subscriber() {
    const TEST: &str = "declared_gaps_reach_every_ordered_fanout_subscriber";
    if support::role().as_deref() == Some("publisher") {
        return publish_script::<salias::Fanout>();
    }
    let name = unique_name("gap-fanout");
    let channel = OrderedFanout::<Sample>::create(&Config::new(&name).subscribers(2)).unwrap();
    let mut first = channel.subscriber().unwrap();
    let mut second = channel.subscriber().unwrap();
    wait_all(
        vec![("publisher", spawn(TEST, "publisher", &[("NAME", name)]))],
        WATCHDOG,
    );
    expect_script(&mut first);
    expect_script_polled(&mut second);
}
