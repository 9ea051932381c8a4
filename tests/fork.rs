//! A `fork()` child inherits its parent's mappings and handles, but not its slots: an
//! inherited handle refuses to act and its drop releases nothing of the parent's, while
//! handles the child makes itself carry the child's own identity.
#![cfg(unix)]

mod support;

use std::time::Duration;

use salias::{Config, Error, FifoFanout, PublishError, ReceiveError, status::SlotHolder};
use support::{Sample, role, spawn, unique_name, wait_all};

const TEST: &str = "a_forked_child_never_acts_as_its_parent";

/// In the child: every inherited handle refuses; its own handles work as itself.
fn in_child(
    name: &str,
    channel: FifoFanout<Sample>,
    publisher: salias::Publisher<Sample, salias::Fifo, salias::Fanout>,
    subscriber: salias::Subscriber<Sample, salias::Fifo, salias::Fanout>,
) {
    let (mut publisher, mut subscriber) = (publisher, subscriber);
    let me = std::process::id();
    assert_eq!(publisher.offer(&Sample::new(0, 99)), Err(PublishError::Inherited));
    assert!(matches!(publisher.fault(), Some(Error::Inherited { name: n }) if n == name));
    assert_eq!(subscriber.try_recv().map(|m| m.is_some()), Err(ReceiveError::Inherited));
    assert!(matches!(subscriber.fault(), Some(Error::Inherited { name: n }) if n == name));
    let err = channel.publisher().unwrap_err();
    assert!(err.to_string().contains("inherited across fork()"), "{err}");
    // Dropping them releases nothing: the parent still holds its slots, and the channel
    // (owned by the parent) is still there.
    drop((publisher, subscriber, channel));
    let status = salias::status::channel_status(name).unwrap();
    assert!(matches!(status.publishers[0].holder, SlotHolder::Alive { pid } if pid != me));
    // Its own connection claims a slot as itself and publishes.
    let own = FifoFanout::<Sample>::connect(name).unwrap();
    let mut own_publisher = own.publisher().unwrap();
    let status = salias::status::channel_status(name).unwrap();
    assert_eq!(
        status.publishers[own_publisher.slot()].holder,
        SlotHolder::Alive { pid: me }
    );
    own_publisher.offer(&Sample::new(1, 0)).unwrap();
}

#[test]
fn a_forked_child_never_acts_as_its_parent() {
    if role().as_deref() != Some("forks") {
        // Forked from a single-threaded child process of its own, not from the test harness.
        wait_all(vec![("forks", spawn(TEST, "forks", &[]))], Duration::from_secs(60));
        return;
    }
    let name = unique_name("forked");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).publishers(2).subscribers(2)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    // SAFETY: this process is single-threaded; the child runs Rust code and exits.
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    if child == 0 {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            in_child(&name, channel, publisher, subscriber)
        }));
        // SAFETY: ends the forked child at once, without running the parent's exit path.
        unsafe { libc::_exit(i32::from(outcome.is_err())) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the forked child failed: {status:#x}"
    );
    // The parent's handles are untouched: its slot, its channel, and the child's message.
    let holder = salias::status::channel_status(&name).unwrap().publishers[publisher.slot()].holder;
    assert_eq!(
        holder,
        SlotHolder::Alive {
            pid: std::process::id()
        }
    );
    let received = subscriber.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(*received, Sample::new(1, 0));
    drop(received);
    publisher.offer(&Sample::new(0, 0)).unwrap();
    assert_eq!(
        *subscriber.recv_timeout(Duration::from_secs(10)).unwrap(),
        Sample::new(0, 0)
    );
}
