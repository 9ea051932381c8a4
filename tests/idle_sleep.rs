//! On the portable platform layer (what macOS runs; on Linux `--cfg salias_portable`), an
//! idle subscriber sleeps until a commit from another process wakes it: it neither naps
//! and re-checks nor sleeps through the commit. The Linux layer's sleeping is counted from
//! strace in tests/sleep_wake.rs.
#![cfg(any(not(target_os = "linux"), salias_portable))]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use salias::{wait::Park, wait::WaitStrategy};
use support::{IdleBursts, report, reported, role};

/// The watchdog, far beyond the test's run (2 s of idle gaps): a subscriber that sleeps
/// through a commit sleeps an hour (`CountingSleeper`), and the watchdog fails the test
/// instead.
const WATCHDOG: Duration = Duration::from_secs(60);

/// Parks at once, for an hour, and counts its parks: only a wake-up ends one sooner.
struct CountingSleeper(Arc<AtomicU64>);

impl WaitStrategy for CountingSleeper {
    fn wait(&mut self, _idle: u32, park: &mut Park<'_>) {
        self.0.fetch_add(1, Ordering::Relaxed);
        park.park(Duration::from_secs(3600));
    }
}

#[test]
fn idle_subscriber_sleeps_until_a_commit_from_another_process_wakes_it() {
    const TEST: &str = "idle_subscriber_sleeps_until_a_commit_from_another_process_wakes_it";
    const BURSTS: IdleBursts = IdleBursts::FIVE_GAPS;
    match role().as_deref() {
        Some("publisher") => BURSTS.publish(),
        Some("subscriber") => {
            let parks = Arc::new(AtomicU64::new(0));
            BURSTS.receive(CountingSleeper(parks.clone()));
            report(format!("parks {}", parks.load(Ordering::Relaxed)));
        }
        _ => {
            let reports = BURSTS.run(TEST, WATCHDOG);
            let (parks, cpu) = (reported(&reports, "parks"), reported(&reports, "cpu_micros"));
            let messages = u128::from(BURSTS.messages());
            let idle_total = BURSTS.idle_micros();
            eprintln!(
                "idle subscriber: {parks} parks and {cpu} µs CPU for {messages} messages over {idle_total} µs idle"
            );
            // Woken only by commits, it parks at most once per message, and at most once
            // more per burst for a wake that finds the burst's message not yet readable.
            // One that napped and re-checked would park thousands of times per idle second.
            assert!(
                parks <= 2 * messages,
                "the subscriber parked {parks} times for {messages} messages: its sleeps end without a commit"
            );
            assert!(
                cpu * 10 < idle_total,
                "the idle subscriber used {cpu} µs of CPU over {idle_total} µs of idleness"
            );
        }
    }
}
