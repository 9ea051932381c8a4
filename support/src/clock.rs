//! The clocks of every measurement. [`now_ns`] is `CLOCK_MONOTONIC`, shared by every
//! process on the machine (doc/benchmarking.md rule 6): throughput runs, deadlines. Latency
//! figures (ping-pong, the floors, the open loop) take [`latency`]: the CPU's counter
//! ([`crate::tsc`]) calibrated against `CLOCK_MONOTONIC` at run time, whose step is a
//! fraction of a nanosecond, or `CLOCK_MONOTONIC` itself when the counter is refused —
//! a fallback the clock's record names with its reason, never a silent one.
//!
//! A parent harness calibrates once; every child it starts through [`crate::role::Role`]
//! inherits that calibration (in [`CLOCK_VAR`]), so the stamps of all its processes are
//! on one timeline and converted alike.

use std::sync::OnceLock;

use rustix::time::{ClockId, Timespec, clock_getres, clock_gettime};
use serde::{Deserialize, Serialize};

use crate::cores::cores;
use crate::tsc::{self, Calibration, Refusal, SyncCheck};

/// `CLOCK_MONOTONIC` now, in nanoseconds.
#[inline(always)]
pub fn now_ns() -> u64 {
    nanoseconds(clock_gettime(ClockId::Monotonic))
}

/// The resolution of `CLOCK_MONOTONIC` as the kernel reports it (`clock_getres`), in
/// nanoseconds: the finest step a stamp can show, recorded with the raw data.
pub fn resolution_ns() -> u64 {
    nanoseconds(clock_getres(ClockId::Monotonic))
}

#[inline(always)]
fn nanoseconds(t: Timespec) -> u64 {
    // A monotonic clock is never negative.
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The variable in which a parent hands its [`LatencyClock`] to its children (JSON).
pub const CLOCK_VAR: &str = "SALIAS_LATENCY_CLOCK";

/// How long each of the calibration's two windows is, in ns.
const WINDOW_NS: u64 = 20_000_000;

/// Round trips of each cross-core check.
const SYNC_ROUND_TRIPS: u64 = 2_000;

/// Consecutive reads that measure a clock's smallest step.
const STEP_READS: usize = 100_000;

/// The clock of the latency figures, and everything the raw data record of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyClock {
    /// `tsc` (the counter, whatever the architecture calls it) or `CLOCK_MONOTONIC`.
    pub source: String,
    /// The instruction that reads the counter; none for `CLOCK_MONOTONIC`.
    pub counter: Option<String>,
    /// The counter's calibration, when it is the clock.
    pub calibration: Option<Calibration>,
    /// Nanoseconds per counter tick, when it is the clock.
    pub ns_per_tick: Option<f64>,
    /// The smallest non-zero difference of two consecutive readings of this clock, ns.
    pub smallest_step_ns: f64,
    /// `CLOCK_MONOTONIC`'s `clock_getres`, ns: the clock of older records.
    pub monotonic_resolution_ns: u64,
    /// `CLOCK_MONOTONIC`'s smallest non-zero difference of two consecutive readings, ns.
    pub monotonic_step_ns: u64,
    /// Why the counter was refused, when `source` is `CLOCK_MONOTONIC`.
    pub refused: Option<String>,
    /// The checks that core 0's counter agrees with every other core's.
    pub sync: Vec<SyncCheck>,
}

impl LatencyClock {
    /// This machine's: the counter if it is invariant, steady and agrees across cores,
    /// else `CLOCK_MONOTONIC` with the reason. Takes about 60 ms and two threads per
    /// other core; the caller's own affinity is not touched.
    pub fn detect() -> LatencyClock {
        let monotonic_step_ns = tsc::smallest_step(now_ns, STEP_READS);
        let monotonic = |refusal: Refusal, sync: Vec<SyncCheck>| LatencyClock {
            source: "CLOCK_MONOTONIC".into(),
            counter: None,
            calibration: None,
            ns_per_tick: None,
            smallest_step_ns: monotonic_step_ns as f64,
            monotonic_resolution_ns: resolution_ns(),
            monotonic_step_ns,
            refused: Some(refusal.to_string()),
            sync,
        };
        let calibration = match counter_calibration() {
            Ok(c) => c,
            Err(refusal) => return monotonic(refusal, Vec::new()),
        };
        let mut sync = Vec::new();
        for core in 1..cores() {
            match tsc::sync_check(0, core, SYNC_ROUND_TRIPS, calibration.ns_per_tick()) {
                Ok(check) if check.agrees() => sync.push(check),
                Ok(check) => {
                    sync.push(check);
                    return monotonic(Refusal::Unsynchronised(check), sync);
                }
                Err(e) => return monotonic(Refusal::Pin(e.to_string()), sync),
            }
        }
        let ticks_step = tsc::smallest_step(tsc::ticks, STEP_READS);
        LatencyClock {
            source: "tsc".into(),
            counter: tsc::COUNTER.map(str::to_owned),
            calibration: Some(calibration),
            ns_per_tick: Some(calibration.ns_per_tick()),
            smallest_step_ns: ticks_step as f64 * calibration.ns_per_tick(),
            monotonic_resolution_ns: resolution_ns(),
            monotonic_step_ns,
            refused: None,
            sync,
        }
    }

