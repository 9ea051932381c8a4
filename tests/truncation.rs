//! A peer that shrinks a channel's objects under everyone (`ftruncate` to 0 or to half, at
//! a random moment): every process that has the channel mapped, the publisher, the
//! subscriber and `salias show`, carries on and reports the damage (`Truncated` or
//! `Corrupt` from a publish or receive, with the full `Error::Corrupt` from the handle's
//! `fault()`) instead of dying of SIGBUS.
#![cfg(target_os = "linux")]

mod support;

use std::time::{Duration, Instant};

use salias::{Channel, Config, Error, Fanout, Fifo, Mpsc, PublishError, ReceiveError, kind::Topology};
use support::{
    Sample, SplitMix, TOOL_ROLE, arg, report, role, run_tool, salias_tool, shm_objects_of, spawn, unique_name, wait_all,
};

const TEST: &str = "a_truncated_channel_is_reported_not_fatal";
/// Slots of the Fanout channel used when the control block is cut: enough that it spans two
/// pages, so cutting it in half takes a whole page away from under every process.
const FANOUT_SUBSCRIBERS: u32 = 16;

/// Retries `attempt` on `handle` until it reports the damage: `broken` says whether an
/// error does (anything else but backpressure fails the test); `fault` must then hold
/// the full `Error::Corrupt`.
fn wait_for_corruption<H, R, E: Copy + std::fmt::Display>(
    what: &str,
    handle: &mut H,
    mut attempt: impl FnMut(&mut H) -> Result<R, E>,
    broken: impl Fn(E) -> Option<bool>,
    fault: impl Fn(&H) -> Option<Error>,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Err(error) = attempt(handle) {
            match broken(error) {
                Some(true) => match fault(handle) {
                    Some(Error::Corrupt { what: found, .. }) => {
                        report(format!("corrupt {what}: {found}"));
                        return;
                    }
                    other => panic!("{what} returned {error}, but its fault is {other:?}"),
                },
                Some(false) => {}
                None => panic!("{what} expected Corrupt or Truncated, got {error}"),
            }
        }
        assert!(Instant::now() < deadline, "{what} never noticed the truncation");
    }
}

fn run_role<K: Topology>(role: &str) {
    let name: String = arg("NAME");
    let channel = Channel::<Sample, Fifo, K>::connect(&name).unwrap();
    match role {
        "publisher" => {
            let mut publisher = channel.publisher().unwrap();
            report("running");
            let mut seq = 0;
            wait_for_corruption(
                "publisher",
                &mut publisher,
                |publisher| {
                    let sent = publisher.offer(&Sample::new(0, seq));
                    seq += u64::from(sent.is_ok());
                    sent
                },
                |error| match error {
                    PublishError::Corrupt | PublishError::Truncated => Some(true),
                    // The subscriber process may stop first, having found the damage.
                    PublishError::Backpressured | PublishError::NoSubscriber => Some(false),
                    _ => None,
                },
                |publisher| publisher.fault(),
            );
        }
        _ => {
            let mut subscriber = channel.subscriber().unwrap();
            report("running");
            wait_for_corruption(
                "subscriber",
                &mut subscriber,
                |subscriber| subscriber.try_recv().map(|m| m.map(|m| m.seq)),
                |error| match error {
                    ReceiveError::Corrupt | ReceiveError::Truncated => Some(true),
                    // The publisher process may stop first, having found the damage.
                    ReceiveError::Disconnected => Some(false),
                    _ => None,
                },
                |subscriber| subscriber.fault(),
            );
        }
    }
}

/// Runs `salias show` on the channel until told to stop; every run must end with an exit
/// code, never a signal. Returns how many runs reported the damage.
fn show_until(name: &str, stop: &std::sync::atomic::AtomicBool) -> (u32, u32) {
    use std::os::unix::process::ExitStatusExt;
    let (mut runs, mut refused) = (0, 0);
    while !stop.load(std::sync::atomic::Ordering::Relaxed) || runs == 0 {
        let out = salias_tool(TEST, &["show", name]);
        assert!(
            out.status.signal().is_none(),
            "salias show was killed by signal {:?}",
            out.status.signal()
        );
        runs += 1;
        refused += u32::from(!out.status.success());
    }
    (runs, refused)
}

