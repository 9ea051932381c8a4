//! Peers that go away, across processes: a subscriber hears that its only publisher was
//! killed or dropped (`ReceiveError::Disconnected`) after receiving everything it
//! committed, waits for a next publisher as usual, and does not hear it when it joined
//! before any; an Mpsc publisher blocked for room hears that its subscriber died
//! (`PublishError::NoSubscriber`) instead of waiting forever, and a later subscriber
//! resumes with everything. Each test prints the detection times it measured.
#![cfg(target_os = "linux")]

#[path = "support/readiness.rs"]
mod readiness_support;
mod support;

use std::os::fd::AsFd;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use readiness_support::{ARRIVAL, readable};
use rustix::event::{Timespec, epoll};
use salias::{
    Channel, Config, Fanout, Fifo, Mpsc, Ordered, PublishError, ReceiveError, Subscriber, kind::Mode, kind::Topology,
};
use support::{Checker, KillOnDrop, Sample, arg, role, spawn, unique_name};

/// A hang is a failure: no receive or send here waits longer than this.
const WATCHDOG: Duration = Duration::from_secs(60);
/// Messages the child publisher commits before it dies or drops its publisher.
const COUNT: u64 = 2_000;

/// Child: publishes `COUNT` samples as producer 0, then dies by SIGKILL (`DIE` = 1) or
/// drops its publisher and exits.
fn publish_then_leave<M: Mode, K: Topology>() {
    let channel = Channel::<Sample, M, K>::connect(&arg::<String>("NAME")).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..arg::<u64>("COUNT") {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    if arg::<u32>("DIE") == 1 {
        // SAFETY: raise has no memory-safety preconditions.
        unsafe { libc::raise(libc::SIGKILL) };
    }
    drop(publisher);
}

/// Child: joins as the subscriber, says so, and dies by SIGKILL after `HOLD_MS` without
/// receiving anything.
fn subscribe_then_die<M: Mode>() {
    let channel = Channel::<Sample, M, Mpsc>::connect(&arg::<String>("NAME")).unwrap();
    let _subscriber = channel.subscriber().unwrap();
    std::thread::sleep(Duration::from_millis(arg("HOLD_MS")));
    // SAFETY: raise has no memory-safety preconditions.
    unsafe { libc::raise(libc::SIGKILL) };
}

#[derive(Clone, Copy, Debug)]
enum Waiting {
    Recv,
    RecvTimeout,
    Epoll,
}

/// When `child` exits, as the parent sees it.
fn exit_time(mut child: KillOnDrop) -> mpsc::Receiver<Instant> {
    let (send, exited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = child.0.wait();
        let _ = send.send(Instant::now());
    });
    exited
}

/// Receives with `waiting` until the subscriber says the publishers are gone, checking
/// every message; returns how many arrived.
fn receive_until_disconnected<M: Mode, K: Topology>(
    subscriber: &mut Subscriber<Sample, M, K>,
    waiting: Waiting,
    checker: &mut Checker,
) -> u64 {
    let mut received = 0;
    let set = epoll::create(epoll::CreateFlags::CLOEXEC).unwrap();
    if let Waiting::Epoll = waiting {
        epoll::add(
            &set,
            subscriber.as_fd(),
            epoll::EventData::new_u64(1),
            epoll::EventFlags::IN,
        )
        .unwrap();
    }
    loop {
        let outcome = match waiting {
            Waiting::Recv => subscriber.recv().map(Some),
            Waiting::RecvTimeout => subscriber.recv_timeout(WATCHDOG).map(Some),
            Waiting::Epoll => subscriber.try_recv(),
        };
        match outcome {
            Ok(Some(message)) => {
                checker.check(message.publisher_slot(), &message);
                received += 1;
            }
            Ok(None) => {
                // The empty receive armed the descriptor: sleep until it fires.
                let mut events = Vec::with_capacity(1);
                let timeout = Timespec {
                    tv_sec: WATCHDOG.as_secs() as _,
                    tv_nsec: 0,
                };
                let n = epoll::wait(&set, rustix::buffer::spare_capacity(&mut events), Some(&timeout)).unwrap();
                assert!(n > 0, "{waiting:?}: the descriptor never fired within {WATCHDOG:?}");
            }
            Err(ReceiveError::Disconnected) => return received,
            Err(e) => panic!("{waiting:?}: {e}"),
        }
    }
}