    /// Now, in ns on this clock's timeline (the counter's since its calibration, or
    /// `CLOCK_MONOTONIC`'s): only differences of two readings mean anything.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        match &self.calibration {
            Some(c) => c.ns(tsc::ticks()),
            None => now_ns(),
        }
    }

    /// `tsc at 2.995 GHz (0.334 ns a tick, smallest step 10.4 ns)`, or
    /// `CLOCK_MONOTONIC (step 21 ns; the TSC was refused: …)`: for a harness's first lines.
    pub fn describe(&self) -> String {
        match (&self.calibration, &self.refused) {
            (Some(c), _) => format!(
                "{} at {:.4} GHz ({:.3} ns a tick, smallest step {:.1} ns; {} cross-core check(s) agree)",
                self.source,
                c.ticks_per_s / 1e9,
                c.ns_per_tick(),
                self.smallest_step_ns,
                self.sync.len()
            ),
            (None, reason) => format!(
                "{} (smallest step {} ns; the counter was refused: {})",
                self.source,
                self.monotonic_step_ns,
                reason.as_deref().unwrap_or("not asked for")
            ),
        }
    }
}

/// The counter calibrated, if it is invariant here.
fn counter_calibration() -> Result<Calibration, Refusal> {
    if tsc::COUNTER.is_none() {
        return Err(Refusal::NoCounter);
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo");
    match (cfg!(target_arch = "aarch64"), cpuinfo) {
        (true, _) => {}
        (false, Ok(text)) => tsc::invariance(&text)?,
        (false, Err(e)) => return Err(Refusal::CpuInfo(e.to_string())),
    }
    tsc::calibrate(tsc::ticks, now_ns, WINDOW_NS)
}

static LATENCY: OnceLock<LatencyClock> = OnceLock::new();

/// The latency clock of this process: the one its parent handed down in [`CLOCK_VAR`],
/// else [`LatencyClock::detect`]ed, once.
///
/// # Panics
/// If [`CLOCK_VAR`] is set but is not a clock this crate wrote: it is set only by a
/// parent harness for its children.
pub fn latency() -> &'static LatencyClock {
    LATENCY.get_or_init(|| match std::env::var(CLOCK_VAR) {
        Ok(json) => serde_json::from_str(&json).unwrap_or_else(|e| {
            panic!("{CLOCK_VAR} holds {json:?}, not a latency clock from a parent harness ({e}); unset it")
        }),
        Err(_) => LatencyClock::detect(),
    })
}

/// The latency clock as a child should inherit it, once this process has one.
pub fn latency_for_children() -> Option<String> {
    LATENCY
        .get()
        .map(|c| serde_json::to_string(c).expect("a latency clock serialises"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_does_not_go_back() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
        let clock = latency();
        let (c, d) = (clock.now_ns(), clock.now_ns());
        assert!(d >= c, "{}", clock.describe());
    }

    #[test]
    fn the_resolution_is_at_least_one_nanosecond() {
        assert!(resolution_ns() >= 1);
    }

    #[test]
    fn the_latency_clock_names_its_source_and_step_or_why_not() {
        let clock = latency();
        assert!(clock.monotonic_resolution_ns >= 1);
        match &clock.calibration {
            Some(c) => {
                assert_eq!(clock.source, "tsc");
                assert!(c.ticks_per_s > 1e6, "{}", clock.describe());
                assert!(clock.refused.is_none());
                assert_eq!(clock.sync.len(), cores() - 1);
            }
            None => {
                assert_eq!(clock.source, "CLOCK_MONOTONIC");
                assert!(clock.refused.is_some(), "a fallback says why");
                assert!(clock.describe().contains("refused"));
            }
        }
        // A child gets the same calibration (serde_json may round other floats by an ulp).
        let json = latency_for_children().unwrap();
        let inherited: LatencyClock = serde_json::from_str(&json).unwrap();
        assert_eq!((&inherited.source, &inherited.refused), (&clock.source, &clock.refused));
        if let (Some(a), Some(b)) = (inherited.calibration, clock.calibration) {
            assert_eq!(a.base_ticks, b.base_ticks);
            assert!((a.ticks_per_s - b.ticks_per_s).abs() <= b.ticks_per_s * 1e-15);
        }
    }
}