fn truncate_case<K: Topology>(case: u64, object: usize, half: bool) {
    let name = unique_name("truncated");
    let config = if K::FANOUT {
        Config::new(&name).capacity(64 << 10).subscribers(FANOUT_SUBSCRIBERS)
    } else {
        Config::new(&name).capacity(64 << 10)
    };
    let owner = Channel::<Sample, Fifo, K>::create(&config).unwrap();
    let args = [("NAME", name.clone()), ("FANOUT", K::FANOUT.to_string())];
    let mut publisher = spawn(TEST, "publisher", &args);
    let mut subscriber = spawn(TEST, "subscriber", &args);
    assert_eq!(publisher.next_report(), "running");
    assert_eq!(subscriber.next_report(), "running");

    let stop = std::sync::atomic::AtomicBool::new(false);
    let path = format!("/dev/shm{}", salias::__private::shm_object_names(&name)[object]);
    /// Stops the `salias show` loop however the scope ends, so a failing case fails
    /// instead of waiting for it forever.
    struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let (runs, refused) = std::thread::scope(|scope| {
        let show = scope.spawn(|| show_until(&name, &stop));
        let _stop = StopOnDrop(&stop);
        // A random moment: messages are flowing and `salias show` is reading.
        std::thread::sleep(Duration::from_micros(SplitMix(case).next() % 20_000));
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let len = file.metadata().unwrap().len();
        let new_len = if half { len / 2 } else { 0 };
        file.set_len(new_len).unwrap();
        println!("case {case}: cut {path} from {len} to {new_len} bytes");
        let reports = wait_all(
            vec![("publisher", publisher), ("subscriber", subscriber)],
            Duration::from_secs(120),
        );
        for (who, lines) in ["publisher", "subscriber"].iter().zip(&reports) {
            let line = lines
                .iter()
                .find(|l| l.starts_with(&format!("corrupt {who}")))
                .unwrap_or_else(|| panic!("the {who} did not report the damage: {lines:?}"));
            println!("  {line}");
        }
        drop(_stop);
        show.join().unwrap()
    });
    // Once cut, `salias show` refuses the channel (a channel cut to 0 reads as one whose
    // creation has not finished).
    let after = salias_tool(TEST, &["show", &name]);
    assert!(!after.status.success(), "salias show accepted a truncated channel");
    println!(
        "  salias show ran {runs} times ({refused} refused); afterwards: {}",
        String::from_utf8_lossy(&after.stderr).trim()
    );
    drop(owner);
    assert!(
        shm_objects_of(&name).is_empty(),
        "the owner's drop removes what is left"
    );
}

#[test]
fn a_truncated_channel_is_reported_not_fatal() {
    if std::env::var("SALIAS_SANITIZER").as_deref() == Ok("thread") {
        // The fault that truncation causes can land inside one of ThreadSanitizer's own
        // atomic operations, which holds a runtime lock that the handler's atomics then
        // wait for. The normal and AddressSanitizer runs cover this test.
        support::skipped(
            TEST,
            "ThreadSanitizer's runtime is not reentrant for a fault inside its atomics",
        );
        return;
    }
    if role().as_deref() == Some(TOOL_ROLE) {
        run_tool();
    }
    if let Some(role) = role().filter(|role| role != "ignores-sigbus") {
        if arg::<bool>("FANOUT") {
            return run_role::<Fanout>(&role);
        }
        return run_role::<Mpsc>(&role);
    }
    // Ring object (index 1) on a one-ring Mpsc channel; control object (index 0) on a
    // Fanout channel whose control block spans two pages.
    for round in 0..2 {
        for (case, (object, half)) in [(1, false), (1, true), (0, false), (0, true)].into_iter().enumerate() {
            let case = (round * 4 + case) as u64;
            if object == 1 {
                truncate_case::<Mpsc>(case, object, half);
            } else {
                truncate_case::<Fanout>(case, object, half);
            }
        }
    }
}

/// A SIGBUS that someone sends (not a fault) is not a truncation: it poisons no channel,
/// and a process that ignored SIGBUS before salias came still ignores it.
#[test]
fn a_sent_sigbus_is_not_taken_for_a_truncation() {
    const SENT: &str = "a_sent_sigbus_is_not_taken_for_a_truncation";
    if role().as_deref() == Some("ignores-sigbus") {
        // SAFETY: setting a signal's disposition to SIG_IGN has no memory-safety preconditions.
        unsafe { libc::signal(libc::SIGBUS, libc::SIG_IGN) };
        let channel = Channel::<Sample, Fifo, Mpsc>::create(&Config::new(unique_name("sent-sigbus"))).unwrap();
        let mut publisher = channel.publisher().unwrap();
        let mut subscriber = channel.subscriber().unwrap();
        for seq in 0..3 {
            // SAFETY: raising a signal has no memory-safety preconditions.
            unsafe { libc::raise(libc::SIGBUS) };
            publisher.offer(&Sample::new(0, seq)).unwrap();
            assert_eq!(subscriber.try_recv().unwrap().map(|s| s.seq), Some(seq));
        }
        report("survived");
        return;
    }
    let reports = wait_all(
        vec![("ignores-sigbus", spawn(SENT, "ignores-sigbus", &[]))],
        Duration::from_secs(60),
    );
    assert_eq!(reports[0], ["survived"]);
}
