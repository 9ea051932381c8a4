//! What a waiting receive hands out: a `recv` that waited finds its message twice (the
//! waiting loop's look, then its own, which hands the message out), and that must change
//! nothing a receive that did not wait would see; a timeout past the clock's range is no
//! deadline.

mod support;

use std::time::Duration;

use salias::{Bytes, Config, FifoMpsc, Subscriber};
use support::unique_name;

/// The runs of consecutive messages from one publisher that `receive` hands out, from two
/// publishers with 100 messages each committed.
fn runs(receive: impl Fn(&mut Subscriber<Bytes>) -> usize) -> Vec<usize> {
    let channel = FifoMpsc::<Bytes>::create(&Config::new(unique_name("waiting-runs")).publishers(2)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    for mut publisher in [channel.publisher().unwrap(), channel.publisher().unwrap()] {
        for i in 0..100u8 {
            publisher.offer(&[i]).unwrap();
        }
    }
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for _ in 0..200 {
        let slot = receive(&mut subscriber);
        match runs.last_mut() {
            Some((last, count)) if *last == slot => *count += 1,
            _ => runs.push((slot, 1)),
        }
    }
    runs.into_iter().map(|(_, count)| count).collect()
}

/// FIFO takes at most 64 messages from one publisher before looking at the next; a
/// message found by the waiting loop and again by `recv` counts once in those 64.
#[test]
fn a_message_found_twice_counts_once_in_the_burst() {
    let by_recv = runs(|s| s.recv().unwrap().publisher_slot());
    assert_eq!(by_recv, [64, 64, 36, 36]);
    let after_waiting = runs(|s| {
        s.wait_until_found().unwrap();
        s.recv().unwrap().publisher_slot()
    });
    assert_eq!(after_waiting, by_recv);
}

/// `recv_timeout(Duration::MAX)` waits for the message instead of panicking on a deadline
/// the clock cannot hold.
#[test]
fn a_timeout_past_the_clocks_range_waits_for_the_message() {
    let channel = FifoMpsc::<Bytes>::create(&Config::new(unique_name("waiting-max"))).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            publisher.offer(b"late").unwrap();
        });
        let message = subscriber.recv_timeout(Duration::MAX).unwrap();
        assert_eq!(&*message, b"late");
    });
}
