//! Channels used by separate processes: each test re-executes this binary once per role.
//! Run only these with `cargo test cross_process`.

mod support;

use std::time::Duration;

use salias::{
    Channel, Config, Error, Fanout, Fifo, FifoFanout, FifoMpsc, Mpsc, Ordered, PublishError, RawFifoMpsc, kind::Mode,
    receive::MessageInfo, wait::Adaptive,
};
use support::{
    Checker, IdleBursts, Sample, SplitMix, arg, report, reported, role, send_batch, spawn, unique_name, wait_all,
};

const WATCHDOG: Duration = Duration::from_secs(300);

#[test]
fn cross_process_two_publishers_one_subscriber() {
    const TEST: &str = "cross_process_two_publishers_one_subscriber";
    const PER_PUBLISHER: u64 = 2_000_000;
    match role().as_deref() {
        Some("publisher") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut publisher = channel.publisher().unwrap();
            let producer: u64 = arg("PRODUCER");
            let mut batch = Vec::with_capacity(16);
            let mut seq = 0;
            while seq < PER_PUBLISHER {
                // Alternate the three publishing paths so each crosses processes.
                match seq % 3 {
                    0 => {
                        publisher.send(&Sample::new(producer, seq)).unwrap();
                        seq += 1;
                    }
                    1 => loop {
                        match publisher.claim() {
                            Ok(mut claim) => {
                                *claim = Sample::new(producer, seq);
                                claim.commit();
                                seq += 1;
                                break;
                            }
                            Err(PublishError::Backpressured) => std::thread::yield_now(),
                            Err(e) => panic!("{e}"),
                        }
                    },
                    _ => {
                        batch.clear();
                        let end = (seq + 16).min(PER_PUBLISHER);
                        batch.extend((seq..end).map(|s| Sample::new(producer, s)));
                        send_batch(&mut publisher, &batch);
                        seq = end;
                    }
                }
            }
            report(format!("backpressured {}", publisher.backpressured()));
        }
        Some("subscriber") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            let mut checker = Checker::new(2);
            let total = 2 * PER_PUBLISHER;
            let mut received = 0;
            while received < total {
                let got = subscriber
                    .drain(256, |info, sample| checker.check(info.publisher_slot(), sample))
                    .unwrap();
                received += got as u64;
                if got == 0 {
                    // Exercise the blocking path too.
                    let message = subscriber.recv().unwrap();
                    let slot = message.publisher_slot();
                    checker.check(slot, &message);
                    received += 1;
                }
            }
            assert!(subscriber.try_recv().unwrap().is_none(), "more messages than were sent");
            report(format!("received {received}"));
        }
        _ => {
            let name = unique_name("two-pub");
            let _channel = FifoMpsc::<Sample>::create(&Config::new(&name).publishers(2)).unwrap();
            let args = |producer: u64| vec![("NAME", name.clone()), ("PRODUCER", producer.to_string())];
            let children = vec![
                ("subscriber", spawn(TEST, "subscriber", &args(0))),
                ("publisher 0", spawn(TEST, "publisher", &args(0))),
                ("publisher 1", spawn(TEST, "publisher", &args(1))),
            ];
            let reports = wait_all(children, WATCHDOG);
            assert_eq!(reports[0], vec![format!("received {}", 2 * PER_PUBLISHER)]);
        }
    }
}

/// Raw frame length for message `seq` of the wrap test: 0 to 1000 bytes, mostly odd.
fn raw_len(mix: &mut SplitMix) -> usize {
    (mix.next() % 1001) as usize
}

fn raw_byte(seq: u64, index: usize) -> u8 {
    (seq.wrapping_mul(31) as usize + index * 7) as u8
}

