//! The hot paths make no system call: the test runs itself under strace and checks that
//! nothing but its own markers happens between the start and end markers of a busy
//! publish/receive loop. The cold paths that check whether a peer still lives (a
//! backpressured fanout publisher, an ordered subscriber waiting on a held number) make
//! only liveness checks, and only now and then. Skipped, with a printed reason, where
//! strace is not installed (in CI, with `CI` set, that fails instead).

mod support;

use std::time::{Duration, Instant};

use salias::{Config, FifoFanout, FifoMpsc, OrderedFanout, PublishError, RawFifoMpsc, SaliasMessage};
use support::{HOLDER_ROLE, HeldNumber, role, strace_marker, unique_name};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Tick {
    seq: u64,
    words: [u64; 7],
}

fn hot_loop() {
    let name = unique_name("syscall");
    let channel = FifoMpsc::<Tick>::create(&Config::new(&name).capacity(64 * 1024)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let raw = RawFifoMpsc::create(&Config::new(format!("{name}-raw")).capacity(64 * 1024)).unwrap();
    let mut raw_publisher = raw.publisher().unwrap();
    let mut raw_subscriber = raw.subscriber().unwrap();
    let ordered = OrderedFanout::<Tick>::create(&Config::new(format!("{name}-ordered")).capacity(64 * 1024)).unwrap();
    let mut ordered_subscriber = ordered.subscriber().unwrap();
    let mut ordered_publisher = ordered.publisher().unwrap();
    let batch = [Tick { seq: 1, words: [0; 7] }; 8];
    let mut sum = 0u64;
    // Its `caught_up` spins on every short `recv_batch` below.
    subscriber.set_wait_strategy(salias::wait::Batching::default());
    strace_marker("salias-hot-start");
    for seq in 0..50_000u64 {
        publisher.offer(&Tick { seq, words: [0; 7] }).unwrap();
        let mut claim = publisher.claim().unwrap();
        claim.seq = seq;
        claim.commit();
        publisher.offer_batch(&batch).unwrap();
        sum += subscriber.try_recv().unwrap().unwrap().seq;
        sum += subscriber.recv().unwrap().seq;
        subscriber.drain(8, |_, t| sum += t.seq).unwrap();
        publisher.offer_batch(&batch).unwrap();
        assert_eq!(subscriber.recv_batch(16, |_, t| sum += t.seq).unwrap(), 8);
        raw_publisher.offer(&[1u8; 100]).unwrap();
        sum += raw_subscriber.try_recv().unwrap().unwrap().len() as u64;
        raw_publisher.offer_batch(&[&[2u8; 40][..], &[3u8; 60]]).unwrap();
        assert_eq!(
            raw_subscriber.drain(2, |_, bytes| sum += bytes.len() as u64).unwrap(),
            2
        );
        ordered_publisher.offer_batch(&batch[..2]).unwrap();
        ordered_subscriber
            .drain(2, |info, t| sum += t.seq + info.sequence() % 2)
            .unwrap();
    }
    strace_marker("salias-hot-end");
    assert_eq!(sum, 2 * (50_000 * 49_999 / 2) + 50_000 * (8 + 8 + 100 + 100 + 2 + 1));
}

#[test]
fn hot_paths_make_no_system_call() {
    if role().as_deref() == Some("traced") {
        hot_loop();
        return;
    }
    let Some(calls) = support::traced_section("hot_paths_make_no_system_call", "salias-hot") else {
        return;
    };
    assert!(calls.is_empty(), "system calls on the hot path:\n{}", calls.join("\n"));
}

/// Long enough for many liveness checks, which run at most once a millisecond.
const LIVENESS_SPAN: Duration = Duration::from_millis(25);
/// Calls made at least, however fast they run.
const MIN_CALLS: u64 = 100_000;
/// At most one liveness check per this many calls.
const CALLS_PER_CHECK: u64 = 100;

/// Calls `call` until both `MIN_CALLS` calls and `LIVENESS_SPAN` have gone by, between
/// the `{tag}-start` and `{tag}-end` markers; then reports how many calls it made.
fn traced_calls(tag: &str, mut call: impl FnMut()) {
    // Formatted first: an allocation inside the section might make a system call.
    let end = format!("{tag}-end");
    strace_marker(&format!("{tag}-start"));
    let started = Instant::now();
    let mut calls = 0u64;
    while calls < MIN_CALLS || started.elapsed() < LIVENESS_SPAN {
        call();
        calls += 1;
    }
    let elapsed = started.elapsed();
    strace_marker(&end);
    strace_marker(&format!("{tag}-calls={calls}"));
    strace_marker(&format!("{tag}-millis={}", elapsed.as_millis()));
}

/// Checks that the traced section of `test` holds only liveness checks (`kill(pid, 0)`,
/// then open, read and close of `/proc/PID/stat`) and truncation checks (`fstat` of the
/// channel's two objects), at most one read of `/proc` per liveness check, and at most one
/// check of each kind per `CALLS_PER_CHECK` calls, but some: the checks must keep running.
/// The checks run at most once a millisecond, so where tracing slows the calls below one
/// per 10 µs (a loaded machine), the section's milliseconds bound them instead.
fn assert_rate_limited_liveness_checks(test: &str, tag: &str) {
    let Some(trace) = support::traced_run(test) else {
        return;
    };
    let section = support::section(&trace, tag);
    let calls = support::traced_count(&trace, &format!("{tag}-calls"));
    // One check a millisecond at most: the bound the calls' count sets, unless slow calls
    // made the section last longer than that count of milliseconds.
    let allowed = (calls / CALLS_PER_CHECK).max(support::traced_count(&trace, &format!("{tag}-millis")) + 1);
    let (mut checks, mut opens, mut sizes) = (0u64, 0u64, 0u64);
    for line in &section {
        let Some((name, args)) = support::syscall(line) else {
            continue; // a signal or an exit: not a call this process made
        };
        let proc_stat = |path: &str| {
            path.strip_prefix("\"/proc/")
                .and_then(|rest| rest.split_once("/stat\""))
                .is_some_and(|(pid, _)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        };
        let allowed = match name {
            "kill" => args.split_once(')').is_some_and(|(inner, _)| inner.ends_with(", 0")),
            "openat" => args.strip_prefix("AT_FDCWD, ").is_some_and(proc_stat),
            "open" => proc_stat(args),
            "read" | "close" => true,
            // Whether a peer shrank the channel's objects: by descriptor, never by path.
            "fstat" => true,
            "newfstatat" | "statx" => args.contains("\"\"") && args.contains("AT_EMPTY_PATH"),
            // Debug builds of std check that a file descriptor is still open before closing it.
            "fcntl" => cfg!(debug_assertions) && args.contains("F_GETFD)"),
            _ => false,
        };
        assert!(
            allowed,
            "not a liveness check: {line}\nsection:\n{}",
            section.join("\n")
        );
        checks += u64::from(name == "kill");
        opens += u64::from(name.starts_with("open"));
        sizes += u64::from(name.contains("stat"));
    }
    assert!(
        checks > 0,
        "no liveness check in {calls} calls:\n{}",
        section.join("\n")
    );
    assert!(sizes > 0, "no truncation check in {calls} calls");
    println!("{test}: {checks} liveness checks and {sizes} object size checks in {calls} calls");
    assert!(opens <= checks, "{opens} reads of /proc for {checks} liveness checks");
    assert!(
        checks <= allowed,
        "{checks} liveness checks in {calls} calls: not rate-limited"
    );
    // Two objects per check.
    assert!(
        sizes <= 2 * allowed,
        "{sizes} object size checks in {calls} calls: not rate-limited"
    );
}

#[test]
fn backpressured_fanout_publisher_checks_liveness_rarely() {
    const TEST: &str = "backpressured_fanout_publisher_checks_liveness_rarely";
    if role().as_deref() == Some("reader") {
        // Joins and stops, alive and never reading: a holder in another process, whose
        // liveness only the system can tell (a slot of the publisher's own process needs
        // no check).
        let channel = FifoFanout::<Tick>::connect(&support::arg::<String>("NAME")).unwrap();
        let _never_reads = channel.subscriber().unwrap();
        // SAFETY: raise has no memory-safety preconditions.
        unsafe { libc::raise(libc::SIGSTOP) };
        unreachable!("the parent kills the stopped reader");
    }
    if role().as_deref() == Some("traced") {
        let name = unique_name("syscall-fanout-bp");
        let channel = FifoFanout::<Tick>::create(&Config::new(&name).capacity(4096)).unwrap();
        let mut publisher = channel.publisher().unwrap();
        let reader = support::spawn(TEST, "reader", &[("NAME", name.clone())]);
        support::wait_until_stopped(&reader, std::time::Duration::from_secs(60));
        let tick = Tick { seq: 1, words: [0; 7] };
        while publisher.offer(&tick).is_ok() {}
        traced_calls("salias-bp", || {
            assert_eq!(publisher.offer(&tick), Err(PublishError::Backpressured));
        });
        return;
    }
    assert_rate_limited_liveness_checks(TEST, "salias-bp");
}

#[test]
fn ordered_subscriber_waiting_on_a_held_number_checks_liveness_rarely() {
    const TEST: &str = "ordered_subscriber_waiting_on_a_held_number_checks_liveness_rarely";
    match role().as_deref() {
        Some(HOLDER_ROLE) => support::hold_next_number(),
        Some("traced") => {
            let mut held = HeldNumber::new(TEST);
            traced_calls("salias-held", || {
                assert!(matches!(held.subscriber.try_recv(), Ok(None)));
            });
            assert_eq!(
                held.subscriber.gaps().events,
                0,
                "a gap declared while its holder lives"
            );
            held.kill_holder_then_expect_gap();
        }
        _ => assert_rate_limited_liveness_checks(TEST, "salias-held"),
    }
}
