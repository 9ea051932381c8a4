//! The machine's floors, measured by the sweep: a cache line between two cores, and how
//! late a pacing wait wakes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use hdrhistogram::Histogram;

use crate::clock::{now_ns, precise_sleep, wait_until};
use crate::histograms::histogram;
use crate::params::GatewayWait;
use crate::placement::pin;

/// The machine's floor between two cores (BENCHMARKING.md rule 7): a bare cache-line
/// ping-pong between two threads pinned to them; one way = round trip / 2. Both sides are
/// spawned threads so that the main thread's affinity, which children inherit, stays as
/// it was.
pub fn cache_line_floor(a: usize, b: usize) -> Histogram<u64> {
    const PINGS: u64 = 100_000;
    let line = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let pong = {
        let line = line.clone();
        std::thread::spawn(move || {
            pin(b);
            for i in 1..=PINGS {
                while line[0].load(Ordering::Acquire) != i {
                    std::hint::spin_loop();
                }
                line[1].store(i, Ordering::Release);
            }
        })
    };
    let ping = std::thread::spawn(move || {
        pin(a);
        let mut one_way = histogram();
        for i in 1..=PINGS {
            let sent = now_ns();
            line[0].store(i, Ordering::Release);
            while line[1].load(Ordering::Acquire) != i {
                std::hint::spin_loop();
            }
            one_way.saturating_record((now_ns() - sent) / 2);
        }
        one_way
    });
    pong.join().expect("pong thread");
    ping.join().expect("ping thread")
}

/// The machine's floor for gateway pacing: `waiters` threads pinned to `core` wait with
/// the gateways' `wait_until` (`how`: yield or sleep) for planned times that together come
/// `rate` times a second, for 200 ms. Returns how late they were.
pub fn pacing_floor(core: usize, waiters: u64, rate: f64, how: GatewayWait) -> Histogram<u64> {
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
    late
}
