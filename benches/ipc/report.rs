//! What the benchmark writes: a record per run (the raw-data contract's fields, by the
//! support crate's records), and the summaries printed at the end of each section.

use support::cores::cores;
use support::hist::Quantiles;
use support::records::{PingPong, System, Throughput, oversubscribed};
use support::stats::{Spread, percentile, ratios};

use crate::setup::Setup;
use crate::throughput::Run;

pub fn throughput_record(setup: &Setup, run: &Run, round: usize) -> Throughput {
    Throughput {
        bench: setup.bench,
        system: System::Salias,
        round,
        label: setup.label(),
        kind: Some(setup.kind.name().into()),
        publishers: setup.publishers,
        subscribers: setup.subscribers,
        ring_bytes: Some(setup.ring as u64),
        buffer_messages: None,
        api: setup.api(),
        batch: setup.batch as u32,
        message_bytes: setup.size as u64,
        messages_per_publisher: setup.messages,
        published_per_s: run.published_per_s.round(),
        delivered_per_s: run.delivered_per_s.round(),
        delivered_bytes_per_s: Some((run.delivered_per_s * setup.size as f64).round()),
        refused_fraction: run.refused,
        placement: run.placement.to_string(),
        busy_processes: setup.busy_processes(),
        oversubscribed: oversubscribed(setup.busy_processes()),
    }
}

/// One way = round trip / 2, from the round trips sorted.
pub fn pingpong_record(system: System, round: usize, cores: [usize; 2], sorted_round_trips: &[u64]) -> PingPong {
    PingPong {
        system,
        round,
        cores,
        one_way_ns: Quantiles::of_sorted(sorted_round_trips).map(|rtt| rtt / 2),
    }
}

/// A section's table: per setup, the median [min, max] over the rounds of the published
/// and delivered rates, the delivered bytes, the median refused share and the placement;
/// runs with more busy processes than cores are marked.
pub fn print_throughput(title: &str, setups: &[Setup], results: &[Vec<Run>]) {
    println!(
        "\n{title:<42} {:>24} {:>24} {:>8} {:>9}  placement (role@core)",
        "published M/s med [min,max]", "delivered M/s med [min,max]", "GB/s", "refused"
    );
    for (setup, runs) in setups.iter().zip(results) {
        let (Some(p), Some(d), Some(refused)) = (
            Spread::of_each(runs, |r| r.published_per_s / 1e6),
            Spread::of_each(runs, |r| r.delivered_per_s / 1e6),
            Spread::of_each(runs, |r| r.refused * 100.0),
        ) else {
            continue;
        };
        let busy = setup.busy_processes();
        let marker = if oversubscribed(busy) {
            format!("  OVERSUBSCRIBED: {busy} busy processes on {} cores", cores())
        } else {
            String::new()
        };
        println!(
            "{:<42} {:>8.2} [{:>6.2},{:>6.2}] {:>8.2} [{:>6.2},{:>6.2}] {:>8.2} {:>8.2}%  {}{marker}",
            setup.label(),
            p.median,
            p.min,
            p.max,
            d.median,
            d.min,
            d.max,
            d.median * setup.size as f64 / 1e3,
            refused.median,
            runs[0].placement,
        );
    }
}

/// The latency summary: the floor's and salias's median p50 over the rounds, their
/// ratio, and the last round's tail.
pub fn print_latency(cores: [usize; 2], pings: u64, runs: &[(Vec<u64>, Vec<u64>)]) {
    let p50 = |sorted: &Vec<u64>| percentile(sorted, 0.5).unwrap_or(0) as f64 / 2.0;
    let floor: Vec<f64> = runs.iter().map(|(f, _)| p50(f)).collect();
    let salias: Vec<f64> = runs.iter().map(|(_, s)| p50(s)).collect();
    let (Some(f), Some(s), Some(ratio)) = (
        Spread::of(&floor),
        Spread::of(&salias),
        Spread::of(&ratios(&salias, &floor)),
    ) else {
        return;
    };
    println!(
        "\nping-pong between cores {} and {}, one way = round trip / 2, {pings} pings × {} rounds:\n  cache-line floor p50 {:.0} ns; salias 64 B p50 {:.0} ns [{:.0}, {:.0}] = {:.2}× the floor (per-round ratios [{:.2}, {:.2}])",
        cores[0],
        cores[1],
        runs.len(),
        f.median,
        s.median,
        s.min,
        s.max,
        ratio.median,
        ratio.min,
        ratio.max
    );
    if let Some((_, last)) = runs.last() {
        println!(
            "  last round, salias one way: {}",
            Quantiles::of_sorted(last).map(|rtt| rtt / 2)
        );
    }
}
