//! What the benchmark writes: a record per run, and the table at the end: per row the
//! median over rounds of p50, p99 and p99.9 with min and max, the ratio of its p50 to the
//! kernel's futex wake in the same rounds, the quantiles of every round's samples pooled,
//! and the idle CPU.

use support::cores::Placement;
use support::hist::Quantiles;
use support::records::{System, Wake};
use support::stats::{Spread, ratios};
use support::wake::GAP_US;

use crate::rows::Row;
use crate::run::{CORES, Run};

pub fn placement() -> String {
    let mut placement = Placement::new();
    placement.note(support::cores::Side::Publisher, 0, CORES[0]);
    placement.note(support::cores::Side::Subscriber, 0, CORES[1]);
    placement.to_string()
}

pub fn record(row: Row, round: usize, run: &Run) -> Wake {
    let mut sorted = run.report.wake_ns.clone();
    sorted.sort_unstable();
    Wake {
        system: System::Salias,
        round,
        label: row.label().into(),
        mechanism: row.mechanism(),
        prototype: row.prototype(),
        placement: placement(),
        gap_ns: GAP_US.map(|us| us * 1_000),
        wake_ns: Quantiles::of_sorted(&sorted),
        not_slept: run.report.not_slept,
        publisher_wakes: run.publisher_wakes,
        idle_s: run.idle.idle_s,
        idle_cpu_s_per_s: run.idle.cpu_s_per_s,
        idle_tick_s: run.idle.tick_s,
        idle_runtime_s_per_s: run.idle.runtime_s_per_s,
    }
}

fn us(ns: f64) -> f64 {
    ns / 1e3
}

/// `results[row][round]`, `pooled[row]`: every round's samples of the row, sorted. The
/// ratio's reference is `Row::RecvPark`.
pub fn print(rows: &[Row], results: &[Vec<Wake>], pooled: &[Vec<u64>]) {
    println!(
        "\nwake-up latency, commit to woken receiver, µs: median [min,max] over {} rounds; ×park: p50 over futex-park p50, per round",
        results.first().map_or(0, Vec::len)
    );
    println!(
        "{:<36} {:>20} {:>20} {:>22} {:>18}  {:>30}  idle CPU ms/s: utime+stime (run time)",
        "row", "p50", "p99", "p99.9", "×park", "all rounds p50/p99/p99.9 (n)"
    );
    let reference = rows.iter().position(|r| *r == Row::RecvPark);
    let at =
        |runs: &[Wake], q: &str| -> Vec<f64> { runs.iter().map(|w| w.wake_ns.get(q).unwrap_or(0) as f64).collect() };
    for ((row, runs), all) in rows.iter().zip(results).zip(pooled) {
        let spread =
            |q| Spread::of(&at(runs, q)).map(|s| format!("{:.1} [{:.1},{:.1}]", us(s.median), us(s.min), us(s.max)));
        let (Some(p50), Some(p99), Some(p999)) = (spread("p50"), spread("p99"), spread("p99.9")) else {
            continue;
        };
        let ratio = reference
            .and_then(|i| Spread::of(&ratios(&at(runs, "p50"), &at(&results[i], "p50"))))
            .map_or("-".into(), |r| format!("{:.2} [{:.2},{:.2}]", r.median, r.min, r.max));
        let q = Quantiles::of_sorted(all);
        let pooled = format!(
            "{:.1}/{:.1}/{:.1} ({})",
            us(q.p50() as f64),
            us(q.get("p99").unwrap_or(0) as f64),
            us(q.get("p99.9").unwrap_or(0) as f64),
            q.count
        );
        let cpu = Spread::of_each(runs, |w| w.idle_cpu_s_per_s * 1e3).map_or(0.0, |s| s.median);
        let runtime = Spread::of_each(runs, |w| w.idle_runtime_s_per_s * 1e3).map_or(0.0, |s| s.median);
        println!(
            "{:<36} {p50:>20} {p99:>20} {p999:>22} {ratio:>18}  {pooled:>30}  {cpu:.1} ({runtime:.3})",
            row.label()
        );
    }
}
