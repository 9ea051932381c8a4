//! Last value: any process reads the latest message a Fanout channel's publishers
//! committed, without a subscriber slot and without holding them back; never torn, even
//! while a publisher in another process laps its ring as fast as it can; an error, never a
//! crash, once the ring is cut under it.

mod support;

use std::time::{Duration, Instant};

use salias::receive::Start;
use salias::{Config, Error, FifoFanout, OrderedFanout, PublishError, RawFifoFanout, RawOrderedFanout, ReceiveError};
use support::{Sample, arg, role, spawn, unique_name, wait_all};

/// A small ring, so a flooding publisher laps it every few microseconds.
const CAPACITY: usize = 16 << 10;

#[test]
fn latest_is_each_publishers_last_message() {
    let name = unique_name("latest-fifo");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY).publishers(2)).unwrap();
    assert!(channel.latest(0).unwrap().is_none(), "nothing published yet");
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    for seq in 0..1_000 {
        publishers[0].offer(&Sample::new(0, seq)).unwrap();
    }
    publishers[1].offer(&Sample::new(1, 0)).unwrap();
    let latest = channel.latest(0).unwrap().unwrap();
    assert_eq!((*latest, latest.info().publisher_slot()), (Sample::new(0, 999), 0));
    assert_eq!(*channel.latest(1).unwrap().unwrap(), Sample::new(1, 0));
    // Read again: the same, nothing consumed.
    assert_eq!(*channel.latest(0).unwrap().unwrap(), Sample::new(0, 999));
    // No subscriber slot was taken.
    let status = salias::status::channel_status(&name).unwrap();
    assert!(
        status
            .subscribers
            .iter()
            .all(|s| s.holder == salias::status::SlotHolder::Free)
    );
    let error = channel.latest(2).unwrap_err();
    assert!(
        matches!(error, Error::SlotOutOfRange { slot: 2, slots: 2, .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("has publisher slots 0 to 1, not 2"),
        "{error}"
    );
}

#[test]
fn ordered_latest_is_the_highest_number_and_steps_over_declared_gaps() {
    let name = unique_name("latest-ordered");
    let channel = OrderedFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY).publishers(2)).unwrap();
    assert!(channel.latest_in_order().unwrap().is_none());
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    // Publisher 1 sends every third number, the last one (500) among them.
    for n in 0..501u64 {
        let p = usize::from(n % 3 == 2);
        publishers[p].offer(&Sample::new(p as u64, n)).unwrap();
    }
    let latest = channel.latest_in_order().unwrap().unwrap();
    assert_eq!(
        (latest.seq, latest.info().sequence(), latest.info().publisher_slot()),
        (500, 500, 1)
    );
    assert_eq!(channel.latest(0).unwrap().unwrap().seq, 499);
    // Numbers declared lost are no message: the latest is still the last one sent.
    publishers[1].publish_gap(3).unwrap();
    assert_eq!(channel.latest(1).unwrap().unwrap().seq, 500);
    assert_eq!(channel.latest_in_order().unwrap().unwrap().seq, 500);
}

