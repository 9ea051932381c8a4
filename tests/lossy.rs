//! Lossy subscribers across processes: publishers never wait for them, they are never
//! handed a torn message, and every message they miss is counted (FIFO: per message, raw
//! variable-size frames included; Ordered: as gaps of sequence numbers). And a tethered
//! subscriber that holds a publisher back past the channel's `tether_timeout` is demoted.

mod support;

use std::time::Duration;

use salias::{
    Config, FifoFanout, FifoMpsc, OrderedFanout, PublishError, RawFifoFanout, ReceiveError, status::SubscriberKind,
};
use support::{Checker, Sample, SplitMix, report, spawn, unique_name, wait_all};

const WATCHDOG: Duration = Duration::from_secs(300);
/// A small ring, so publishers lap a sleeping subscriber often.
const CAPACITY: usize = 16 << 10;

/// Waits until the first publisher of `name` has published at least `count` messages.
fn wait_published(name: &str, count: u64) {
    while salias::status::channel_status(name).unwrap().publishers[0].published < count {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Waits until `count` subscribers of `name` have joined: each holds its slot and shows a
/// cursor in every ring. A slot is held from the start of a join, before the subscriber
/// picks where it starts; a message published then may lie before its start.
fn wait_subscribers(name: &str, count: usize) {
    let joined = || {
        let status = salias::status::channel_status(name).unwrap();
        status
            .subscribers
            .iter()
            .filter(|s| s.holder != salias::status::SlotHolder::Free && s.cursors.iter().all(Option::is_some))
            .count()
    };
    while joined() < count {
        std::thread::sleep(Duration::from_millis(1));
    }
}

mod fifo {
    use super::*;

    const TEST: &str = "fifo::a_sleeping_lossy_subscriber_never_holds_the_publisher_back";
    /// Messages per round: half a ring, so a tethered subscriber that has received (and
    /// so released) the previous round can never be what refuses an offer.
    const ROUND: u64 = (CAPACITY / 2 / 128) as u64;
    const ROUNDS: u64 = 400;
    const TOTAL: u64 = ROUND * ROUNDS;

    /// Publishes `ROUNDS` rounds, waiting for the tethered subscriber's acknowledgement of
    /// each before the next, and counts every refused offer.
    fn publisher() {
        let name: String = support::arg("NAME");
        let channel = FifoFanout::<Sample>::connect(&name).unwrap();
        let acks = FifoMpsc::<Sample>::connect(&format!("{name}-acks")).unwrap();
        let mut acks = acks.subscriber().unwrap();
        wait_subscribers(&name, 2);
        let mut publisher = channel.publisher().unwrap();
        let mut refused = 0u64;
        for round in 0..ROUNDS {
            for seq in round * ROUND..(round + 1) * ROUND {
                loop {
                    match publisher.offer(&Sample::new(0, seq)) {
                        Ok(()) => break,
                        Err(PublishError::Backpressured) => refused += 1,
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            let ack = acks.recv_timeout(WATCHDOG).unwrap();
            assert_eq!(ack.seq, (round + 1) * ROUND, "the tethered subscriber lost messages");
        }
        report(format!("refused {refused}"));
    }

    /// Receives everything, checking order and content, and acknowledges each round once
    /// it has received (and so released) all of it.
    fn tethered() {
        let name: String = support::arg("NAME");
        let channel = FifoFanout::<Sample>::connect(&name).unwrap();
        let acks = FifoMpsc::<Sample>::connect(&format!("{name}-acks")).unwrap();
        let mut ack = acks.publisher().unwrap();
        let mut subscriber = channel.subscriber().unwrap();
        let mut checker = Checker::new(1);
        for round in 0..ROUNDS {
            while checker.next[0] < (round + 1) * ROUND {
                let sample = subscriber.recv_timeout(WATCHDOG).unwrap();
                checker.check(sample.publisher_slot(), &sample);
            }
            // Out of messages: everything received is released now.
            assert!(subscriber.try_recv().unwrap().is_none());
            ack.send(&Sample::new(0, (round + 1) * ROUND)).unwrap();
        }
    }

    /// Receives while sleeping at random, and checks that every message is whole and that
    /// the gaps between them are exactly what it was told it missed.
    fn lossy() {
        let name: String = support::arg("NAME");
        let channel = FifoFanout::<Sample>::connect(&name).unwrap();
        let mut subscriber = channel.lossy_subscriber().unwrap();
        let status = salias::status::channel_status(&name).unwrap();
        assert_eq!(status.subscribers[subscriber.slot()].kind, SubscriberKind::Lossy);
        let mut random = SplitMix(7);
        let mut next = 0; // every number below was received or reported missed
        let mut first = true;
        while next < TOTAL {
            let sample = subscriber.recv_timeout(WATCHDOG).unwrap();
            assert_eq!(*sample, Sample::new(0, sample.seq), "a torn message was handed out");
            assert!(sample.seq >= next, "message {} again or out of order", sample.seq);
            assert_eq!(sample.missed_before(), sample.seq - next, "misses not counted exactly");
            next = sample.seq + 1;
            if first {
                // Asleep until the publisher is two rings ahead (or done): overrun for
                // certain, unless it already was before its first message.
                first = false;
                wait_published(&name, (sample.seq + 4 * ROUND + 1).min(TOTAL));
            } else if random.next().is_multiple_of(512) {
                std::thread::sleep(Duration::from_micros(random.next() % 3000));
            }
        }
        let (received, missed) = (subscriber.received(), subscriber.missed());
        assert_eq!(received + missed, TOTAL);
        assert!(missed > 0, "never overrun: the test proves nothing");
        assert_eq!(subscriber.losses().messages, missed);
        let shown = salias::status::channel_status(&name).unwrap().subscribers[subscriber.slot()].missed;
        assert_eq!(shown, missed, "status shows what it missed");
        report(format!("received {received} missed {missed}"));
    }

    #[test]
    fn a_sleeping_lossy_subscriber_never_holds_the_publisher_back() {
        match support::role().as_deref() {
            Some("publisher") => return publisher(),
            Some("tethered") => return tethered(),
            Some("lossy") => return lossy(),
            _ => {}
        }
        let name = unique_name("lossy-fifo");
        let config = Config::new(&name).capacity(CAPACITY).subscribers(2);
        let _channel = FifoFanout::<Sample>::create(&config).unwrap();
        let _acks = FifoMpsc::<Sample>::create(&Config::new(format!("{name}-acks"))).unwrap();
        let args = [("NAME", name)];
        let reports = wait_all(
            vec![
                ("publisher", spawn(TEST, "publisher", &args)),
                ("tethered", spawn(TEST, "tethered", &args)),
                ("lossy", spawn(TEST, "lossy", &args)),
            ],
            WATCHDOG,
        );
        // The tethered subscriber had released every earlier round: no refusal is its.
        assert_eq!(
            reports[0],
            ["refused 0"],
            "the lossy subscriber held the publisher back"
        );
        println!("{:?}", reports[2]);
    }
}

mod raw {
    use super::*;

    const TEST: &str = "raw::variable_size_frames_are_counted_exactly";
    const LARGE_TEST: &str = "raw::large_frames_being_overwritten_are_never_handed_out";

    /// Message `seq`: its number, then `len - 8` bytes derived from it; `large` ones are
    /// nearly a quarter ring each, so the publisher often overwrites one while it is
    /// copied out.
    fn message(seq: u64, large: bool, out: &mut Vec<u8>) {
        let len = if large { 4000 } else { 8 + (seq * 37 % 200) as usize };
        out.clear();
        out.extend_from_slice(&seq.to_le_bytes());
        let mut mix = SplitMix(seq);
        out.extend((8..len).map(|_| mix.next() as u8));
    }

    fn publisher() {
        let channel = RawFifoFanout::connect(&support::arg::<String>("NAME")).unwrap();
        let (total, large): (u64, bool) = (support::arg("TOTAL"), support::arg("LARGE"));
        let mut publisher = channel.publisher().unwrap();
        let mut bytes = Vec::new();
        for seq in 0..total {
            message(seq, large, &mut bytes);
            // Nobody holds it back: every offer succeeds.
            publisher.offer(&bytes).unwrap();
        }
    }

    /// Receives `total` messages' worth from a publisher of `large` or variable-size
    /// messages, sleeping at random if `naps`; checks every message whole and every miss
    /// counted. Returns the subscriber for more checks.
    fn receive(
        test: &str,
        total: u64,
        large: bool,
        naps: bool,
    ) -> (RawFifoFanout, salias::LossySubscriber<salias::Bytes>) {
        let name = unique_name("lossy-raw");
        let channel = RawFifoFanout::create(&Config::new(&name).capacity(CAPACITY)).unwrap();
        let mut subscriber = channel.lossy_subscriber().unwrap();
        let args = [
            ("NAME", name),
            ("TOTAL", total.to_string()),
            ("LARGE", large.to_string()),
        ];
        let child = spawn(test, "publisher", &args);
        let (mut buffer, mut want) = (vec![0u8; channel.max_message_size()], Vec::new());
        let mut random = SplitMix(11);
        let mut next = 0;
        while next < total {
            let len = subscriber.recv_into(&mut buffer, Some(WATCHDOG)).unwrap();
            let seq = u64::from_le_bytes(buffer[..8].try_into().unwrap());
            assert!(seq >= next && seq < total, "message {seq} again, out of order, or torn");
            message(seq, large, &mut want);
            assert!(buffer[..*len] == want[..], "a torn message was handed out");
            assert_eq!(len.missed_before(), seq - next, "misses not counted exactly");
            next = seq + 1;
            if naps && random.next().is_multiple_of(256) {
                std::thread::sleep(Duration::from_micros(random.next() % 2000));
            }
        }
        wait_all(vec![("publisher", child)], WATCHDOG);
        assert_eq!(subscriber.received() + subscriber.missed(), total);
        assert!(subscriber.missed() > 0, "never overrun: the test proves nothing");
        (channel, subscriber)
    }

    #[test]
    fn variable_size_frames_are_counted_exactly() {
        if support::role().as_deref() == Some("publisher") {
            return publisher();
        }
        let (channel, mut subscriber) = receive(TEST, 100_000, false, true);
        let last = subscriber.losses().last.clone().expect("an overrun");
        assert!(last.positions.start < last.positions.end && last.messages > 0);
        // Too small a buffer: refused, and the message is still there.
        let mut small = [0u8; 4];
        channel.publisher().unwrap().offer(&[1u8; 9]).unwrap();
        assert_eq!(
            subscriber.try_recv_into(&mut small).map(|m| m.map(|m| *m)),
            Err(ReceiveError::BufferTooSmall { len: 9, buffer: 4 })
        );
        let mut buffer = vec![0u8; channel.max_message_size()];
        assert_eq!(subscriber.try_recv_into(&mut buffer).unwrap().map(|m| *m), Some(9));
    }

    /// A subscriber that reads without pause, a few frames behind a publisher of large
    /// frames, is often lapped in the middle of a copy: the frontier check must catch it.
    #[test]
    fn large_frames_being_overwritten_are_never_handed_out() {
        if support::role().as_deref() == Some("publisher") {
            return publisher();
        }
        receive(LARGE_TEST, 50_000, true, false);
    }
}

mod ordered {
    use super::*;

    const TEST: &str = "ordered::a_lossy_subscriber_sees_an_increasing_subsequence";
    const PER_PUBLISHER: u64 = 60_000;
    const PUBLISHERS: u64 = 2;

    fn publisher() {
        let channel = OrderedFanout::<Sample>::connect(&support::arg::<String>("NAME")).unwrap();
        let producer: u64 = support::arg("PRODUCER");
        let mut publisher = channel.publisher().unwrap();
        for seq in 0..PER_PUBLISHER {
            publisher.send(&Sample::new(producer, seq)).unwrap();
        }
    }

    #[test]
    fn a_lossy_subscriber_sees_an_increasing_subsequence() {
        if support::role().as_deref() == Some("publisher") {
            return publisher();
        }
        let name = unique_name("lossy-ordered");
        let config = Config::new(&name).capacity(CAPACITY).publishers(PUBLISHERS as u32);
        let channel = OrderedFanout::<Sample>::create(&config).unwrap();
        let mut subscriber = channel.lossy_subscriber().unwrap();
        let children: Vec<_> = (0..PUBLISHERS)
            .map(|p| {
                let args = [("NAME", name.clone()), ("PRODUCER", p.to_string())];
                ("publisher", spawn(TEST, "publisher", &args))
            })
            .collect();
        let total = PER_PUBLISHER * PUBLISHERS;
        let mut random = SplitMix(5);
        let (mut next, mut last_of) = (0, [None::<u64>; PUBLISHERS as usize]);
        while next < total {
            let sample = subscriber.recv_timeout(WATCHDOG).unwrap();
            let info = sample.info();
            assert_eq!(*sample, Sample::new(sample.producer, sample.seq), "a torn message");
            assert!(info.sequence() >= next, "not strictly increasing");
            assert_eq!(
                info.gap_before(),
                info.sequence() - next,
                "a number neither received nor reported"
            );
            // Each publisher's own messages keep their order.
            let last = &mut last_of[sample.producer as usize];
            assert!(last.is_none_or(|l| sample.seq > l));
            *last = Some(sample.seq);
            next = info.sequence() + 1;
            if random.next().is_multiple_of(256) {
                std::thread::sleep(Duration::from_micros(random.next() % 3000));
            }
        }
        wait_all(children, WATCHDOG);
        let gaps = subscriber.gaps();
        assert_eq!(subscriber.received() + gaps.missing, total);
        assert!(gaps.missing > 0, "never overrun: the test proves nothing");
        assert_eq!(subscriber.next_sequence(), total);
    }
}

mod demotion {
    use super::*;

    const TEST: &str = "demotion::a_stuck_tethered_subscriber_is_demoted_after_the_timeout";
    /// Four rings' worth: only a publisher that stopped waiting gets them all out.
    const TOTAL: u64 = 4 * (CAPACITY / 128) as u64;

    fn publisher() {
        let channel = FifoFanout::<Sample>::connect(&support::arg::<String>("NAME")).unwrap();
        let mut publisher = channel.publisher().unwrap();
        for seq in 0..TOTAL {
            publisher.send(&Sample::new(0, seq)).unwrap();
        }
    }

    #[test]
    fn a_stuck_tethered_subscriber_is_demoted_after_the_timeout() {
        if support::role().as_deref() == Some("publisher") {
            return publisher();
        }
        let name = unique_name("lossy-demote");
        let config = Config::new(&name)
            .capacity(CAPACITY)
            .tether_timeout(Duration::from_millis(1));
        let channel = FifoFanout::<Sample>::create(&config).unwrap();
        // Tethered, and never receives while the publisher runs.
        let mut stuck = channel.subscriber().unwrap();
        let status = salias::status::channel_status(&name).unwrap();
        assert_eq!(status.subscribers[stuck.slot()].kind, SubscriberKind::Tethered);
        wait_all(
            vec![("publisher", spawn(TEST, "publisher", &[("NAME", name.clone())]))],
            WATCHDOG,
        );
        let status = salias::status::channel_status(&name).unwrap();
        let slot = &status.subscribers[stuck.slot()];
        assert_eq!((slot.kind, slot.demoted), (SubscriberKind::Lossy, true));
        // Told, and told again until it goes on as lossy: no view of overwritten memory.
        assert_eq!(stuck.try_recv().map(|m| m.is_some()), Err(ReceiveError::Demoted));
        assert_eq!(stuck.drain(1, |_, _| {}), Err(ReceiveError::Demoted));
        let mut lossy = stuck.into_lossy().unwrap();
        let mut next = 0;
        while next < TOTAL {
            let sample = lossy.try_recv().unwrap().expect("the publisher has finished");
            assert_eq!(*sample, Sample::new(0, sample.seq), "a torn message");
            assert_eq!(sample.missed_before(), sample.seq - next);
            next = sample.seq + 1;
        }
        assert!(lossy.try_recv().unwrap().is_none());
        assert_eq!(lossy.received() + lossy.missed(), TOTAL);
        assert!(lossy.missed() > 0);
    }

    /// Without a tether timeout, the same stuck subscriber holds the publisher back.
    #[test]
    fn without_a_timeout_a_stuck_subscriber_holds_the_publisher_back() {
        let name = unique_name("lossy-no-demote");
        let channel = FifoFanout::<Sample>::create(&Config::new(&name).capacity(CAPACITY)).unwrap();
        let mut stuck = channel.subscriber().unwrap();
        let mut publisher = channel.publisher().unwrap();
        let mut sent = 0;
        while publisher.offer(&Sample::new(0, sent)).is_ok() {
            sent += 1;
        }
        assert_eq!(
            publisher.send_timeout(&Sample::new(0, sent), Duration::from_millis(20)),
            Err(PublishError::TimedOut)
        );
        assert_eq!(stuck.try_recv().unwrap().map(|s| s.seq), Some(0));
    }
}

/// Every new error says what was wrong and how to fix it.
#[test]
fn new_errors_say_what_to_do() {
    let demoted = ReceiveError::Demoted.to_string();
    assert!(
        demoted.contains("tether_timeout") && demoted.contains("into_lossy()"),
        "{demoted}"
    );
    let small = ReceiveError::BufferTooSmall { len: 9, buffer: 4 }.to_string();
    assert!(
        small.contains("9 bytes") && small.contains("4-byte") && small.contains("max_message_size"),
        "{small}"
    );
    let name = unique_name("lossy-config");
    let mpsc = FifoMpsc::<Sample>::create(&Config::new(&name).tether_timeout(Duration::from_secs(1)));
    let text = mpsc.unwrap_err().to_string();
    assert!(
        text.contains("tether_timeout") && text.contains("Fanout channel"),
        "{text}"
    );
    let zero = FifoFanout::<Sample>::create(&Config::new(&name).tether_timeout(Duration::ZERO));
    let text = zero.unwrap_err().to_string();
    assert!(
        text.contains("tether_timeout") && text.contains("positive duration"),
        "{text}"
    );
}

/// A 32-byte message: with its header, 48 bytes a frame, about 85 frames in a 4 KiB ring.
#[derive(
    salias::SaliasMessage,
    zerocopy::FromBytes,
    zerocopy::IntoBytes,
    zerocopy::Immutable,
    zerocopy::KnownLayout,
    Clone,
    Copy,
    Debug,
    PartialEq,
)]
#[repr(C)]
struct Small {
    seq: u64,
    words: [u64; 3],
}

/// A lossy reader that stays a few messages behind the publisher: a publisher overwrites
/// only what a reader has fallen a ring behind on, so it misses nothing. `offer` 20,000
/// times, and after every third `try_recv` until nothing is left.
fn a_reader_a_few_behind_misses_nothing<M: salias::kind::Mode>(capacity: usize) {
    let name = unique_name("lossy-behind");
    let channel = salias::Channel::<Small, M, salias::Fanout>::create(&Config::new(&name).capacity(capacity)).unwrap();
    let mut reader = channel.lossy_subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    let (mut received, mut next) = (0u64, 0u64);
    for seq in 0..20_000u64 {
        publisher.offer(&Small { seq, words: [seq; 3] }).unwrap();
        if seq % 3 == 2 {
            while let Some(message) = reader.try_recv().unwrap() {
                assert_eq!((message.seq, message.words), (next, [next; 3]), "capacity {capacity}");
                assert_eq!(message.missed_before(), 0, "message {next} reported a loss");
                next += 1;
                received += 1;
            }
        }
    }
    while let Some(message) = reader.try_recv().unwrap() {
        assert_eq!(message.seq, next);
        next += 1;
        received += 1;
    }
    assert_eq!(
        (received, reader.missed()),
        (20_000, 0),
        "{} ring of {capacity} bytes",
        M::NAME
    );
}

#[test]
fn a_fifo_lossy_reader_a_few_behind_misses_nothing() {
    a_reader_a_few_behind_misses_nothing::<salias::Fifo>(4096);
    a_reader_a_few_behind_misses_nothing::<salias::Fifo>(1 << 20);
}

#[test]
fn an_ordered_lossy_reader_a_few_behind_misses_nothing() {
    a_reader_a_few_behind_misses_nothing::<salias::Ordered>(4096);
    a_reader_a_few_behind_misses_nothing::<salias::Ordered>(1 << 20);
}

/// A reader that does fall a ring behind still counts every loss exactly: received plus
/// missed is everything published, and every message it gets is whole.
fn a_reader_lapped_counts_exactly<M: salias::kind::Mode>() {
    let name = unique_name("lossy-lapped");
    let channel = salias::Channel::<Small, M, salias::Fanout>::create(&Config::new(&name).capacity(4096)).unwrap();
    let mut reader = channel.lossy_subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut received = 0u64;
    for seq in 0..20_000u64 {
        publisher.offer(&Small { seq, words: [seq; 3] }).unwrap();
        // Every 500 messages (about six rings) it reads one, then everything left.
        if seq % 500 == 499 {
            while let Some(message) = reader.try_recv().unwrap() {
                assert_eq!(message.words, [message.seq; 3], "torn message");
                received += 1;
            }
        }
    }
    assert!(reader.missed() > 0, "{}: a lapped reader missed nothing", M::NAME);
    assert_eq!(received + reader.missed(), 20_000, "{}: received + missed", M::NAME);
}

#[test]
fn a_lapped_lossy_reader_counts_every_loss() {
    a_reader_lapped_counts_exactly::<salias::Fifo>();
    a_reader_lapped_counts_exactly::<salias::Ordered>();
}
