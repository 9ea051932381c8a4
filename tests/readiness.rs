//! The readiness descriptors: a subscriber's is readable exactly while it has messages to
//! receive, an epoll loop over two channels receives every burst from two publisher
//! processes, and an idle watched subscriber costs no CPU. Publishers' descriptors are
//! in tests/readiness_room.rs.

#[path = "support/readiness.rs"]
mod readiness_support;
mod support;

use std::time::Duration;
#[cfg(target_os = "linux")]
use std::time::Instant;

use readiness_support::{ARRIVAL, readable};
#[cfg(target_os = "linux")]
use rustix::event::{Timespec, epoll};
use salias::{Config, FifoMpsc, ReceiveError};
#[cfg(target_os = "linux")]
use support::report;
use support::{Sample, arg, role, spawn, unique_name, wait_all};

/// In a child: connects to `NAME` and publishes `COUNT` samples, producer `PRODUCER`,
/// from `FROM` on.
fn publish_some() {
    let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let (producer, from, count): (u64, u64, u64) = (arg("PRODUCER"), arg("FROM"), arg("COUNT"));
    for seq in from..from + count {
        publisher.send(&Sample::new(producer, seq)).unwrap();
    }
}

fn publisher_args(name: &str, producer: u64, from: u64, count: u64) -> Vec<(&'static str, String)> {
    vec![
        ("NAME", name.to_owned()),
        ("PRODUCER", producer.to_string()),
        ("FROM", from.to_string()),
        ("COUNT", count.to_string()),
    ]
}

#[test]
fn the_descriptor_is_readable_exactly_when_a_message_waits() {
    const TEST: &str = "the_descriptor_is_readable_exactly_when_a_message_waits";
    if role().as_deref() == Some("publisher") {
        return publish_some();
    }
    let name = unique_name("ready");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    assert!(!readable(&subscriber, Duration::ZERO), "readable before any publish");
    assert!(subscriber.try_recv().unwrap().is_none());
    assert!(
        !readable(&subscriber, Duration::ZERO),
        "readable after an empty receive"
    );

    let publisher = spawn(TEST, "publisher", &publisher_args(&name, 0, 0, 3));
    assert!(
        readable(&subscriber, ARRIVAL),
        "a publish from another process left it unreadable"
    );
    wait_all(vec![("publisher", publisher)], ARRIVAL);
    assert!(
        readable(&subscriber, Duration::ZERO),
        "no longer readable with 3 messages waiting"
    );
    assert_eq!(subscriber.try_recv().unwrap().unwrap().seq, 0);
    assert!(
        readable(&subscriber, Duration::ZERO),
        "not readable with 2 messages still waiting"
    );
    assert_eq!(subscriber.try_recv().unwrap().unwrap().seq, 1);
    assert_eq!(subscriber.try_recv().unwrap().unwrap().seq, 2);
    assert!(
        readable(&subscriber, Duration::ZERO),
        "the drain has not found the end yet"
    );
    // The publisher process has gone: said once, then the receive finds nothing and arms.
    assert_eq!(
        subscriber.try_recv().map(|m| m.is_none()),
        Err(ReceiveError::Disconnected)
    );
    assert!(subscriber.try_recv().unwrap().is_none());
    assert!(!readable(&subscriber, Duration::ZERO), "readable after draining");
    // Another empty receive while armed changes nothing.
    assert!(subscriber.try_recv().unwrap().is_none());
    assert!(
        !readable(&subscriber, Duration::ZERO),
        "readable after a second empty receive"
    );

    let publisher = spawn(TEST, "publisher", &publisher_args(&name, 0, 3, 1));
    assert!(readable(&subscriber, ARRIVAL), "a second publish left it unreadable");
    wait_all(vec![("publisher", publisher)], ARRIVAL);
    // A `drain` that empties the subscriber arms as `try_recv` does.
    let mut seen = Vec::new();
    assert_eq!(subscriber.drain(16, |_, sample| seen.push(sample.seq)).unwrap(), 1);
    assert_eq!(seen, [3]);
    // Its publisher has gone, which is news too: readable until a receive has said so.
    assert!(
        readable(&subscriber, Duration::ZERO),
        "the departure left it unreadable"
    );
    assert_eq!(subscriber.drain(16, |_, _| {}), Err(ReceiveError::Disconnected));
    assert_eq!(subscriber.drain(16, |_, _| {}), Ok(0));
    assert!(
        !readable(&subscriber, Duration::ZERO),
        "readable after `drain` emptied it"
    );
}