/// The subscriber's side of one kind: for each way of waiting and each way of leaving,
/// a child publishes `COUNT` messages and goes; every one is received, then
/// `Disconnected`; a publisher that comes afterwards is received as usual, and its drop
/// is heard too.
fn a_subscriber_hears_its_publishers_leave<M: Mode, K: Topology>(test: &str) {
    if role().as_deref() == Some("publisher") {
        return publish_then_leave::<M, K>();
    }
    let mut lines = Vec::new();
    for waiting in [Waiting::Recv, Waiting::RecvTimeout, Waiting::Epoll] {
        for die in [true, false] {
            let name = unique_name("departure");
            let channel = Channel::<Sample, M, K>::create(&Config::new(&name)).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            // Joined before any publisher: it waits for the first, and says nothing else.
            let early = subscriber.recv_timeout(Duration::from_millis(20)).map(|m| m.seq);
            assert_eq!(early, Err(ReceiveError::TimedOut), "{waiting:?}: before any publisher");
            let args = [
                ("NAME", name.clone()),
                ("COUNT", COUNT.to_string()),
                ("DIE", u32::from(die).to_string()),
            ];
            let exited = exit_time(spawn(test, "publisher", &args));
            let mut checker = Checker::new(2);
            let received = receive_until_disconnected(&mut subscriber, waiting, &mut checker);
            let heard = Instant::now();
            assert_eq!(
                received, COUNT,
                "{waiting:?}, killed {die}: every committed message first"
            );
            let gone = exited
                .recv_timeout(WATCHDOG)
                .expect("the publisher process never exited");
            lines.push(format!(
                "{waiting:?} {}: heard {:?} after the process exited",
                if die { "SIGKILL" } else { "drop" },
                heard.saturating_duration_since(gone)
            ));
            assert_eq!(subscriber.live_publishers(), 0);

            // Not terminal: a next publisher is received as usual, and its drop heard.
            let mut publisher = channel.publisher().unwrap();
            publisher.offer(&Sample::new(1, 0)).unwrap();
            let next = subscriber.recv_timeout(WATCHDOG).map(|m| (m.producer, m.seq));
            assert_eq!(next, Ok((1, 0)), "{waiting:?}: the next publisher's message");
            assert_eq!(subscriber.live_publishers(), 1);
            drop(publisher);
            let after_drop = subscriber.recv_timeout(WATCHDOG).map(|m| m.seq);
            assert_eq!(after_drop, Err(ReceiveError::Disconnected), "{waiting:?}: after a drop");
            // Reported once: it waits for a next publisher again.
            assert_eq!(subscriber.try_recv().map(|m| m.is_none()), Ok(true));
        }
    }
    println!("{test}:\n  {}", lines.join("\n  "));
}

#[test]
fn fifo_mpsc_subscriber_hears_its_publishers_leave() {
    a_subscriber_hears_its_publishers_leave::<Fifo, Mpsc>("fifo_mpsc_subscriber_hears_its_publishers_leave");
}

#[test]
fn fifo_fanout_subscriber_hears_its_publishers_leave() {
    a_subscriber_hears_its_publishers_leave::<Fifo, Fanout>("fifo_fanout_subscriber_hears_its_publishers_leave");
}

#[test]
fn ordered_mpsc_subscriber_hears_its_publishers_leave() {
    a_subscriber_hears_its_publishers_leave::<Ordered, Mpsc>("ordered_mpsc_subscriber_hears_its_publishers_leave");
}

#[test]
fn ordered_fanout_subscriber_hears_its_publishers_leave() {
    a_subscriber_hears_its_publishers_leave::<Ordered, Fanout>("ordered_fanout_subscriber_hears_its_publishers_leave");
}

