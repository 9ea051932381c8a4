//! How a gateway waits for a planned time, and the timer precision it sleeps with.

use std::time::Duration;

use support::clock::now_ns;

use crate::params::GatewayWait;

/// Within this much of a planned time a yielding gateway stops sleeping and yields
/// instead: a timer sleep on the development VM wakes 10 µs late at p50 and 28 µs at p99
/// (the sweep measures it, `sleep_wake_floor`).
pub const YIELD_WINDOW_NS: u64 = 30_000;

/// Waits for a planned send time without holding the core: on two cores the gateways
/// share one with the subscriber, which must get to run. Waking late shows up as queueing
/// time.
///
/// - `yield` (the default): sleep until `YIELD_WINDOW_NS` before the planned time, then
///   `sched_yield` until it. Two gateways and a subscriber on one core take turns within
///   microseconds.
/// - `sleep`: sleep until the planned time (timer slack cut to 1 ns), spinning only the
///   last microsecond. On the development VM each timer wake-up costs the core about
///   10 µs, so two gateways sleeping 100,000 times a second in total already saturate
///   it and fall milliseconds behind.
pub fn wait_until(planned: u64, how: GatewayWait) {
    let yielding = how == GatewayWait::Yield;
    loop {
        let now = now_ns();
        if now >= planned {
            return;
        }
        let left = planned - now;
        if yielding {
            if left > YIELD_WINDOW_NS {
                std::thread::sleep(Duration::from_nanos(left - YIELD_WINDOW_NS));
            } else {
                std::thread::yield_now();
            }
        } else if left > 1_000 {
            std::thread::sleep(Duration::from_nanos(left));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Sleep with hrtimer precision instead of the default 50 µs slack.
pub fn precise_sleep() {
    rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1)).expect("set timer slack");
}
