//! Publishers awaited in tokio (`send_async`) that wait for room a subscriber process
//! releases: each test re-executes this binary once per role. Run only these with
//! `cargo test -p salias --features tokio --test async_send`.
#![cfg(feature = "tokio")]

mod async_support;
mod support;

use std::time::Duration;

use async_support::{reported, run, subscriber_and_publisher};
use salias::{Config, FifoMpsc, PublishError};
use support::{Checker, Sample, arg, cpu_time, report, role, unique_name};

/// How long the subscriber process leaves the full ring alone before it drains.
const STALL: Duration = Duration::from_millis(500);

#[test]
fn async_send_waits_for_room_until_a_subscriber_process_drains() {
    const TEST: &str = "async_send_waits_for_room_until_a_subscriber_process_drains";
    const MESSAGES: u64 = 5_000;
    match role().as_deref() {
        Some("publisher") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut publisher = channel.publisher().unwrap();
            let (waited, refused) = run(async {
                let mut seq = 0;
                // Fill the ring: the subscriber is stalled, so an offer is soon refused.
                loop {
                    match publisher.offer(&Sample::new(0, seq)) {
                        Ok(()) => seq += 1,
                        Err(PublishError::Backpressured) => break,
                        Err(e) => panic!("{e}"),
                    }
                }
                // This one waits out the stall: measure what waiting costs.
                let before = cpu_time();
                publisher.send_async(&Sample::new(0, seq)).await.unwrap();
                let waited = cpu_time() - before;
                seq += 1;
                while seq < MESSAGES {
                    publisher.send_async(&Sample::new(0, seq)).await.unwrap();
                    seq += 1;
                }
                (waited, publisher.backpressured())
            });
            report(format!("waited_cpu_micros {}", waited.as_micros()));
            report(format!("refused {refused}"));
        }
        Some("subscriber") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            std::thread::sleep(STALL);
            let mut checker = Checker::new(1);
            for seq in 0..MESSAGES {
                let sample = subscriber.recv().unwrap();
                checker.check(sample.publisher_slot(), &sample);
                drop(sample);
                // A slow consumer now and then, so the publisher waits again.
                if seq % 1_000 == 999 {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            report(format!("received {MESSAGES}"));
        }
        _ => {
            let name = unique_name("async-send");
            // One page: room for about 50 frames of 80 bytes.
            let _channel = FifoMpsc::<Sample>::create(&Config::new(&name).capacity(4096)).unwrap();
            let reports = subscriber_and_publisher(TEST, &[("NAME", name)]);
            assert_eq!(reports[0], vec![format!("received {MESSAGES}")]);
            let waited_cpu: u128 = reported(&reports[1][0], "waited_cpu_micros ");
            let refused: u64 = reported(&reports[1][1], "refused ");
            assert!(refused > 0, "the publisher never found the ring full");
            // A spinning send would burn the whole stall; an awaiting one sleeps in epoll.
            // (Off the Linux layer an armed watcher naps and re-checks, by design.)
            eprintln!("send_async waited out a {STALL:?} stall on {waited_cpu} µs of CPU, {refused} refused offers");
            assert!(
                cfg!(not(all(target_os = "linux", not(salias_portable)))) || waited_cpu * 10 < STALL.as_micros(),
                "send_async used {waited_cpu} µs of CPU waiting out a {STALL:?} stall"
            );
        }
    }
}

/// A subscriber process that receives as fast as it can from a publisher that awaits
/// room: it wakes the publisher at most once per time the publisher armed (each arming
/// follows a refused offer), so never once per release, and not at all (no system call on
/// any release) while the publisher has room.
#[test]
fn async_busy_subscriber_wakes_a_waiting_publisher_once_per_wait() {
    const TEST: &str = "async_busy_subscriber_wakes_a_waiting_publisher_once_per_wait";
    const MESSAGES: u64 = 20_000;
    match role().as_deref() {
        Some("publisher") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut publisher = channel.publisher().unwrap();
            let refused = run(async {
                for seq in 0..MESSAGES {
                    publisher.send_async(&Sample::new(0, seq)).await.unwrap();
                }
                publisher.backpressured()
            });
            report(format!("refused {refused}"));
        }
        Some("subscriber") => {
            let name = arg::<String>("NAME");
            let channel = FifoMpsc::<Sample>::connect(&name).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            if arg::<bool>("WAIT_FULL") {
                // Start draining only once the publisher waits, so the test always covers
                // a publisher that waits, however the two processes are scheduled.
                while salias::status::channel_status(&name)
                    .unwrap()
                    .publishers
                    .iter()
                    .all(|p| p.backpressured == 0)
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            let mut checker = Checker::new(1);
            let mut releases = 0u64;
            while checker.next[0] < MESSAGES {
                // `drain` releases room at the end of every call: one release per batch.
                let handled = subscriber
                    .drain(8, |info, sample| checker.check(info.publisher_slot(), sample))
                    .unwrap();
                releases += u64::from(handled > 0);
            }
            report(format!("wakes {}", salias::__private::room_wakes()));
            report(format!("releases {releases}"));
        }
        _ => {
            // A ring that fills (the publisher waits), and one that holds every message.
            for (capacity, roomy) in [(4096, false), (4 << 20, true)] {
                let name = unique_name("async-room-wakes");
                let _channel = FifoMpsc::<Sample>::create(&Config::new(&name).capacity(capacity)).unwrap();
                let reports = subscriber_and_publisher(TEST, &[("NAME", name), ("WAIT_FULL", (!roomy).to_string())]);
                let (wakes, releases): (u64, u64) = (
                    reported(&reports[0][0], "wakes "),
                    reported(&reports[0][1], "releases "),
                );
                let refused: u64 = reported(&reports[1][0], "refused ");
                eprintln!("{capacity}-byte ring: {releases} releases made {wakes} wakes for {refused} refused offers");
                assert!(
                    wakes <= refused,
                    "{wakes} wakes for {refused} refused offers: releases woke a publisher that was not waiting"
                );
                if roomy {
                    assert_eq!(
                        refused, 0,
                        "the publisher ran out of room in a ring that holds every message"
                    );
                    assert!(releases > 0, "the subscriber released nothing");
                } else {
                    assert!(refused > 0, "the publisher never waited, so the test proved nothing");
                }
            }
        }
    }
}

/// `send_async` waiting for room hears that the subscriber process died
/// (`NoSubscriber`) instead of waiting forever.
#[test]
fn async_send_hears_its_subscriber_die() {
    const TEST: &str = "async_send_hears_its_subscriber_die";
    if role().as_deref() == Some("subscriber") {
        let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
        let _subscriber = channel.subscriber().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: raise has no memory-safety preconditions.
        unsafe { libc::raise(libc::SIGKILL) };
    }
    let name = unique_name("async-no-subscriber");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name).capacity(4096)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let _child = support::spawn(TEST, "subscriber", &[("NAME", name.clone())]);
    while publisher.subscribers().tethered == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut seq = 0;
    while publisher.offer(&Sample::new(0, seq)).is_ok() {
        seq += 1;
    }
    let before = support::thread_cpu_time();
    let sent = run(async { publisher.send_async(&Sample::new(0, seq)).await });
    let cpu = support::thread_cpu_time() - before;
    assert_eq!(sent, Err(PublishError::NoSubscriber));
    // It slept through the subscriber's 300 ms and the detection after.
    assert!(cpu < Duration::from_millis(100), "{cpu:?} of CPU while waiting");
}