#[test]
fn raw_latest_copies_into_a_buffer_and_refuses_one_too_small() {
    let name = unique_name("latest-raw");
    let channel = RawFifoFanout::create(&Config::new(&name).capacity(CAPACITY).max_message_size(100)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for len in 1..=100 {
        publisher.offer(&vec![len as u8; len]).unwrap();
    }
    publisher.offer(b"last").unwrap();
    let mut buffer = [0u8; 100];
    let copied = channel.latest_into(0, &mut buffer).unwrap().unwrap();
    assert_eq!(&buffer[..*copied], b"last");
    publisher.offer(&[7u8; 100]).unwrap();
    let error = channel.latest_into(0, &mut buffer[..10]).unwrap_err();
    assert!(
        matches!(
            error,
            Error::Receive(ReceiveError::BufferTooSmall { len: 100, buffer: 10 })
        ),
        "{error:?}"
    );

    let ordered = RawOrderedFanout::create(&Config::new(format!("{name}-o")).publishers(2)).unwrap();
    let mut publishers = [ordered.publisher().unwrap(), ordered.publisher().unwrap()];
    publishers[1].offer(b"first").unwrap();
    publishers[0].offer(b"second").unwrap();
    let copied = ordered.latest_in_order_into(&mut buffer).unwrap().unwrap();
    assert_eq!((&buffer[..*copied], copied.info().sequence()), (&b"second"[..], 1));
}

/// The publisher in another process floods a 16 KiB ring with no subscriber to wait for;
/// every latest read is a whole message, as its publisher wrote it, and later reads never
/// go back.
#[test]
fn latest_is_never_torn_while_a_publisher_laps_its_ring() {
    const TEST: &str = "latest_is_never_torn_while_a_publisher_laps_its_ring";
    if role().is_some() {
        let name: String = arg("NAME");
        let stop = std::path::PathBuf::from(arg::<String>("STOP"));
        let channel = FifoFanout::<Sample>::connect(&name).unwrap();
        let mut publisher = channel.publisher().unwrap();
        let mut seq = 0;
        while stop.exists() {
            for _ in 0..256 {
                match publisher.offer(&Sample::new(0, seq)) {
                    Ok(()) => seq += 1,
                    Err(e @ PublishError::Backpressured) => panic!("held back: {e}"),
                    Err(e) => panic!("{e}"),
                }
            }
        }
        return;
    }
    let name = unique_name("latest-flood");
    let stop = std::env::temp_dir().join(format!("{name}-running"));
    std::fs::write(&stop, b"").unwrap();
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY)).unwrap();
    let publisher = spawn(
        TEST,
        "publisher",
        &[("NAME", name.clone()), ("STOP", stop.display().to_string())],
    );
    let deadline = Instant::now() + Duration::from_secs(2);
    let (mut reads, mut last, mut moved) = (0u64, 0u64, 0u64);
    while Instant::now() < deadline || moved < 100 {
        let Some(latest) = channel.latest(0).unwrap() else {
            continue;
        };
        let sample = *latest;
        assert_eq!(sample, Sample::new(0, sample.seq), "torn: read {reads}");
        assert!(sample.seq >= last, "went back from {last} to {}", sample.seq);
        moved += u64::from(sample.seq > last);
        last = sample.seq;
        reads += 1;
    }
    // A lossy subscriber beside it reads the same ring: it sees the flood too.
    let mut lossy = channel.lossy_subscriber_from(Start::End).unwrap();
    assert!(lossy.recv_timeout(Duration::from_secs(5)).is_ok());
    std::fs::remove_file(&stop).unwrap();
    wait_all(vec![("publisher", publisher)], Duration::from_secs(60));
    assert!(
        last > 10 * (CAPACITY / 80) as u64,
        "the ring was lapped many times: {last}"
    );
}

/// A channel whose ring another process cut to nothing: reading the latest value is an
/// error that says so, never a crash or a message of zeros.
#[test]
fn latest_of_a_truncated_ring_is_an_error() {
    if std::env::var("SALIAS_SANITIZER").as_deref() == Ok("thread") {
        // As in tests/truncation.rs: the fault may land inside ThreadSanitizer's atomics.
        support::skipped(
            "latest_of_a_truncated_ring_is_an_error",
            "ThreadSanitizer's runtime is not reentrant for a fault inside its atomics",
        );
        return;
    }
    let name = unique_name("latest-truncated");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..100 {
        publisher.offer(&Sample::new(0, seq)).unwrap();
    }
    assert_eq!(channel.latest(0).unwrap().unwrap().seq, 99);
    let ring = format!("/dev/shm{}", salias::__private::shm_object_names(&name)[1]);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&ring)
        .unwrap()
        .set_len(0)
        .unwrap();
    let error = channel.latest(0).unwrap_err();
    assert!(matches!(error, Error::Corrupt { .. }), "{error:?}");
    assert!(error.to_string().contains("truncated its shared memory"), "{error}");
}
