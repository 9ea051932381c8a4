//! Processes killed with SIGKILL at random points, many times over: nothing stalls
//! forever, nothing is lost silently, and the channel recovers. Select with
//! `cargo test crash`. Each test prints the recovery times it measured.

mod support;

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use salias::{Config, Error, FifoFanout, FifoMpsc, OrderedFanout, PublishError, ReceiveError};
use support::{Checker, KillOnDrop, Sample, SplitMix, arg, role, spawn, unique_name};

const ITERATIONS: u64 = 20;
const WATCHDOG: Duration = Duration::from_secs(120);
/// Producer ids of messages the parent publishes itself.
const RECOVERY_MARK: u64 = 1_000;
const END_MARK: u64 = 2_000;
const STEADY: u64 = 500;

fn stop_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("{name}.stop"))
}

/// Publishes until the parent creates the stop file (checked every 256 messages).
fn steady_publisher<M: salias::kind::Mode, K: salias::kind::Topology>(name: &str) {
    let channel = salias::Channel::<Sample, M, K>::connect(name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let stop = stop_file(name);
    let mut seq = 0;
    while seq % 256 != 0 || !stop.exists() {
        publisher.send(&Sample::new(STEADY, seq)).unwrap();
        seq += 1;
    }
}

fn summarize(what: &str, times: &mut [Duration]) -> String {
    times.sort();
    if times.is_empty() {
        return format!("{what}: no samples");
    }
    format!(
        "{what}: {} samples, median {:?}, max {:?}",
        times.len(),
        times[times.len() / 2],
        times[times.len() - 1]
    )
}

#[test]
fn crash_fifo_publisher_killed_mid_write() {
    const TEST: &str = "crash_fifo_publisher_killed_mid_write";
    match role().as_deref() {
        Some("steady") => steady_publisher::<salias::Fifo, salias::Mpsc>(&arg::<String>("NAME")),
        Some("victim") => {
            let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut publisher = channel.publisher().unwrap();
            support::report(format!("slot {}", publisher.slot()));
            let incarnation: u64 = arg("INCARNATION");
            let stop_at: u64 = arg("STOP_AT");
            for seq in 0.. {
                if seq == stop_at {
                    // Die with a frame half written: claimed, partly filled, never committed.
                    let mut claim = loop {
                        match publisher.claim() {
                            Ok(claim) => break claim,
                            Err(PublishError::Backpressured) => std::thread::yield_now(),
                            Err(e) => panic!("{e}"),
                        }
                    };
                    claim.producer = incarnation;
                    claim.seq = seq;
                    claim.words[0] = 0xbad;
                    // SAFETY: raise has no memory-safety preconditions.
                    unsafe { libc::raise(libc::SIGKILL) };
                }
                publisher.send(&Sample::new(incarnation, seq)).unwrap();
            }
        }
        _ => {
            let name = unique_name("crash-fifo");
            let channel = FifoMpsc::<Sample>::create(&Config::new(&name).publishers(2).capacity(64 * 1024)).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            let done = Arc::new(AtomicBool::new(false));
            // The subscriber checks every message as it arrives, concurrently with the kills.
            let reader = std::thread::spawn({
                let done = done.clone();
                move || {
                    let mut victims = Checker::new(ITERATIONS as usize);
                    let (mut steady_next, mut recovered) = (0u64, 0u64);
                    let mut ended = false;
                    // Victims come and go: between two, no publisher may be left for a
                    // moment, which a receive reports once (`Disconnected`) and goes on.
                    let nothing_left = |subscriber: &mut salias::Subscriber<Sample>| match subscriber.try_recv() {
                        Ok(found) => found.is_none(),
                        Err(ReceiveError::Disconnected) => true,
                        Err(e) => panic!("{e}"),
                    };
                    while !(ended && done.load(Ordering::Acquire) && nothing_left(&mut subscriber)) {
                        let polled = subscriber.drain(256, |info, sample| match sample.producer {
                            STEADY => {
                                assert_eq!(*sample, Sample::new(STEADY, steady_next), "steady publisher damaged");
                                steady_next += 1;
                            }
                            RECOVERY_MARK.. if sample.producer < END_MARK => recovered += 1,
                            END_MARK => ended = true,
                            _ => victims.check(info.publisher_slot(), sample),
                        });
                        assert!(matches!(polled, Ok(_) | Err(ReceiveError::Disconnected)), "{polled:?}");
                        std::hint::spin_loop();
                    }
                    (victims.next, steady_next, recovered)
                }
            });

            let args = |extra: Vec<(&'static str, String)>| {
                let mut args = vec![("NAME", name.clone())];
                args.extend(extra);
                args
            };
            let steady = spawn(TEST, "steady", &args(vec![]));
            let mut mix = SplitMix(11);
            let mut recovery = Vec::new();
            let mut stops = Vec::new();
            let mut victim_slot = None;
            let deadline = Instant::now() + WATCHDOG;
            for incarnation in 0..ITERATIONS {
                // Even rounds die mid-write on their own; odd rounds are killed at a random time.
                let stop_at = if incarnation % 2 == 0 {
                    mix.next() % 20_000
                } else {
                    u64::MAX
                };
                stops.push(stop_at);
                let mut victim = spawn(
                    TEST,
                    "victim",
                    &args(vec![
                        ("INCARNATION", incarnation.to_string()),
                        ("STOP_AT", stop_at.to_string()),
                    ]),
                );
                let slot = victim.next_report();
                assert_eq!(
                    *victim_slot.get_or_insert(slot.clone()),
                    slot,
                    "the dead slot is reused"
                );
                if stop_at == u64::MAX {
                    std::thread::sleep(Duration::from_micros(mix.next() % 20_000));
                    drop(victim); // SIGKILL
                } else {
                    while victim.0.try_wait().unwrap().is_none() {
                        assert!(Instant::now() < deadline, "watchdog: victim never died");
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                // Recovery: a new publisher takes the dead one's slot and publishes.
                let started = Instant::now();
                let mut publisher = loop {
                    match channel.publisher() {
                        Ok(publisher) => break publisher,
                        Err(Error::NoFreeSlot { .. }) if Instant::now() < deadline => std::thread::yield_now(),
                        Err(e) => panic!("{e}"),
                    }
                };
                publisher.send(&Sample::new(RECOVERY_MARK + incarnation, 0)).unwrap();
                recovery.push(started.elapsed());
            }
            std::fs::write(stop_file(&name), b"").unwrap();
            support::wait_all(vec![("steady", steady)], WATCHDOG);
            let _ = std::fs::remove_file(stop_file(&name));
            channel.publisher().unwrap().send(&Sample::new(END_MARK, 0)).unwrap();
            done.store(true, Ordering::Release);
            let (victims, steady_count, recovered) = reader.join().unwrap();
            assert_eq!(recovered, ITERATIONS, "every recovery publisher got through");
            assert!(steady_count > 0);
            for (incarnation, (delivered, stop_at)) in victims.iter().zip(&stops).enumerate() {
                if *stop_at != u64::MAX {
                    // It died while writing message `stop_at`: exactly those before it arrived.
                    assert_eq!(
                        delivered, stop_at,
                        "incarnation {incarnation}: committed messages lost or the half-written one delivered"
                    );
                }
            }
            eprintln!(
                "{}",
                summarize(
                    "fifo publisher killed: slot claimed again and publishing after",
                    &mut recovery
                )
            );
        }
    }
}

#[test]
fn crash_ordered_publisher_killed_holding_sequence() {
    const TEST: &str = "crash_ordered_publisher_killed_holding_sequence";
    match role().as_deref() {
        Some("steady") => steady_publisher::<salias::Ordered, salias::Fanout>(&arg::<String>("NAME")),
        Some("victim") => {
            let channel = OrderedFanout::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut publisher = channel.publisher().unwrap();
            let incarnation: u64 = arg("INCARNATION");
            let stop_at: u64 = arg("STOP_AT");
            for seq in 0.. {
                if seq == stop_at {
                    publisher.__take_sequence_then_die();
                }
                publisher.send(&Sample::new(incarnation, seq)).unwrap();
            }
        }
        _ => {
            let name = unique_name("crash-ordered");
            let config = Config::new(&name).publishers(2).subscribers(2).capacity(64 * 1024);
            let channel = OrderedFanout::<Sample>::create(&config).unwrap();
            let (gap_sender, gap_events) = std::sync::mpsc::channel::<(usize, u64, Instant)>();
            // Two subscribers check the global order and must agree on every gap.
            let readers: Vec<_> = (0..2)
                .map(|index| {
                    let mut subscriber = channel.subscriber().unwrap();
                    let gap_sender = gap_sender.clone();
                    std::thread::spawn(move || {
                        let mut next = subscriber.next_sequence();
                        let mut hash = 0xcbf2_9ce4_8422_2325u64;
                        let mut lost = 0;
                        loop {
                            let message = match subscriber.recv_timeout(WATCHDOG) {
                                Ok(message) => message,
                                // Between two victims no publisher may be left for a moment.
                                Err(ReceiveError::Disconnected) => continue,
                                Err(e) => panic!("watchdog: subscriber stalled ({e})"),
                            };
                            assert_eq!(message.sequence(), next + message.gap_before(), "order broken");
                            if message.gap_before() > 0 {
                                lost += message.gap_before();
                                gap_sender.send((index, message.gap_before(), Instant::now())).unwrap();
                            }
                            next = message.sequence() + 1;
                            for word in [message.sequence(), message.producer, message.seq] {
                                hash = (hash ^ word).wrapping_mul(0x0000_0100_0000_01b3);
                            }
                            if message.producer == END_MARK {
                                drop(message);
                                let gaps = subscriber.gaps().clone();
                                assert_eq!(gaps.missing, lost);
                                return (hash, gaps);
                            }
                        }
                    })
                })
                .collect();

            let args = |extra: Vec<(&'static str, String)>| {
                let mut args = vec![("NAME", name.clone())];
                args.extend(extra);
                args
            };
            let steady = spawn(TEST, "steady", &args(vec![]));
            let mut mix = SplitMix(23);
            let (mut recovery, mut sure_gaps) = (Vec::new(), 0u64);
            for incarnation in 0..ITERATIONS {
                let stop_at = if incarnation % 2 == 0 {
                    mix.next() % 5_000
                } else {
                    u64::MAX
                };
                let mut victim: KillOnDrop = spawn(
                    TEST,
                    "victim",
                    &args(vec![
                        ("INCARNATION", incarnation.to_string()),
                        ("STOP_AT", stop_at.to_string()),
                    ]),
                );
                if stop_at == u64::MAX {
                    std::thread::sleep(Duration::from_micros(mix.next() % 20_000));
                    drop(victim);
                    continue;
                }
                let deadline = Instant::now() + WATCHDOG;
                let status = loop {
                    if let Some(status) = victim.0.try_wait().unwrap() {
                        break status;
                    }
                    assert!(Instant::now() < deadline, "watchdog: victim never died");
                    std::thread::sleep(Duration::from_micros(200));
                };
                let died = Instant::now();
                // Anything but its own SIGKILL means it died without holding a number.
                assert_eq!(status.signal(), Some(libc::SIGKILL), "victim failed: {status}");
                sure_gaps += 1;
                // Both subscribers must report the number the victim died holding.
                let mut reported = [false; 2];
                while reported != [true; 2] {
                    let (index, missing, at) = gap_events.recv_timeout(WATCHDOG).expect("watchdog: gap never reported");
                    assert!(missing >= 1);
                    if !reported[index] {
                        recovery.push(at.saturating_duration_since(died));
                    }
                    reported[index] = true;
                }
            }
            std::fs::write(stop_file(&name), b"").unwrap();
            support::wait_all(vec![("steady", steady)], WATCHDOG);
            let _ = std::fs::remove_file(stop_file(&name));
            channel.publisher().unwrap().send(&Sample::new(END_MARK, 0)).unwrap();
            let results: Vec<_> = readers.into_iter().map(|r| r.join().unwrap()).collect();
            assert_eq!(
                results[0], results[1],
                "both subscribers saw the same order and the same gaps"
            );
            assert!(results[0].1.events >= sure_gaps, "{:?}", results[0].1);
            eprintln!(
                "{}; gaps {:?}",
                summarize(
                    "ordered publisher killed holding a number: gap reported after",
                    &mut recovery
                ),
                results[0].1
            );
        }
    }
}

#[test]
fn crash_fanout_subscriber_killed() {
    const TEST: &str = "crash_fanout_subscriber_killed";
    const MESSAGES: u64 = 2_000_000;
    match role().as_deref() {
        Some("victim") => {
            let channel = FifoFanout::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            support::report("joined");
            // A slow reader that holds the publisher back until it is killed.
            loop {
                if subscriber.try_recv().unwrap().is_none() {
                    std::thread::sleep(Duration::from_micros(100));
                }
                std::thread::sleep(Duration::from_micros(20));
            }
        }
        _ => {
            let name = unique_name("crash-fanout");
            let config = Config::new(&name).subscribers(3).capacity(64 * 1024);
            let channel = FifoFanout::<Sample>::create(&config).unwrap();
            let mut steady = channel.subscriber().unwrap();
            let mut publisher = channel.publisher().unwrap();
            let epoch = Instant::now();
            let last_offer = Arc::new(AtomicU64::new(0));
            let writer = std::thread::spawn({
                let last_offer = last_offer.clone();
                move || {
                    for seq in 0..MESSAGES {
                        publisher.send(&Sample::new(0, seq)).unwrap();
                        last_offer.store(epoch.elapsed().as_nanos() as u64, Ordering::Release);
                    }
                }
            });
            let reader = std::thread::spawn(move || {
                let mut checker = Checker::new(1);
                for _ in 0..MESSAGES {
                    let message = steady
                        .recv_timeout(WATCHDOG)
                        .expect("watchdog: steady subscriber stalled");
                    checker.check(message.publisher_slot(), &message);
                }
                checker.next[0]
            });
            let mut mix = SplitMix(31);
            let mut recovery = Vec::new();
            for _ in 0..ITERATIONS {
                let mut victim = spawn(TEST, "victim", &[("NAME", name.clone())]);
                assert_eq!(victim.next_report(), "joined");
                std::thread::sleep(Duration::from_micros(5_000 + mix.next() % 20_000));
                drop(victim); // SIGKILL, then reap
                let killed = epoch.elapsed().as_nanos() as u64;
                let deadline = Instant::now() + WATCHDOG;
                // The publisher must get going again without the dead subscriber.
                while last_offer.load(Ordering::Acquire) < killed {
                    if writer.is_finished() {
                        break;
                    }
                    assert!(
                        Instant::now() < deadline,
                        "watchdog: publisher held back by a dead subscriber"
                    );
                    std::thread::sleep(Duration::from_micros(100));
                }
                let resumed = last_offer.load(Ordering::Acquire).max(killed);
                recovery.push(Duration::from_nanos(resumed - killed));
            }
            writer.join().unwrap();
            assert_eq!(reader.join().unwrap(), MESSAGES, "the live subscriber lost nothing");
            eprintln!(
                "{}",
                summarize("fanout subscriber killed: publisher moving again after", &mut recovery)
            );
        }
    }
}

#[test]
fn crash_mpsc_subscriber_killed_successor_resumes() {
    const TEST: &str = "crash_mpsc_subscriber_killed_successor_resumes";
    const MESSAGES: u64 = 50_000;
    match role().as_deref() {
        Some(kind) => {
            // Read STOP_AT messages, then die with the subscriber still attached: no drop,
            // no explicit release.
            let name = arg::<String>("NAME");
            let stop_at: u64 = arg("STOP_AT");
            let die = |last: u64| -> ! {
                assert_eq!(last, stop_at - 1);
                // SAFETY: raise has no memory-safety preconditions.
                unsafe { libc::raise(libc::SIGKILL) };
                unreachable!("SIGKILL cannot be caught")
            };
            if kind == "ordered" {
                let channel = salias::OrderedMpsc::<Sample>::connect(&name).unwrap();
                let mut subscriber = channel.subscriber().unwrap();
                let last = (0..stop_at).map(|_| subscriber.recv().unwrap().seq).last().unwrap();
                die(last);
            } else if kind == "ordered-drain" {
                // Dies inside one `drain` call, while it hands out message STOP_AT: every
                // message before it was handed out by the same call and counts as handled.
                let channel = salias::OrderedMpsc::<Sample>::connect(&name).unwrap();
                let mut subscriber = channel.subscriber().unwrap();
                let mut last = None;
                subscriber
                    .drain(usize::MAX, |_, sample| {
                        if sample.seq == stop_at {
                            die(last.unwrap());
                        }
                        last = Some(sample.seq);
                    })
                    .unwrap();
                unreachable!("message {stop_at} was never handed out");
            } else {
                let channel = FifoMpsc::<Sample>::connect(&name).unwrap();
                let mut subscriber = channel.subscriber().unwrap();
                let last = (0..stop_at).map(|_| subscriber.recv().unwrap().seq).last().unwrap();
                die(last);
            }
        }
        None => {
            let mut mix = SplitMix(41);
            let mut redelivered = 0;
            for round in 0..ITERATIONS {
                let ordered = round % 2 == 0;
                let name = unique_name("crash-mpsc-sub");
                // Room for every message, so all are published before the victim reads.
                let config = Config::new(&name).capacity(8 << 20);
                let stop_at = 1 + mix.next() % (MESSAGES - 1);
                let args = [("NAME", name.clone()), ("STOP_AT", stop_at.to_string())];
                if ordered {
                    let channel = salias::OrderedMpsc::<Sample>::create(&config).unwrap();
                    let mut publisher = channel.publisher().unwrap();
                    for seq in 0..MESSAGES {
                        publisher.offer(&Sample::new(0, seq)).unwrap();
                    }
                    // Every other ordered victim reads by `recv`, the others by one `drain`.
                    let victim_kind = if round % 4 == 0 { "ordered" } else { "ordered-drain" };
                    let mut victim = spawn(TEST, victim_kind, &args);
                    let status = loop {
                        if let Some(status) = victim.0.try_wait().unwrap() {
                            break status;
                        }
                        std::thread::sleep(Duration::from_micros(200));
                    };
                    // Its own SIGKILL, where it meant to die: a failed check would unwind
                    // and save a resume point on the way out.
                    assert_eq!(status.signal(), Some(libc::SIGKILL), "victim failed: {status}");
                    // Exactly once: the successor passes over what the victim was given.
                    let mut successor = channel.subscriber().unwrap();
                    for expected in stop_at..MESSAGES {
                        let m = successor.recv_timeout(WATCHDOG).unwrap();
                        assert_eq!((m.sequence(), m.seq), (expected, expected), "round {round}");
                    }
                    assert!(successor.try_recv().unwrap().is_none());
                } else {
                    let channel = FifoMpsc::<Sample>::create(&config).unwrap();
                    let mut publisher = channel.publisher().unwrap();
                    for seq in 0..MESSAGES {
                        publisher.offer(&Sample::new(0, seq)).unwrap();
                    }
                    let mut victim = spawn(TEST, "fifo", &args);
                    while victim.0.try_wait().unwrap().is_none() {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    // At least once: what the victim read but had not released comes again;
                    // nothing is skipped.
                    let mut successor = channel.subscriber().unwrap();
                    let first = successor.recv_timeout(WATCHDOG).unwrap().seq;
                    assert!(first <= stop_at, "round {round}: messages lost after the crash");
                    // Unreleased room is at most a quarter window (8 MiB / 4, 80-byte frames).
                    assert!(
                        stop_at - first <= (8 << 20) / 4 / 80,
                        "round {round}: re-read {}",
                        stop_at - first
                    );
                    redelivered += stop_at - first;
                    for expected in first + 1..MESSAGES {
                        assert_eq!(successor.recv_timeout(WATCHDOG).unwrap().seq, expected, "round {round}");
                    }
                }
            }
            eprintln!(
                "mpsc subscriber killed: ordered successors resumed exactly; fifo successors got {redelivered} messages again over {} rounds",
                ITERATIONS / 2
            );
        }
    }
}
