//! What sleeping and waking cost in system calls, read from an strace of the test itself:
//! short sleeps skip the process-wide barrier, long ones take it, and a burst of commits
//! wakes a sleeping subscriber with one futex call per sleep, not one per commit.
//! Skipped, with a printed reason, where strace is not installed. The Linux platform
//! layer only: the portable one has no barrier (tests/idle_sleep.rs covers its sleeping).
#![cfg(all(target_os = "linux", not(salias_portable)))]

mod support;

use std::time::{Duration, Instant};

use salias::{Config, FifoFanout, SaliasMessage, wait::Adaptive};
use support::{role, strace_marker, traced_section, unique_name};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
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

/// The timeout of a traced futex wait, in ns (`{tv_sec=0, tv_nsec=50000}`).
fn wait_timeout_ns(line: &str) -> Option<u64> {
    let field = |name: &str| -> Option<u64> {
        let from = line.find(name)? + name.len();
        let digits: String = line[from..].chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    Some(field("tv_sec=")? * 1_000_000_000 + field("tv_nsec=")?)
}

/// Whether the kernel has the expedited barrier that long sleeps rely on; the tests that
/// count barriers skip, with a printed reason, where it does not.
fn barrier_available(test: &str) -> bool {
    const QUERY: libc::c_long = 0;
    const GLOBAL_EXPEDITED: libc::c_long = 1 << 1;
    const REGISTER_GLOBAL_EXPEDITED: libc::c_long = 1 << 2;
    // SAFETY: MEMBARRIER_CMD_QUERY only returns a bit mask; it reads and writes no memory.
    let supported = unsafe { libc::syscall(libc::SYS_membarrier, QUERY, 0) };
    let needed = GLOBAL_EXPEDITED | REGISTER_GLOBAL_EXPEDITED;
    if supported < 0 || supported & needed != needed {
        support::skipped(test, "this kernel has no expedited global membarrier");
        return false;
    }
    true
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
        assert_eq!(outcome, Err(salias::ReceiveError::TimedOut), "{outcome:?}");
        return;
    }
    if !barrier_available(TEST) {
        return;
    }
    let Some(calls) = traced_section(TEST, "salias-sleep") else {
        return;
    };
    let short_park = salias::wait::SHORT_PARK.as_nanos() as u64;
    let waits: Vec<(usize, u64)> = calls
        .iter()
        .enumerate()
        .filter(|(_, line)| is_shared_futex(line, "FUTEX_WAIT"))
        .map(|(at, line)| {
            (
                at,
                wait_timeout_ns(line).unwrap_or_else(|| panic!("no timeout in {line}")),
            )
        })
        .collect();
    let first_barrier = calls.iter().position(|l| is_barrier(l)).unwrap_or_else(|| {
        panic!("a long sleep took no barrier:\n{}", calls.join("\n"));
    });
    let short_waits = waits
        .iter()
        .filter(|&&(at, timeout)| at < first_barrier && timeout == short_park)
        .count();
    assert_eq!(
        short_waits,
        SHORT_PARKS,
        "short sleeps before the first barrier:\n{}",
        calls.join("\n")
    );
    // The last sleep may be cut short by the deadline, and then skips the barrier too.
    let long_waits = waits.iter().filter(|&&(_, timeout)| timeout > short_park).count();
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
    if !barrier_available(TEST) {
        return;
    }
    let Some(calls) = traced_section(TEST, "salias-burst") else {
        return;
    };
    let wakes = calls.iter().filter(|l| is_shared_futex(l, "FUTEX_WAKE")).count();
    // One more for a sleep announced before the start marker (if the reader was not yet
    // asleep then, the bound is only looser).
    let sleeps = calls.iter().filter(|l| is_barrier(l)).count() + 1;
    println!("{BURST} commits woke the subscriber {wakes} times over {sleeps} sleeps");
    assert!(wakes >= 1, "the sleeping subscriber was never woken");
    // And one when the subscriber drops at the end: it wakes publishers waiting for room
    // (on the room line), which might wait for it.
    assert!(
        wakes <= sleeps + 1,
        "{wakes} wake calls for {sleeps} sleeps:\n{}",
        calls.join("\n")
    );
}