/// A publish in this process, while the subscriber was armed before: the same wake.
#[test]
fn a_publish_in_the_same_process_wakes_the_descriptor() {
    let channel = FifoMpsc::<Sample>::create(&Config::new(unique_name("ready-local"))).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    publisher.offer(&Sample::new(0, 0)).unwrap();
    assert!(
        readable(&subscriber, Duration::ZERO),
        "a message waiting before the first as_fd"
    );
    assert_eq!(subscriber.try_recv().unwrap().unwrap().seq, 0);
    assert!(subscriber.try_recv().unwrap().is_none());
    assert!(!readable(&subscriber, Duration::ZERO));
    for round in 1..50 {
        publisher.offer(&Sample::new(0, round)).unwrap();
        assert!(readable(&subscriber, ARRIVAL), "round {round}: not woken");
        assert_eq!(subscriber.try_recv().unwrap().unwrap().seq, round);
        assert!(subscriber.try_recv().unwrap().is_none());
        assert!(
            !readable(&subscriber, Duration::ZERO),
            "round {round}: readable when drained"
        );
    }
}

/// Each publisher process sends `BURSTS` bursts of `BURST` messages into its own channel,
/// idle `GAP` between bursts; one epoll loop watching both subscribers' descriptors
/// receives every message, in order per publisher.
#[cfg(target_os = "linux")]
#[test]
fn an_epoll_loop_receives_every_burst_from_two_publishers() {
    const TEST: &str = "an_epoll_loop_receives_every_burst_from_two_publishers";
    const BURSTS: u64 = 5;
    const BURST: u64 = 200;
    const GAP: Duration = Duration::from_millis(30);
    if role().as_deref() == Some("bursts") {
        let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
        let mut publisher = channel.publisher().unwrap();
        let producer: u64 = arg("PRODUCER");
        for burst in 0..BURSTS {
            std::thread::sleep(GAP);
            for seq in burst * BURST..(burst + 1) * BURST {
                publisher.send(&Sample::new(producer, seq)).unwrap();
            }
        }
        return;
    }
    let names = [unique_name("epoll-a"), unique_name("epoll-b")];
    // A small ring: the bursts fill it, so the publishers wait for the loop too.
    let channels = names
        .each_ref()
        .map(|name| FifoMpsc::<Sample>::create(&Config::new(name).capacity(4096)).unwrap());
    let mut subscribers = channels.each_ref().map(|c| c.subscriber().unwrap());
    let epoll = epoll::create(epoll::CreateFlags::CLOEXEC).unwrap();
    for (at, subscriber) in subscribers.iter().enumerate() {
        epoll::add(
            &epoll,
            subscriber,
            epoll::EventData::new_u64(at as u64),
            epoll::EventFlags::IN,
        )
        .unwrap();
    }
    let children: Vec<_> = (0..2)
        .map(|p| {
            let args = [("NAME", names[p].clone()), ("PRODUCER", p.to_string())];
            ("bursts", spawn(TEST, "bursts", &args))
        })
        .collect();
    let mut next = [0u64; 2];
    let (mut wakes, deadline) = (0u64, Instant::now() + Duration::from_secs(60));
    while next.iter().any(|&n| n < BURSTS * BURST) {
        assert!(Instant::now() < deadline, "stuck at {next:?} after {wakes} wake-ups");
        let mut events = [std::mem::MaybeUninit::<epoll::Event>::uninit(); 4];
        let timeout = Timespec { tv_sec: 1, tv_nsec: 0 };
        let (ready, _) = epoll::wait(&epoll, &mut events, Some(&timeout)).unwrap();
        for event in ready.iter() {
            wakes += 1;
            let at = event.data.u64() as usize;
            loop {
                match subscribers[at].try_recv() {
                    Ok(Some(sample)) => {
                        assert_eq!((sample.producer, sample.seq), (at as u64, next[at]), "channel {at}");
                        next[at] += 1;
                    }
                    Ok(None) => break,
                    // Its publisher process finished: said once, and the loop goes on.
                    Err(ReceiveError::Disconnected) => {}
                    Err(e) => panic!("{e}"),
                }
            }
        }
    }
    wait_all(children, Duration::from_secs(30));
    report(format!("{} messages in {wakes} wake-ups", 2 * BURSTS * BURST));
    for subscriber in &mut subscribers {
        // Each publisher has gone: said once (unless the loop heard it already).
        let rest = subscriber.try_recv().map(|m| m.is_none());
        assert!(matches!(rest, Ok(true) | Err(ReceiveError::Disconnected)), "{rest:?}");
        assert!(subscriber.try_recv().unwrap().is_none());
        assert!(!readable(subscriber, Duration::ZERO));
    }
}

/// Threads this process runs now (Linux: /proc/self/task).
#[cfg(target_os = "linux")]
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// The thread count once it has come down to `expected`, or after 10 s what it is then: a
/// joined thread's task can stay listed in /proc for a moment after the join returns (the
/// kernel clears the joiner's word before it reaps the task), longer on a loaded machine.
#[cfg(target_os = "linux")]
fn threads_settled_to(expected: usize) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let now = threads();
        if now <= expected || std::time::Instant::now() > deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// 64 watched subscribers of one fanout channel in one process share one watcher thread,
