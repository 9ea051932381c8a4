//! How busy the machine was before a run: it is shared, so the sweep waits for quiet and
//! records the reading.

use std::time::{Duration, Instant};

/// Busy (non-idle) share of all cores over `window`, from /proc/stat: how much else was
/// running just before a run, recorded with the run (this machine is shared).
pub fn cpu_busy(window: Duration) -> f64 {
    let sample = || -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let fields: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        let idle = fields.get(3)? + fields.get(4).unwrap_or(&0);
        Some((fields.iter().sum(), idle))
    };
    let (Some((total_a, idle_a)), Some((total_b, idle_b))) = (sample(), {
        std::thread::sleep(window);
        sample()
    }) else {
        return f64::NAN;
    };
    let total = (total_b - total_a).max(1) as f64;
    1.0 - (idle_b - idle_a) as f64 / total
}

/// Waits (up to `patience`) until the machine is nearly idle; returns the last reading.
pub fn wait_for_quiet(patience: Duration) -> f64 {
    let deadline = Instant::now() + patience;
    loop {
        let busy = cpu_busy(Duration::from_millis(100));
        if busy < 0.10 || Instant::now() >= deadline {
            return busy;
        }
    }
}
