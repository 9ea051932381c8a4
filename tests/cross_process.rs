//! Channels used by separate processes: each test re-executes this binary once per role.
//! Run only these with `cargo test cross_process`.

mod support;

use std::time::Duration;

use salias::{Adaptive, Config, Error, FifoMpsc, RawFifoMpsc, SaliasMessage};
use support::{KillOnDrop, SplitMix, arg, report, role, spawn, unique_name, wait_all};

const WATCHDOG: Duration = Duration::from_secs(300);

/// A 64-byte message whose every field is derived from (producer, seq), so the subscriber
/// can check each one independently.
#[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Sample {
    producer: u64,
    seq: u64,
    words: [u64; 6],
}

impl Sample {
    fn new(producer: u64, seq: u64) -> Self {
        let mut mix = SplitMix(producer << 40 ^ seq);
        Sample {
            producer,
            seq,
            words: std::array::from_fn(|_| mix.next()),
        }
    }
}

/// Per-producer order and content checker.
struct Checker {
    next: Vec<u64>,
    slot_of: Vec<Option<usize>>,
}

impl Checker {
    fn new(producers: usize) -> Self {
        Checker {
            next: vec![0; producers],
            slot_of: vec![None; producers],
        }
    }

    fn check(&mut self, slot: usize, sample: &Sample) {
        let producer = sample.producer as usize;
        assert!(producer < self.next.len(), "unknown producer {producer}");
        assert_eq!(
            sample.seq, self.next[producer],
            "producer {producer}: message out of order or lost"
        );
        assert_eq!(
            *sample,
            Sample::new(sample.producer, sample.seq),
            "message content corrupted"
        );
        let known = self.slot_of[producer].get_or_insert(slot);
        assert_eq!(*known, slot, "producer {producer} appeared on two rings");
        self.next[producer] += 1;
    }
}

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
                            Err(Error::Backpressured) => std::thread::yield_now(),
                            Err(e) => panic!("{e}"),
                        }
                    },
                    _ => {
                        batch.clear();
                        let end = (seq + 16).min(PER_PUBLISHER);
                        batch.extend((seq..end).map(|s| Sample::new(producer, s)));
                        let mut sent = 0;
                        while sent < batch.len() {
                            match publisher.offer_batch(&batch[sent..]) {
                                Ok(n) => sent += n,
                                Err(Error::Backpressured) => std::thread::yield_now(),
                                Err(e) => panic!("{e}"),
                            }
                        }
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
                    .poll(256, |slot, sample| checker.check(slot, sample))
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
            let _channel = FifoMpsc::<Sample>::create(&Config::new(&name).producers(2)).unwrap();
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
                            Err(Error::Backpressured) => std::thread::yield_now(),
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
                        Err(Error::Backpressured) => {
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

fn cpu_time() -> Duration {
    // SAFETY: `usage` is a writable rusage; getrusage fills it.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        usage
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

#[test]
fn cross_process_idle_subscriber_sleeps_and_wakes() {
    const TEST: &str = "cross_process_idle_subscriber_sleeps_and_wakes";
    const BURSTS: u64 = 5;
    const IDLE: Duration = Duration::from_millis(400);
    match role().as_deref() {
        Some("publisher") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut publisher = channel.publisher().unwrap();
            for burst in 0..BURSTS {
                std::thread::sleep(IDLE);
                for i in 0..10 {
                    publisher.send(&Sample::new(0, burst * 10 + i)).unwrap();
                }
            }
        }
        Some("subscriber") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            subscriber.set_wait_strategy(Adaptive::default());
            let mut checker = Checker::new(1);
            let before = cpu_time();
            for _ in 0..BURSTS * 10 {
                let message = subscriber.recv().unwrap();
                checker.check(message.publisher_slot(), &message);
            }
            let spent = cpu_time() - before;
            report(format!("cpu_micros {}", spent.as_micros()));
        }
        _ => {
            let name = unique_name("idle");
            let _channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
            let args = vec![("NAME", name.clone())];
            let children = vec![
                ("subscriber", spawn(TEST, "subscriber", &args)),
                ("publisher", spawn(TEST, "publisher", &args)),
            ];
            let reports = wait_all(children, WATCHDOG);
            let cpu: u128 = reports[0][0].strip_prefix("cpu_micros ").unwrap().parse().unwrap();
            // Five idle gaps of 400 ms: a spinning subscriber would burn ~2 s of CPU. A
            // sleeping one spends its short spin-then-yield phase per gap and nothing else.
            let idle_total = IDLE.as_micros() * BURSTS as u128;
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
    match role().as_deref() {
        Some("owner") => {
            let _channel = FifoMpsc::<Sample>::create(&Config::new(arg::<String>("NAME"))).unwrap();
            report("ready");
            std::thread::sleep(Duration::from_secs(600));
        }
        _ => {
            let name = unique_name("stale-owner");
            let mut owner = KillOnDrop(spawn(TEST, "owner", &[("NAME", name.clone())]));
            assert_eq!(owner.next_report(), "ready");
            let owner_pid = owner.0.id();
            drop(owner); // SIGKILL, then reap

            match FifoMpsc::<Sample>::connect(&name) {
                Err(e) => assert_eq!(
                    e,
                    Error::Stale {
                        name: name.clone(),
                        owner_pid
                    }
                ),
                Ok(_) => panic!("connecting to a channel whose owner died must report it stale"),
            }
            let channel = FifoMpsc::<Sample>::create(&Config::new(&name)).expect("create recovers a stale channel");
            let mut publisher = channel.publisher().unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            publisher.offer(&Sample::new(0, 0)).unwrap();
            assert_eq!(*subscriber.try_recv().unwrap().unwrap(), Sample::new(0, 0));
        }
    }
}