#[test]
fn cross_process_raw_frames_wrap_the_ring() {
    const TEST: &str = "cross_process_raw_frames_wrap_the_ring";
    const MESSAGES: u64 = 200_000;
    const CAPACITY: usize = 4096;
    match role().as_deref() {
        Some("publisher") => {
            let channel = RawFifoMpsc::connect(&arg::<String>("NAME")).unwrap();
            let mut publisher = channel.publisher().unwrap();
            let mut mix = SplitMix(7);
            let mut buffer = vec![0u8; 1000];
            for seq in 0..MESSAGES {
                let len = raw_len(&mut mix);
                if seq % 2 == 0 {
                    for (i, byte) in buffer[..len].iter_mut().enumerate() {
                        *byte = raw_byte(seq, i);
                    }
                    publisher.send(&buffer[..len]).unwrap();
                } else {
                    // Claim more than needed and commit only `len`, writing in place.
                    let mut claim = loop {
                        match publisher.claim(1000) {
                            Ok(claim) => break claim,
                            Err(PublishError::Backpressured) => std::thread::yield_now(),
                            Err(e) => panic!("{e}"),
                        }
                    };
                    for (i, byte) in claim[..len].iter_mut().enumerate() {
                        *byte = raw_byte(seq, i);
                    }
                    claim.commit_len(len).unwrap();
                }
            }
        }
        Some("subscriber") => {
            let channel = RawFifoMpsc::connect(&arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            let mut mix = SplitMix(7);
            for seq in 0..MESSAGES {
                let expected = raw_len(&mut mix);
                let message = subscriber.recv().unwrap();
                assert_eq!(message.len(), expected, "message {seq} has the wrong length");
                for (i, byte) in message.iter().enumerate() {
                    assert_eq!(*byte, raw_byte(seq, i), "message {seq} byte {i} corrupted");
                }
            }
            assert!(subscriber.try_recv().unwrap().is_none());
            report(format!("received {MESSAGES}"));
        }
        _ => {
            // The frames straddling the ring's end are what the double mapping is for.
            let mut mix = SplitMix(7);
            let (mut pos, mut straddling) = (0usize, 0u64);
            for _ in 0..MESSAGES {
                let frame = (16 + raw_len(&mut mix)).next_multiple_of(8);
                if pos % CAPACITY + frame > CAPACITY {
                    straddling += 1;
                }
                pos += frame;
            }
            assert!(straddling > 10_000, "only {straddling} frames wrap");

            let name = unique_name("raw-wrap");
            let config = Config::new(&name).capacity(CAPACITY).max_message_size(1000);
            let _channel = RawFifoMpsc::create(&config).unwrap();
            let args = vec![("NAME", name.clone())];
            let children = vec![
                ("subscriber", spawn(TEST, "subscriber", &args)),
                ("publisher", spawn(TEST, "publisher", &args)),
            ];
            let reports = wait_all(children, WATCHDOG);
            assert_eq!(reports[0], vec![format!("received {MESSAGES}")]);
        }
    }
}

#[test]
fn cross_process_full_ring_backpressure_loses_nothing() {
    const TEST: &str = "cross_process_full_ring_backpressure_loses_nothing";
    const MESSAGES: u64 = 100_000;
    match role().as_deref() {
        Some("publisher") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut publisher = channel.publisher().unwrap();
            let mut refused = 0u64;
            for seq in 0..MESSAGES {
                let sample = Sample::new(0, seq);
                loop {
                    match publisher.offer(&sample) {
                        Ok(()) => break,
                        Err(PublishError::Backpressured) => {
                            refused += 1;
                            std::thread::yield_now();
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            assert_eq!(publisher.backpressured(), refused, "the slot's counter disagrees");
            report(format!("refused {refused}"));
        }
        Some("subscriber") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            let mut checker = Checker::new(1);
            for seq in 0..MESSAGES {
                let message = subscriber.recv().unwrap();
                checker.check(message.publisher_slot(), &message);
                drop(message);
                // A slow consumer: stall now and then so the ring fills up.
                if seq % 5_000 == 0 {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            report(format!("received {MESSAGES}"));
        }
        _ => {
            let name = unique_name("full-ring");
            // One page: room for about 50 frames of 80 bytes.
            let config = Config::new(&name).capacity(4096);
            let _channel = FifoMpsc::<Sample>::create(&config).unwrap();
            let args = vec![("NAME", name.clone())];
            let children = vec![
                ("subscriber", spawn(TEST, "subscriber", &args)),
                ("publisher", spawn(TEST, "publisher", &args)),
            ];
            let reports = wait_all(children, WATCHDOG);
            assert_eq!(reports[0], vec![format!("received {MESSAGES}")]);
            let refused: u64 = reports[1][0].strip_prefix("refused ").unwrap().parse().unwrap();
            assert!(refused > 0, "the slow subscriber never filled the ring");
        }
    }
}

#[test]
fn cross_process_idle_subscriber_sleeps_and_wakes() {
    const TEST: &str = "cross_process_idle_subscriber_sleeps_and_wakes";
    const BURSTS: IdleBursts = IdleBursts::FIVE_GAPS;
    match role().as_deref() {
        Some("publisher") => BURSTS.publish(),
        Some("subscriber") => BURSTS.receive(Adaptive::default()),
        _ => {
            let cpu = reported(&BURSTS.run(TEST, WATCHDOG), "cpu_micros");
            // Five idle gaps of 400 ms: a spinning subscriber would burn ~2 s of CPU. A
            // sleeping one spends its short spin-then-yield phase per gap and nothing else.
            let idle_total = BURSTS.idle_micros();
            eprintln!("idle subscriber: {cpu} µs CPU over {idle_total} µs idle");
            assert!(
                cpu * 4 < idle_total,
                "the idle subscriber used {cpu} µs of CPU over {idle_total} µs of idleness"
            );
        }
    }
}

#[test]
fn cross_process_crash_owner_killed_then_recreated() {
    const TEST: &str = "cross_process_crash_owner_killed_then_recreated";
    const ROUNDS: u64 = 10;
    match role().as_deref() {
        Some("owner") => {
            let _channel = FifoMpsc::<Sample>::create(&Config::new(arg::<String>("NAME"))).unwrap();
            report("ready");
            std::thread::sleep(Duration::from_secs(600));
        }
        _ => {
            let mut mix = SplitMix(5);
            let mut recovery = Vec::new();
            for round in 0..ROUNDS {
                let name = unique_name("stale-owner");
                let mut owner = spawn(TEST, "owner", &[("NAME", name.clone())]);
                let owner_pid = owner.0.id();
                // Half the rounds kill the owner once the channel is ready, half at a random
                // moment, possibly while it is still creating the channel.
                let ready = round % 2 == 0;
                if ready {
                    assert_eq!(owner.next_report(), "ready");
                } else {
                    std::thread::sleep(Duration::from_micros(mix.next() % 3_000));
                }
                drop(owner); // SIGKILL, then reap

                match FifoMpsc::<Sample>::connect(&name) {
                    Err(Error::Stale { owner_pid: pid, .. }) => assert_eq!(pid, owner_pid),
                    Err(Error::NotFound { .. } | Error::Initializing { .. }) if !ready => {}
                    other => panic!("round {round}: a channel whose owner died must not connect: {other:?}"),
                }
                let started = std::time::Instant::now();
                let channel = FifoMpsc::<Sample>::create(&Config::new(&name)).expect("create recovers a stale channel");
                recovery.push(started.elapsed());
                let mut publisher = channel.publisher().unwrap();
                let mut subscriber = channel.subscriber().unwrap();
                publisher.offer(&Sample::new(0, round)).unwrap();
                assert_eq!(*subscriber.try_recv().unwrap().unwrap(), Sample::new(0, round));
                drop((publisher, subscriber, channel));
                assert!(matches!(
                    salias::channel::remove_stale(&name),
                    Err(Error::NotFound { .. })
                ));
            }
            recovery.sort();
            eprintln!(
                "owner killed: create recovered the name in median {:?}, max {:?} over {ROUNDS} rounds",
                recovery[recovery.len() / 2],
                recovery[recovery.len() - 1]
            );
        }
    }
}

#[test]
fn cross_process_crash_stale_channel_is_removed_by_remove_stale() {
    const TEST: &str = "cross_process_crash_stale_channel_is_removed_by_remove_stale";
    match role().as_deref() {
        Some("owner") => {
            let _channel = FifoMpsc::<Sample>::create(&Config::new(arg::<String>("NAME"))).unwrap();
            report("ready");
            std::thread::sleep(Duration::from_secs(600));
        }
        _ => {
            let name = unique_name("remove-stale");
            let live = FifoMpsc::<Sample>::create(&Config::new(format!("{name}-live"))).unwrap();
            assert_eq!(
                salias::channel::remove_stale(live.name()),
                Ok(false),
                "a live channel is left alone"
            );
            let mut owner = spawn(TEST, "owner", &[("NAME", name.clone())]);
            assert_eq!(owner.next_report(), "ready");
            drop(owner);
            assert_eq!(salias::channel::remove_stale(&name), Ok(true));
            assert!(matches!(
                FifoMpsc::<Sample>::connect(&name),
                Err(Error::NotFound { .. })
            ));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Every kind across processes: 2 publisher processes and 2 subscriber processes each.

const KIND_PER_PUBLISHER: u64 = 1_000_000;

/// Global sequence of a message, for the modes that have one.
type SequenceOf<M> = fn(&MessageInfo<M>) -> Option<u64>;

fn fifo_sequence(_: &MessageInfo<Fifo>) -> Option<u64> {
    None
}

fn ordered_sequence(info: &MessageInfo<Ordered>) -> Option<u64> {
    Some(info.sequence())
}

/// What one subscriber saw: counts, per-publisher order (checked as it goes), and for
/// ordered kinds the gap-free sequence and a hash of (sequence, publisher, payload) that
/// must match across subscribers.
struct Seen {
    checker: Checker,
    received: u64,
    next_sequence: Option<u64>,
    hash: u64,
}

impl Seen {
    fn new(next: [u64; 2], next_sequence: Option<u64>) -> Self {
        let mut checker = Checker::new(2);
        checker.next = next.to_vec();
        Seen {
            checker,
            received: 0,
            next_sequence,
            hash: 0xcbf2_9ce4_8422_2325,
        }
    }

    fn record(&mut self, slot: usize, sequence: Option<u64>, sample: &Sample) {
        self.checker.check(slot, sample);
        if let Some(sequence) = sequence {
            let expected = *self.next_sequence.get_or_insert(sequence);
            assert_eq!(sequence, expected, "global sequence has a gap or goes backwards");
            self.next_sequence = Some(sequence + 1);
            for word in [sequence, sample.producer, sample.seq] {
                self.hash = (self.hash ^ word).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        self.received += 1;
    }

    fn report(&self) {
        report(format!(
            "received {} next {} {} sequence {} hash {:016x}",
            self.received,
            self.checker.next[0],
            self.checker.next[1],
            self.next_sequence.map_or("-".to_owned(), |s| s.to_string()),
            self.hash
        ));
    }
}

fn parse_report(line: &str) -> (u64, [u64; 2], Option<u64>, String) {
    let words: Vec<&str> = line.split_whitespace().collect();
    (
        words[1].parse().unwrap(),
        [words[3].parse().unwrap(), words[4].parse().unwrap()],
        words[6].parse().ok(),
        words[8].to_owned(),
    )
}

/// Publishes `KIND_PER_PUBLISHER` samples, alternating single offers and batches.
fn publish_kind<M: Mode, K: salias::kind::Topology>(name: &str, producer: u64) {
    let channel = Channel::<Sample, M, K>::connect(name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut seq = 0;
    let mut batch = Vec::with_capacity(8);
    while seq < KIND_PER_PUBLISHER {
        if seq % 2 == 0 {
            match publisher.send(&Sample::new(producer, seq)) {
                // The first subscriber handing over to the second (said once; the
                // message was not written, so it is sent again).
                Err(salias::PublishError::NoSubscriber) => continue,
                sent => sent.unwrap(),
            }
            seq += 1;
        } else {
            batch.clear();
            let end = (seq + 8).min(KIND_PER_PUBLISHER);
            batch.extend((seq..end).map(|s| Sample::new(producer, s)));
            send_batch(&mut publisher, &batch);
            seq = end;
        }
    }
    report(format!("backpressured {}", publisher.backpressured()));
}

/// Receives `count` messages on `subscriber`, starting from the given expectations.
fn receive_kind<M: Mode, K: salias::kind::Topology>(
    subscriber: &mut salias::Subscriber<Sample, M, K>,
    count: u64,
    seen: &mut Seen,
    sequence_of: SequenceOf<M>,
) {
    let start = seen.received;
    while seen.received - start < count {
        let want = (count - (seen.received - start)) as usize;
        let got = subscriber
            .drain(want.min(256), |info, sample| {
                seen.record(info.publisher_slot(), sequence_of(&info), sample)
            })
            .unwrap();
        if got == 0 && seen.received - start < count {
            let message = subscriber.recv().unwrap();
            seen.record(message.publisher_slot(), sequence_of(&message.info()), &message);
        }
    }
}

fn fanout_kind<M: Mode>(test: &str, sequence_of: SequenceOf<M>) {
    match role().as_deref() {
        Some("publisher") => publish_kind::<M, Fanout>(&arg::<String>("NAME"), arg("PRODUCER")),
        Some("subscriber") => {
            let channel = Channel::<Sample, M, Fanout>::connect(&arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            report("joined");
            let mut seen = Seen::new([0, 0], None);
            receive_kind(&mut subscriber, 2 * KIND_PER_PUBLISHER, &mut seen, sequence_of);
            assert!(subscriber.try_recv().unwrap().is_none(), "more messages than were sent");
            seen.report();
        }
        _ => {
            let name = unique_name("fanout");
            let config = Config::new(&name).publishers(2).subscribers(8).capacity(1 << 18);
            let _channel = Channel::<Sample, M, Fanout>::create(&config).unwrap();
            let args = |producer: u64| vec![("NAME", name.clone()), ("PRODUCER", producer.to_string())];
            // Subscribers join first: a fanout subscriber receives what is published after
            // it joined.
            let mut a = spawn(test, "subscriber", &args(0));
            let mut b = spawn(test, "subscriber", &args(0));
            assert_eq!(a.next_report(), "joined");
            assert_eq!(b.next_report(), "joined");
            let publishers = vec![
                ("publisher 0", spawn(test, "publisher", &args(0))),
                ("publisher 1", spawn(test, "publisher", &args(1))),
            ];
            wait_all(publishers, WATCHDOG);
            let (report_a, report_b) = (a.next_report(), b.next_report());
            let (count_a, next_a, sequence_a, hash_a) = parse_report(&report_a);
            let (count_b, next_b, sequence_b, hash_b) = parse_report(&report_b);
            let total = 2 * KIND_PER_PUBLISHER;
            assert_eq!(
                (count_a, count_b),
                (total, total),
                "every subscriber sees every message"
            );
            assert_eq!(next_a, [KIND_PER_PUBLISHER; 2]);
            assert_eq!(next_b, [KIND_PER_PUBLISHER; 2]);
            if M::ORDERED {
                assert_eq!(sequence_a, Some(total), "sequences 0..{total} without a gap");
                assert_eq!(sequence_b, Some(total));
                assert_eq!(hash_a, hash_b, "both subscribers saw the identical order");
            }
        }
    }
}

fn mpsc_kind<M: Mode>(test: &str, sequence_of: SequenceOf<M>) {
    match role().as_deref() {
        Some("publisher") => publish_kind::<M, Mpsc>(&arg::<String>("NAME"), arg("PRODUCER")),
        Some("subscriber") => {
            let channel = Channel::<Sample, M, Mpsc>::connect(&arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            let next = [arg("NEXT0"), arg("NEXT1")];
            let sequence = arg::<String>("SEQUENCE").parse().ok();
            let mut seen = Seen::new(next, sequence);
            receive_kind(&mut subscriber, arg("COUNT"), &mut seen, sequence_of);
            seen.report();
        }
        _ => {
            let name = unique_name("mpsc");
            let config = Config::new(&name).publishers(2).capacity(1 << 18);
            let _channel = Channel::<Sample, M, Mpsc>::create(&config).unwrap();
            let total = 2 * KIND_PER_PUBLISHER;
            let first_share = total / 3;
            let args = |extra: Vec<(&'static str, String)>| {
                let mut args = vec![("NAME", name.clone())];
                args.extend(extra);
                args
            };
            let publishers = vec![
                (
                    "publisher 0",
                    spawn(test, "publisher", &args(vec![("PRODUCER", "0".into())])),
                ),
                (
                    "publisher 1",
                    spawn(test, "publisher", &args(vec![("PRODUCER", "1".into())])),
                ),
            ];
            // One subscriber process takes the first third and leaves; a second one
            // resumes exactly where it stopped and takes the rest.
            let first = spawn(
                test,
                "subscriber",
                &args(vec![
                    ("COUNT", first_share.to_string()),
                    ("NEXT0", "0".into()),
                    ("NEXT1", "0".into()),
                    ("SEQUENCE", if M::ORDERED { "0".into() } else { "-".into() }),
                ]),
            );
            let first_report = wait_all(vec![("first subscriber", first)], WATCHDOG)
                .remove(0)
                .remove(0);
            let (count, next, sequence, _) = parse_report(&first_report);
            assert_eq!(count, first_share);
            let second = spawn(
                test,
                "subscriber",
                &args(vec![
                    ("COUNT", (total - first_share).to_string()),
                    ("NEXT0", next[0].to_string()),
                    ("NEXT1", next[1].to_string()),
                    ("SEQUENCE", sequence.map_or("-".into(), |s| s.to_string())),
                ]),
            );
            let mut children = publishers;
            children.push(("second subscriber", second));
            let reports = wait_all(children, WATCHDOG);
            let (count, next, sequence, _) = parse_report(&reports[2][0]);
            assert_eq!(count, total - first_share);
            assert_eq!(
                next, [KIND_PER_PUBLISHER; 2],
                "every message of both publishers arrived once"
            );
            if M::ORDERED {
                assert_eq!(sequence, Some(total), "sequences 0..{total} without a gap");
            }
        }
    }
}

#[test]
fn cross_process_kind_fifo_mpsc() {
    mpsc_kind::<Fifo>("cross_process_kind_fifo_mpsc", fifo_sequence);
}

#[test]
fn cross_process_kind_ordered_mpsc() {
    mpsc_kind::<Ordered>("cross_process_kind_ordered_mpsc", ordered_sequence);
}

#[test]
fn cross_process_kind_fifo_fanout() {
    fanout_kind::<Fifo>("cross_process_kind_fifo_fanout", fifo_sequence);
}

#[test]
fn cross_process_kind_ordered_fanout() {
    fanout_kind::<Ordered>("cross_process_kind_ordered_fanout", ordered_sequence);
}

#[test]
fn cross_process_fanout_slow_subscriber_holds_back_without_loss() {
    const TEST: &str = "cross_process_fanout_slow_subscriber_holds_back_without_loss";
    const MESSAGES: u64 = 100_000;
    match role().as_deref() {
        Some("publisher") => {
            let channel = FifoFanout::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut publisher = channel.publisher().unwrap();
            let mut refused = 0u64;
            for seq in 0..MESSAGES {
                while let Err(e) = publisher.offer(&Sample::new(0, seq)) {
                    assert_eq!(e, PublishError::Backpressured);
                    refused += 1;
                    std::thread::yield_now();
                }
            }
            report(format!("refused {refused}"));
        }
        Some(role) => {
            let channel = FifoFanout::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            report("joined");
            let mut checker = Checker::new(1);
            for seq in 0..MESSAGES {
                let message = subscriber.recv().unwrap();
                checker.check(message.publisher_slot(), &message);
                drop(message);
                if role == "slow" && seq % 5_000 == 0 {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            report(format!("received {MESSAGES}"));
        }
        None => {
            let name = unique_name("fanout-slow");
            let _channel = FifoFanout::<Sample>::create(&Config::new(&name).subscribers(2).capacity(4096)).unwrap();
            let args = vec![("NAME", name.clone())];
            let mut fast = spawn(TEST, "fast", &args);
            let mut slow = spawn(TEST, "slow", &args);
            assert_eq!(fast.next_report(), "joined");
            assert_eq!(slow.next_report(), "joined");
            let reports = wait_all(vec![("publisher", spawn(TEST, "publisher", &args))], WATCHDOG);
            assert_eq!(fast.next_report(), format!("received {MESSAGES}"));
            assert_eq!(slow.next_report(), format!("received {MESSAGES}"));
            let refused: u64 = reports[0][0].strip_prefix("refused ").unwrap().parse().unwrap();
            assert!(refused > 0, "the slow subscriber never held the publisher back");
        }
    }
}

#[test]
fn cross_process_second_mpsc_subscriber_is_refused() {
    const TEST: &str = "cross_process_second_mpsc_subscriber_is_refused";
    match role().as_deref() {
        Some("subscriber") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            report(channel.subscriber().unwrap_err());
        }
        _ => {
            let name = unique_name("mpsc-second");
            let channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
            let _held = channel.subscriber().unwrap();
            let reports = wait_all(
                vec![("subscriber", spawn(TEST, "subscriber", &[("NAME", name.clone())]))],
                WATCHDOG,
            );
            assert_eq!(
                reports[0][0],
                format!(
                    "channel {name:?} has no free subscriber slot (all 1 are in use); drop an unused subscriber or create the channel with more slots (`Config::subscribers`, on a Fanout channel: an Mpsc channel has one subscriber)"
                )
            );
        }
    }
}

#[test]
fn cross_process_connect_with_wrong_kind_is_refused() {
    const TEST: &str = "cross_process_connect_with_wrong_kind_is_refused";
    match role().as_deref() {
        Some("connector") => {
            let name = arg::<String>("NAME");
            report(Channel::<Sample, Ordered, Mpsc>::connect(&name).unwrap_err());
            report(Channel::<Sample, Fifo, Fanout>::connect(&name).unwrap_err());
        }
        _ => {
            let name = unique_name("kind");
            let _channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
            let reports = wait_all(
                vec![("connector", spawn(TEST, "connector", &[("NAME", name.clone())]))],
                WATCHDOG,
            );
            let says = |kind: &str| {
                format!(
                    "channel {name:?} is a FifoMpsc channel, but this process asked for {kind}; connect with the same mode and topology it was created with"
                )
            };
            assert_eq!(reports[0], vec![says("OrderedMpsc"), says("FifoFanout")]);
        }
    }
}
