//! The speed state a run was measured in (doc/benchmarking.md rule 11). On a virtual
//! machine the host moves the two virtual cores between physical cores while a benchmark
//! runs: the cost of moving one cache line between them then changes several times over
//! from one moment to the next (about 40, 65 or 170 ns one way on the development VM), and
//! every cross-core figure with it. Each run is therefore bracketed by two short cache-line
//! ping-pongs between the cores it uses (the cache-line floor between two threads, going
//! round its 64 slots), taken by the parent just before the run's processes start and just
//! after they end; the report pairs runs of one state only and gives its headlines and
//! goals per state.

use serde::{Deserialize, Serialize};

use crate::floor;
use crate::trips::batched_one_way;

/// Round trips per probe: enough for 31 samples of 16 trips, and about 0.3 ms even in the
/// slowest state seen (about 550 ns a round trip).
const PROBE_TRIPS: u64 = 500;

/// The cache-line one-way latency between a run's two cores just before and just after
/// it, in ns (the median of 16-trip samples, as the floors' batched figures).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedProbe {
    /// Measured before the run's processes were started.
    pub before_ns: f64,
    /// Measured after every process of the run had ended.
    pub after_ns: f64,
}

/// A probe taken before a run, waiting for the run to end: [`Bracket::close`] takes the
/// second.
pub struct Bracket {
    cores: [usize; 2],
    before_ns: Option<f64>,
}

impl Bracket {
    /// Probes the cache-line cost between `cores` (the pinger's, then the ponger's) now.
    pub fn open(cores: [usize; 2]) -> Bracket {
        Bracket {
            cores,
            before_ns: one_way_ns(cores),
        }
    }

    /// Probes again; `None` if either probe could not run (a core that cannot be had).
    pub fn close(self) -> Option<SpeedProbe> {
        let after_ns = one_way_ns(self.cores)?;
        Some(SpeedProbe {
            before_ns: self.before_ns?,
            after_ns,
        })
    }
}

/// Runs `run` between two probes of `cores`.
pub fn bracketed<R>(cores: [usize; 2], run: impl FnOnce() -> R) -> (R, Option<SpeedProbe>) {
    let bracket = Bracket::open(cores);
    let result = run();
    (result, bracket.close())
}

/// The cache-line one-way latency between `a` and `b` now, by two threads of this process;
/// `None` when a core cannot be had or the machine has one core.
pub fn one_way_ns([a, b]: [usize; 2]) -> Option<f64> {
    if a == b {
        return None;
    }
    let trips = floor::between_threads(a, b, PROBE_TRIPS).ok()?;
    batched_one_way(&trips).map(|batched| batched.p50_ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cores::cores;

    #[test]
    fn a_bracket_probes_before_and_after() {
        if cores() < 2 {
            eprintln!("SKIPPED: a probe needs two cores, this machine has one");
            return;
        }
        let bracket = Bracket::open([0, 1]);
        let probe = bracket.close().expect("both cores can be had");
        assert!(probe.before_ns > 0.0 && probe.after_ns > 0.0, "{probe:?}");
    }

    #[test]
    fn one_core_gives_no_probe() {
        assert_eq!(one_way_ns([0, 0]), None);
        assert!(Bracket::open([0, usize::MAX]).close().is_none());
    }
}