/// and one publish from another process makes every descriptor readable. In a child, so
/// that no other test's watcher is counted.
#[cfg(target_os = "linux")]
#[test]
fn sixty_four_watched_subscribers_share_one_watcher() {
    const TEST: &str = "sixty_four_watched_subscribers_share_one_watcher";
    match role().as_deref() {
        Some("publisher") => {
            let channel = salias::FifoFanout::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            channel.publisher().unwrap().offer(&Sample::new(0, 7)).unwrap();
        }
        Some("watchers") => {
            let name = unique_name("watch-64");
            let config = Config::new(&name).subscribers(64);
            let channel = salias::FifoFanout::<Sample>::create(&config).unwrap();
            let before = threads();
            let mut subscribers: Vec<_> = (0..64).map(|_| channel.subscriber().unwrap()).collect();
            for subscriber in &mut subscribers {
                assert!(!readable(subscriber, Duration::ZERO));
                assert!(subscriber.try_recv().unwrap().is_none());
            }
            assert_eq!(
                threads(),
                before + 1,
                "one watcher thread for the channel's 64 subscribers"
            );
            let publisher = spawn(TEST, "publisher", &[("NAME", name.clone())]);
            for (at, subscriber) in subscribers.iter_mut().enumerate() {
                assert!(readable(subscriber, ARRIVAL), "subscriber {at} was not woken");
            }
            wait_all(vec![("publisher", publisher)], ARRIVAL);
            for subscriber in &mut subscribers {
                assert_eq!(subscriber.try_recv().unwrap().unwrap().seq, 7);
                // The publisher process has gone: said once, then nothing.
                assert_eq!(
                    subscriber.try_recv().map(|m| m.is_none()),
                    Err(ReceiveError::Disconnected)
                );
                assert!(subscriber.try_recv().unwrap().is_none());
                assert!(!readable(subscriber, Duration::ZERO));
            }
            // The last subscriber stops and joins the watcher.
            drop(subscribers);
            assert_eq!(
                threads_settled_to(before),
                before,
                "the watcher outlived its subscribers"
            );
        }
        _ => {
            let child = spawn(TEST, "watchers", &[]);
            wait_all(vec![("watchers", child)], Duration::from_secs(60));
        }
    }
}

/// Ticks (utime + stime) this process has run, from /proc/self/stat.
#[cfg(target_os = "linux")]
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// A watched subscriber whose loop waits a second with nothing published runs for a few
/// clock ticks at most, where a spinning one runs for all of them, and its descriptor
/// never turns readable. Linux (the portable layer too), where /proc tells the ticks.
#[cfg(target_os = "linux")]
#[test]
fn an_idle_watched_subscriber_uses_no_cpu() {
    const TEST: &str = "an_idle_watched_subscriber_uses_no_cpu";
    if role().as_deref() == Some("idle") {
        let channel = FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
        let mut subscriber = channel.subscriber().unwrap();
        assert!(subscriber.try_recv().unwrap().is_none());
        let before = cpu_ticks();
        let start = Instant::now();
        let mut wakes = 0;
        while start.elapsed() < Duration::from_secs(1) {
            if readable(&subscriber, Duration::from_millis(250)) {
                wakes += 1;
                while subscriber.try_recv().unwrap().is_some() {}
            }
        }
        let ticks = cpu_ticks() - before;
        // SAFETY: sysconf only reads a configuration value.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        report(format!("{ticks} {hz} {wakes} {}", start.elapsed().as_millis()));
        return;
    }
    let name = unique_name("idle");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    // A publisher exists (its process is reached by the barrier) but never publishes.
    let _publisher = channel.publisher().unwrap();
    let child = spawn(TEST, "idle", &[("NAME", name.clone())]);
    let reports = wait_all(vec![("idle", child)], Duration::from_secs(30));
    let line: Vec<u64> = reports[0][0].split(' ').map(|v| v.parse().unwrap()).collect();
    let (ticks, hz, wakes, millis) = (line[0], line[1], line[2], line[3]);
    println!("idle watched subscriber: {ticks} ticks of {hz}/s over {millis} ms, {wakes} wake-ups");
    // A busy core runs `hz` ticks a second; allow a tenth for process start-up noise.
    assert!(
        ticks * 10 <= hz,
        "{ticks} ticks of CPU in {millis} ms idle ({hz} a second)"
    );
    if readiness_support::barrier_available() {
        assert_eq!(wakes, 0, "the descriptor turned readable with nothing published");
    }
}