/// One of two publishers leaving is no departure: the subscriber keeps receiving the other.
#[test]
fn a_remaining_publisher_keeps_the_channel_connected() {
    let name = unique_name("one-left");
    let channel = salias::FifoMpsc::<Sample>::create(&Config::new(&name).publishers(2)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut staying = channel.publisher().unwrap();
    let leaving = channel.publisher().unwrap();
    drop(leaving);
    let quiet = subscriber.recv_timeout(Duration::from_millis(50)).map(|m| m.seq);
    assert_eq!(quiet, Err(ReceiveError::TimedOut));
    staying.offer(&Sample::new(0, 7)).unwrap();
    assert_eq!(subscriber.recv_timeout(WATCHDOG).map(|m| m.seq), Ok(7));
}

#[derive(Clone, Copy, Debug)]
enum Blocking {
    Send,
    Descriptor,
}

/// The publisher's side on an Mpsc channel: blocked for room (in `send`, or on its
/// descriptor) when the subscriber process is killed, it gets `NoSubscriber`, using
/// almost no CPU meanwhile; the next subscriber receives everything in order.
fn a_publisher_hears_its_subscriber_die<M: Mode>(test: &str) {
    if role().as_deref() == Some("subscriber") {
        return subscribe_then_die::<M>();
    }
    let mut lines = Vec::new();
    for blocking in [Blocking::Send, Blocking::Descriptor] {
        let name = unique_name("no-subscriber");
        let channel = Channel::<Sample, M, Mpsc>::create(&Config::new(&name).capacity(4096)).unwrap();
        let mut publisher = channel.publisher().unwrap();
        let child = spawn(test, "subscriber", &[("NAME", name.clone()), ("HOLD_MS", "300".into())]);
        let deadline = Instant::now() + WATCHDOG;
        while publisher.subscribers().tethered == 0 {
            assert!(Instant::now() < deadline, "the subscriber never joined");
            std::thread::sleep(Duration::from_millis(1));
        }
        let exited = exit_time(child);
        let mut sent = 0;
        loop {
            match publisher.offer(&Sample::new(0, sent)) {
                Ok(()) => sent += 1,
                Err(PublishError::Backpressured) => break,
                Err(e) => panic!("{blocking:?}: filling the ring: {e}"),
            }
        }
        let cpu = support::thread_cpu_time();
        let outcome = match blocking {
            Blocking::Send => publisher.send(&Sample::new(0, sent)),
            Blocking::Descriptor => {
                let fd = publisher.as_fd().try_clone_to_owned().unwrap();
                let mut outcome = Err(PublishError::Backpressured);
                // Each readiness is a look; a dead subscriber is found within a few.
                for _ in 0..1_000 {
                    assert!(readable(&fd, ARRIVAL), "the publisher's descriptor never fired");
                    outcome = publisher.offer(&Sample::new(0, sent));
                    if outcome != Err(PublishError::Backpressured) {
                        break;
                    }
                }
                outcome
            }
        };
        let heard = Instant::now();
        let cpu = support::thread_cpu_time() - cpu;
        assert_eq!(outcome, Err(PublishError::NoSubscriber), "{blocking:?}");
        let gone = exited
            .recv_timeout(WATCHDOG)
            .expect("the subscriber process never exited");
        // Waiting sleeps: the 300 ms the subscriber lived, and the detection after, cost
        // a spin phase and a few wake-ups, not a core.
        assert!(
            cpu < Duration::from_millis(100),
            "{blocking:?}: {cpu:?} of CPU while blocked"
        );
        lines.push(format!(
            "{blocking:?}: heard {:?} after the process exited, {cpu:?} of CPU while blocked",
            heard.saturating_duration_since(gone)
        ));
        // Said once: from now on it waits for a next subscriber, as at the start.
        let waits = publisher.send_timeout(&Sample::new(0, sent), Duration::from_millis(20));
        assert_eq!(waits, Err(PublishError::TimedOut), "{blocking:?}: after the report");

        // The next subscriber resumes where the dead one stopped: everything arrives.
        let mut subscriber = channel.subscriber().unwrap();
        let mut checker = Checker::new(1);
        for _ in 0..sent {
            let message = subscriber.recv_timeout(WATCHDOG).unwrap();
            checker.check(message.publisher_slot(), &message);
        }
        publisher.send(&Sample::new(0, sent)).unwrap();
        let last = subscriber.recv_timeout(WATCHDOG).map(|m| m.seq);
        assert_eq!(
            last,
            Ok(sent),
            "{blocking:?}: publishing again once a subscriber joined"
        );
    }
    println!("{test}:\n  {}", lines.join("\n  "));
}

#[test]
fn fifo_publisher_hears_its_subscriber_die() {
    a_publisher_hears_its_subscriber_die::<Fifo>("fifo_publisher_hears_its_subscriber_die");
}

#[test]
fn ordered_publisher_hears_its_subscriber_die() {
    a_publisher_hears_its_subscriber_die::<Ordered>("ordered_publisher_hears_its_subscriber_die");
}

/// A publisher that fills an Mpsc ring before any subscriber joined waits for the first
/// (the usual start-up order is no error); the joining subscriber makes a watched
/// publisher's descriptor readable and receives everything.
#[test]
fn a_publisher_that_started_first_waits_for_its_subscriber() {
    let name = unique_name("nobody-yet");
    let channel = salias::FifoMpsc::<Sample>::create(&Config::new(&name).capacity(4096)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut sent = 0;
    let refusal = loop {
        match publisher.offer(&Sample::new(0, sent)) {
            Ok(()) => sent += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(refusal, PublishError::Backpressured);
    let fd = publisher.as_fd().try_clone_to_owned().unwrap();
    assert!(!readable(&fd, Duration::ZERO), "readable before anything changed");
    let mut subscriber = channel.subscriber().unwrap();
    assert!(
        readable(&fd, ARRIVAL),
        "a joining subscriber did not make the descriptor readable"
    );
    for seq in 0..sent {
        assert_eq!(subscriber.recv_timeout(WATCHDOG).map(|m| m.seq), Ok(seq));
    }
    // The subscriber it now expects leaves: the next refusal says so, once.
    drop(subscriber);
    let mut refusals = Vec::new();
    while refusals.len() < 2 {
        if let Err(e) = publisher.offer(&Sample::new(0, sent)) {
            refusals.push(e);
        }
        sent += 1;
    }
    assert_eq!(refusals, [PublishError::NoSubscriber, PublishError::Backpressured]);
    assert!(
        refusals[0].to_string().contains("subscriber has gone"),
        "{}",
        refusals[0]
    );
}

/// An owner killed by a signal leaves its channel behind; the next `create` removes it
/// and says so, naming the dead owner.
#[test]
fn create_over_a_killed_owners_channel_says_it_recovered_one() {
    const TEST: &str = "create_over_a_killed_owners_channel_says_it_recovered_one";
    if role().as_deref() == Some("owner") {
        let _channel = salias::FifoMpsc::<Sample>::create(&Config::new(arg::<String>("NAME"))).unwrap();
        // SAFETY: raise has no memory-safety preconditions.
        unsafe { libc::raise(libc::SIGKILL) };
    }
    let name = unique_name("stale-owner");
    let mut owner = spawn(TEST, "owner", &[("NAME", name.clone())]);
    let pid = owner.0.id();
    let _ = owner.0.wait();
    assert!(salias::status::channel_status(&name).unwrap().is_stale());
    let channel = salias::FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    assert_eq!(
        channel.recovered(),
        Some(salias::channel::Recovered {
            owner_pid: Some(pid),
            finished: true
        })
    );
    let again = salias::FifoMpsc::<Sample>::connect(&name).unwrap();
    assert_eq!(again.recovered(), None, "only the creating handle recovered it");
}

/// `fn main() -> Result<(), salias::Error>` prints the error's Debug form: it carries
/// the sentence that says what to do.
#[test]
fn a_main_returning_an_error_prints_what_to_do() {
    const TEST: &str = "a_main_returning_an_error_prints_what_to_do";
    if role().as_deref() == Some("main") {
        let result: Result<(), salias::Error> = salias::FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).map(drop);
        // What the runtime does with `main`'s return value.
        let code = std::process::Termination::report(result);
        std::process::exit(if code == std::process::ExitCode::SUCCESS { 0 } else { 1 });
    }
    let name = unique_name("no-such-channel");
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([TEST, "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env(support::ROLE_VAR, "main")
        .env("SALIAS_TEST_NAME", &name)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let expected =
        format!("Error: NotFound: no channel named {name:?} exists; create it first with `create`, or check the name");
    assert!(stderr.contains(&expected), "stderr:\n{stderr}");
}
