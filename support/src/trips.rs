//! Timing a run of round trips with one clock read per trip, so that consecutive trips
//! share their stamps: the sum of any `k` consecutive trips then carries the error of two
//! stamps, not of `2k`. [`batched_one_way`] uses that to give one-way figures far below
//! the clock's step (10 ns on the development VM, against one-way figures of 40–80 ns),
//! beside the per-trip figures that keep the tails.

use serde::{Deserialize, Serialize};

use crate::clock::{LatencyClock, latency};
use crate::stats::percentile;

/// Consecutive round trips per sample of the batched figures: with a 10 ns step, a
/// one-way figure to 10 / (2 × 16) ≈ 0.3 ns.
pub const TRIPS_PER_SAMPLE: usize = 16;

/// Stamps the end of every round trip; a trip is the time since the previous stamp.
pub struct TripTimer {
    clock: &'static LatencyClock,
    last: u64,
    trips: Vec<u64>,
}

impl TripTimer {
    /// Starts the first trip now, with room for `recorded` trips.
    pub fn start(recorded: u64) -> TripTimer {
        let clock = latency();
        TripTimer {
            clock,
            last: clock.now_ns(),
            trips: Vec::with_capacity(recorded as usize),
        }
    }

    /// Ends a trip and starts the next; the trip is kept if `record` (false in warm-up).
    #[inline(always)]
    pub fn lap(&mut self, record: bool) {
        let now = self.clock.now_ns();
        if record {
            self.trips.push(now - self.last);
        }
        self.last = now;
    }

    /// The recorded round trips in ns, in the order taken.
    pub fn into_trips(self) -> Vec<u64> {
        self.trips
    }
}

/// One-way figures from samples of [`TRIPS_PER_SAMPLE`] consecutive round trips: each
/// sample's mean round trip / 2. A scheduler hiccup lands in one sample; the quantiles
/// describe typical trips, not single ones, so they sit beside the per-trip quantiles
/// rather than replacing them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Batched {
    /// Round trips per sample.
    pub trips_per_sample: usize,
    /// Samples (whole groups of trips; a remainder is left out).
    pub samples: usize,
    /// One way, ns, median over the samples.
    pub p50_ns: f64,
    /// One way, ns, 90th percentile.
    pub p90_ns: f64,
    /// One way, ns, 99th percentile.
    pub p99_ns: f64,
}

/// The batched one-way figures of `trips` (round trips in ns, in the order taken, from a
/// [`TripTimer`]); `None` with fewer than one sample's trips.
pub fn batched_one_way(trips: &[u64]) -> Option<Batched> {
    let mut sums: Vec<u64> = trips.chunks_exact(TRIPS_PER_SAMPLE).map(|c| c.iter().sum()).collect();
    if sums.is_empty() {
        return None;
    }
    sums.sort_unstable();
    let one_way = |q| percentile(&sums, q).unwrap_or(0) as f64 / (2 * TRIPS_PER_SAMPLE) as f64;
    Some(Batched {
        trips_per_sample: TRIPS_PER_SAMPLE,
        samples: sums.len(),
        p50_ns: one_way(0.5),
        p90_ns: one_way(0.9),
        p99_ns: one_way(0.99),
    })
}

/// One run's round trips: sorted, for the per-trip quantiles, and the batched one-way
/// figures, taken while the trips were still in the order taken.
pub struct Trips {
    /// The round trips in ns, ascending.
    pub sorted: Vec<u64>,
    /// Their one-way figures over 16-trip samples; `None` with fewer trips than a sample.
    pub batched: Option<Batched>,
}

impl Trips {
    /// `in_order` as a [`TripTimer`] returns them.
    pub fn of(mut in_order: Vec<u64>) -> Trips {
        let batched = batched_one_way(&in_order);
        in_order.sort_unstable();
        Trips {
            sorted: in_order,
            batched,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_resolve_below_the_step() {
        // Trips of 50 ns stamped by a 10 ns clock alternate 40 and 60 in some pattern;
        // per trip the median says 40 or 60, the batches say 50 (one way 25).
        let trips: Vec<u64> = (0..1600).map(|i| if i % 2 == 0 { 40 } else { 60 }).collect();
        let b = batched_one_way(&trips).unwrap();
        assert_eq!((b.samples, b.trips_per_sample), (100, 16));
        assert_eq!((b.p50_ns, b.p99_ns), (25.0, 25.0));
        assert!(batched_one_way(&trips[..15]).is_none());
    }

    #[test]
    fn a_timer_records_only_what_it_is_told_to() {
        let mut t = TripTimer::start(3);
        for i in 0..5 {
            t.lap(i >= 2);
        }
        assert_eq!(t.into_trips().len(), 3);
    }
}
