//! What sleeping and waking cost in system calls, read from an strace of the test itself:
//! short sleeps skip the process-wide barrier, long ones take it, and a burst of commits
//! wakes a sleeping subscriber with one futex call per sleep, not one per commit.
//! Skipped, with a printed reason, where strace is not installed. The Linux platform
//! layer only: the portable one has neither futex nor barrier.
#![cfg(not(feature = "portable"))]

mod support;

use std::time::{Duration, Instant};

use salias::{Adaptive, Config, Error, FifoFanout, SaliasMessage};
use support::{role, strace_marker, traced_section, unique_name};

#[derive(SaliasMessage, Clone, Copy)]
#[repr(C)]
struct Tick {
    seq: u64,
}

/// A futex wait or wake on a channel's (shared, so not `_PRIVATE`) futex word.
fn is_shared_futex(line: &str, op: &str) -> bool {
    line.contains("futex(") && line.contains(&format!("{op},")) && !line.contains("_PRIVATE")
}

fn is_barrier(line: &str) -> bool {
    line.contains("membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED")
}

#[test]
fn short_sleeps_skip_the_barrier_and_long_ones_take_it() {
    const SHORT_PARKS: usize = 10;
    const TEST: &str = "short_sleeps_skip_the_barrier_and_long_ones_take_it";
    if role().as_deref() == Some("traced") {
        let channel = FifoFanout::<Tick>::create(&Config::new(unique_name("sleep"))).unwrap();
        let _publisher = channel.publisher().unwrap(); // registers for the barrier
        let mut subscriber = channel.subscriber().unwrap();
        subscriber.set_wait_strategy(Adaptive {
            spins: 0,
            yields: 0,
            short_parks: SHORT_PARKS as u32,
        });
        strace_marker("salias-sleep-start");
        // Nothing is ever published: 10 short sleeps, then long ones until the timeout.
        let outcome = subscriber.recv_timeout(Duration::from_millis(250)).map(|t| t.seq);
        strace_marker("salias-sleep-end");
        assert!(matches!(outcome, Err(Error::TimedOut)), "{outcome:?}");
        return;
    }
    let Some(calls) = traced_section(TEST, "salias-sleep") else {
        return;
    };
    let first_barrier = calls.iter().position(|l| is_barrier(l)).unwrap_or_else(|| {
        panic!("a long sleep took no barrier:\n{}", calls.join("\n"));
    });
    let short_waits = calls[..first_barrier]
        .iter()
        .filter(|l| is_shared_futex(l, "FUTEX_WAIT"))
        .count();
    assert_eq!(
        short_waits,
        SHORT_PARKS,
        "short sleeps before the first barrier:\n{}",
        calls.join("\n")
    );
    let long_waits = calls[first_barrier..]
        .iter()
        .filter(|l| is_shared_futex(l, "FUTEX_WAIT"))
        .count();
    let barriers = calls.iter().filter(|l| is_barrier(l)).count();
    assert!(long_waits >= 1, "{}", calls.join("\n"));
    assert_eq!(
        barriers,
        long_waits,
        "one barrier per long sleep:\n{}",
        calls.join("\n")
    );
}

#[test]
fn a_burst_of_commits_wakes_a_sleeper_once_per_sleep() {
    const TEST: &str = "a_burst_of_commits_wakes_a_sleeper_once_per_sleep";
    const BURST: u64 = 2_000;
    if role().as_deref() == Some("traced") {
        let channel = FifoFanout::<Tick>::create(&Config::new(unique_name("burst"))).unwrap();
        let mut publisher = channel.publisher().unwrap();
        let mut subscriber = channel.subscriber().unwrap();
        // No spinning and only long sleeps: every sleep takes one barrier, so the trace
        // counts the sleeps.
        subscriber.set_wait_strategy(Adaptive {
            spins: 0,
            yields: 0,
            short_parks: 0,
        });
        let reader = std::thread::spawn(move || (0..BURST).map(|_| subscriber.recv().unwrap().seq).sum::<u64>());
        // Let the subscriber fall asleep first.
        std::thread::sleep(Duration::from_millis(100));
        strace_marker("salias-burst-start");
        for seq in 0..BURST {
            publisher.offer(&Tick { seq }).unwrap();
            // Spread the burst so that commits keep arriving while the subscriber wakes.
            let until = Instant::now() + Duration::from_micros(2);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
        let sum = reader.join().unwrap();
        strace_marker("salias-burst-end");
        assert_eq!(sum, BURST * (BURST - 1) / 2);
        return;
    }
    let Some(calls) = traced_section(TEST, "salias-burst") else {
        return;
    };
    let wakes = calls.iter().filter(|l| is_shared_futex(l, "FUTEX_WAKE")).count();
    // The sleep in progress at the start marker announced itself before it.
    let sleeps = calls.iter().filter(|l| is_barrier(l)).count() + 1;
    println!("{BURST} commits woke the subscriber {wakes} times over {sleeps} sleeps");
    assert!(wakes >= 1, "the sleeping subscriber was never woken");
    assert!(
        wakes <= sleeps,
        "{wakes} wake calls for {sleeps} sleeps:\n{}",
        calls.join("\n")
    );
}
