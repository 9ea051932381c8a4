//! A publisher's readiness descriptor: readable until an offer is refused, then once a
//! subscriber in another process releases room; and subscribers wake waiting publishers
//! with one futex call per arm, none while no publisher waits.

#[path = "support/readiness.rs"]
mod readiness_support;
mod support;

use std::os::fd::AsFd;
use std::time::Duration;

use readiness_support::{ARRIVAL, barrier_available, readable};
use salias::{Config, FifoMpsc, PublishError};
use support::{Sample, arg, report, role, spawn, unique_name, wait_all};

/// Offers until refused; returns how many were taken.
fn fill(publisher: &mut salias::Publisher<Sample>) -> u64 {
    let mut seq = 0;
    loop {
        match publisher.offer(&Sample::new(0, seq)) {
            Ok(()) => seq += 1,
            Err(PublishError::Backpressured) => return seq,
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn a_publisher_descriptor_turns_readable_when_a_subscriber_process_releases() {
    const TEST: &str = "a_publisher_descriptor_turns_readable_when_a_subscriber_process_releases";
    if role().as_deref() == Some("drain") {
        let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
        let mut subscriber = channel.subscriber().unwrap();
        let count: u64 = arg("COUNT");
        for seq in 0..count {
            assert_eq!(subscriber.try_recv().unwrap().unwrap().seq, seq);
        }
        assert!(subscriber.try_recv().unwrap().is_none()); // releases everything
        return;
    }
    let name = unique_name("room");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name).capacity(4096)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    assert!(
        readable(&publisher, Duration::ZERO),
        "not readable with room to publish"
    );
    let taken = fill(&mut publisher);
    assert!(taken > 0);
    assert!(
        !readable(&publisher, Duration::ZERO),
        "readable right after a refused offer"
    );
    assert!(matches!(
        publisher.offer(&Sample::new(0, taken)),
        Err(PublishError::Backpressured)
    ));
    assert!(!readable(&publisher, Duration::ZERO), "readable after a second refusal");
    // Nothing but a release makes an Mpsc publisher's descriptor readable (where the
    // barrier makes arming certain; elsewhere it re-checks after every nap by design).
    if barrier_available() {
        assert!(
            !readable(&publisher, Duration::from_millis(300)),
            "readable with no room freed"
        );
    }
    let child = spawn(TEST, "drain", &[("NAME", name.clone()), ("COUNT", taken.to_string())]);
    assert!(
        readable(&publisher, ARRIVAL),
        "the subscriber's release left it unreadable"
    );
    wait_all(vec![("drain", child)], ARRIVAL);
    assert!(readable(&publisher, Duration::ZERO), "no longer readable with room");
    publisher.offer(&Sample::new(0, taken)).unwrap();
}

/// In a child, so that the process-wide count is this test's alone: a subscriber busy
/// receiving wakes no publisher while none waits, and one waiting publisher once.
#[test]
fn subscribers_wake_a_waiting_publisher_once_and_a_busy_one_never() {
    const TEST: &str = "subscribers_wake_a_waiting_publisher_once_and_a_busy_one_never";
    if role().as_deref() != Some("count") {
        let child = spawn(TEST, "count", &[]);
        let reports = wait_all(vec![("count", child)], Duration::from_secs(60));
        println!("{}", reports[0].join("\n"));
        return;
    }
    let channel = FifoMpsc::<Sample>::create(&Config::new(unique_name("room-count")).capacity(4096)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    // Busy: many releases (every quarter window and every time it runs dry), nobody waits.
    let mut received = 0u64;
    for round in 0..2_000u64 {
        for seq in 0..8 {
            publisher.offer(&Sample::new(0, round * 8 + seq)).unwrap();
        }
        received += subscriber.drain(16, |_, _| {}).unwrap() as u64;
    }
    assert_eq!(received, 16_000);
    assert_eq!(
        salias::__private::room_wakes(),
        0,
        "releases woke publishers nobody waited for"
    );
    // Watched and refused: armed once; the subscriber's releases wake it once.
    let _ = publisher.as_fd();
    let taken = fill(&mut publisher);
    assert!(!readable(&publisher, Duration::ZERO));
    for _ in 0..taken {
        subscriber.try_recv().unwrap().unwrap();
    }
    assert!(subscriber.try_recv().unwrap().is_none());
    assert!(readable(&publisher, ARRIVAL), "the release did not wake the publisher");
    let wakes = salias::__private::room_wakes();
    report(format!("{wakes} wakes for one armed publisher"));
    assert_eq!(wakes, 1, "{taken} releases woke one armed publisher {wakes} times");
}

/// A publisher blocked in `send` on a full ring sleeps on the room line and is woken by
/// the subscriber's releases: every message arrives, in order.
#[test]
fn a_blocking_send_is_woken_by_releases() {
    let name = unique_name("room-send");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name).capacity(4096)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    publisher.set_wait_strategy(salias::wait::Adaptive {
        spins: 0,
        yields: 0,
        short_parks: 0,
    });
    let mut subscriber = channel.subscriber().unwrap();
    const COUNT: u64 = 5_000;
    let sender = std::thread::spawn(move || {
        for seq in 0..COUNT {
            publisher.send(&Sample::new(0, seq)).unwrap();
        }
    });
    // Receive only once the publisher was refused, and so is asleep (it parks at once):
    // the first release then finds it sleeping, however the threads are scheduled.
    while salias::status::channel_status(&name).unwrap().publishers[0].backpressured == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(20));
    for seq in 0..COUNT {
        assert_eq!(subscriber.recv().unwrap().seq, seq);
    }
    sender.join().unwrap();
    // The publisher, refused ~100 times and sleeping at once each time, was woken by a
    // release at least once (this process's other tests wake no publisher here).
    assert!(
        salias::__private::room_wakes() > 0,
        "the releases never woke the sleeping publisher"
    );
}
