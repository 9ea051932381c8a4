//! The sweep's raw data, one JSON line a record (`results/pipeline-<time>.jsonl`, read by
//! `scripts/report.py`): the machine and command first, the floors, one line per verified
//! run, and the end.

use serde::Serialize;
use support::hist::Quantiles;

use crate::params::GatewayWait;

/// One line of the raw data; `type` says which.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(
    clippy::large_enum_variant,
    reason = "a record is built, written and dropped, one at a time"
)]
pub enum Record<'a> {
    Machine {
        cpu: &'a str,
        nproc: usize,
        kernel: &'a str,
        loadavg_before: String,
        command: &'a str,
        placement: String,
        gateways: u32,
        subscribers: u32,
        duration_ms: u64,
        warmup_ms: u64,
        rounds: usize,
        quiet_wait_s: u64,
        seed: u64,
        realtime: Option<u32>,
    },
    /// The cache-line floor between two cores, one way.
    Floor {
        when: &'a str,
        cores: [usize; 2],
        one_way_ns: Quantiles,
    },
    /// How late `threads` waiters on `core` wake for planned times.
    PacingFloor {
        core: usize,
        threads: u64,
        wait: GatewayWait,
        rate_per_s: f64,
        late_ns: Quantiles,
    },
    Run {
        system: &'a str,
        round: usize,
        /// Share of all cores busy just before the run, to 3 decimals.
        cpu_busy_before: f64,
        offered_per_s: f64,
        /// Whole requests per second.
        achieved_per_s: f64,
        requests: u64,
        events: u64,
        refused_gateway: u64,
        refused_engine: u64,
        /// Only verified runs are written.
        verified: bool,
        input_hash: String,
        output_hash: String,
        queueing_ns: Quantiles,
        service_ns: Quantiles,
        total_ns: Quantiles,
        engine_ns: Quantiles,
        inbound_ns: Quantiles,
    },
    End {
        loadavg_after: String,
        /// The sweep's length, to a tenth of a second.
        seconds: f64,
        failed: bool,
    },
}

/// `x` to `digits` decimals, as the records have always written it.
pub fn rounded(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// The load average line, as /proc/loadavg has it ("" where there is none).
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_owned()
}
