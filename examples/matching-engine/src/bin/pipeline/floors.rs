//! The machine's floors, measured by the sweep: a cache line between two cores, and how
//! late a pacing wait wakes.

use support::clock::now_ns;
use support::hist::{Quantiles, histogram};

use crate::pacing::{precise_sleep, wait_until};
use crate::params::GatewayWait;
use crate::placement::pin;

/// The machine's floor between two cores (doc/benchmarking.md rule 7): a bare cache-line
/// ping-pong between two threads pinned to them, one way (round trip / 2). Both sides are
/// new threads, so the main thread's affinity, which children inherit, stays as it was.
pub fn cache_line_floor(a: usize, b: usize) -> Quantiles {
    const PINGS: u64 = 100_000;
    let mut round_trips =
        support::floor::between_threads(a, b, PINGS).unwrap_or_else(|e| panic!("cache-line floor: {e}"));
    round_trips.sort_unstable();
    Quantiles::of_sorted(&round_trips).map(|round_trip| round_trip / 2)
}

/// The machine's floor for gateway pacing: `waiters` threads pinned to `core` wait with
/// the gateways' `wait_until` (`how`: yield or sleep) for planned times that together come
/// `rate` times a second, for 200 ms. Returns how late they were.
pub fn pacing_floor(core: usize, waiters: u64, rate: f64, how: GatewayWait) -> Quantiles {
    let interval = 1e9 / rate;
    let per_waiter = (rate * 0.2) as u64 / waiters;
    let t0 = now_ns() + 10_000_000;
    let threads: Vec<_> = (0..waiters)
        .map(|w| {
            std::thread::spawn(move || {
                pin(core);
                precise_sleep();
                let mut late = histogram();
                for i in 0..per_waiter {
                    let planned = t0 + ((i * waiters + w) as f64 * interval) as u64;
                    wait_until(planned, how);
                    late.saturating_record(now_ns() - planned);
                }
                late
            })
        })
        .collect();
    let mut late = histogram();
    for thread in threads {
        late.add(thread.join().expect("pacing thread"))
            .expect("same histogram bounds");
    }
    Quantiles::of(&late)
}
