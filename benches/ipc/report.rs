//! What the benchmark writes: a record per run (the raw-data contract's fields, by the
//! support crate's records), and the summaries printed at the end of each section.

use support::cores::cores;
use support::hist::Quantiles;
use support::records::{PingPong, System, Throughput, oversubscribed};
use support::state::SpeedProbe;
use support::stats::{Spread, percentile, ratios};
use support::trips::{TRIPS_PER_SAMPLE, Trips};

use crate::setup::{Kind, Setup};
use crate::throughput::Run;

pub fn throughput_record(setup: &Setup, run: &Run, round: usize) -> Throughput {
    Throughput {
        bench: setup.bench,
        system: if setup.kind == Kind::WriteFloor {
            System::WriteFloor
        } else {
            System::Salias
        },
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
        state: run.state,
        messages_per_drain: run.messages_per_drain,
        receive: Some(setup.receive),
        subscriber_pauses: None,
        huge_page_bytes: setup.huge_pages.then_some(2 << 20),
    }
}

/// One way = round trip / 2, per trip and batched.
pub fn pingpong_record(
    system: System,
    round: usize,
    cores: [usize; 2],
    trips: &Trips,
    state: Option<SpeedProbe>,
) -> PingPong {
    PingPong {
        system,
        round,
        cores,
        one_way_ns: Quantiles::of_sorted(&trips.sorted).map(|rtt| rtt / 2),
        batched: trips.batched,
        state,
    }
}

/// A section's table: per setup, the median [min, max] over the rounds of the published
/// and delivered rates, the delivered bytes, the median refused share, the median messages
/// a `drain` found (256 at most: the subscriber stayed behind; a few: it caught up) and the
/// placement; runs with more busy processes than cores are marked.
pub fn print_throughput(title: &str, setups: &[Setup], results: &[Vec<Run>]) {
    let width = setups.iter().map(|setup| setup.label().len()).fold(42, usize::max);
    println!(
        "\n{title:<width$} {:>24} {:>24} {:>8} {:>9} {:>9}  placement (role@core)",
        "published M/s med [min,max]", "delivered M/s med [min,max]", "GB/s", "refused", "per drain"
    );
    for (setup, runs) in setups.iter().zip(results) {
        let (Some(p), Some(d), Some(refused)) = (
            Spread::of_each(runs, |r| r.published_per_s / 1e6),
            Spread::of_each(runs, |r| r.delivered_per_s / 1e6),
            Spread::of_each(runs, |r| r.refused * 100.0),
        ) else {
            continue;
        };
        let counted: Vec<f64> = runs.iter().filter_map(|r| r.messages_per_drain).collect();
        let per_drain = Spread::of(&counted).map_or_else(|| "-".to_owned(), |s| format!("{:.1}", s.median));
        let busy = setup.busy_processes();
        let marker = if oversubscribed(busy) {
            format!("  OVERSUBSCRIBED: {busy} busy processes on {} cores", cores())
        } else {
            String::new()
        };
        println!(
            "{:<width$} {:>8.2} [{:>6.2},{:>6.2}] {:>8.2} [{:>6.2},{:>6.2}] {:>8.2} {:>8.2}% {per_drain:>9}  {}{marker}",
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

/// One latency round, per system.
pub struct LatencyRound {
    pub floor: Trips,
    pub message_floor: Trips,
    pub ring_floor: Trips,
    pub salias: Trips,
}

/// The latency summary: each floor's and salias's median p50 over the rounds, salias's
/// ratio to each floor, and the last round's tail.
/// `bytes` is the size of salias's ping.
pub fn print_latency(cores: [usize; 2], pings: u64, bytes: usize, runs: &[LatencyRound]) {
    let p50s = |of: fn(&LatencyRound) -> &Trips| -> Vec<f64> {
        runs.iter()
            .map(|r| percentile(&of(r).sorted, 0.5).unwrap_or(0) as f64 / 2.0)
            .collect()
    };
    let salias = p50s(|r| &r.salias);
    let Some(s) = Spread::of(&salias) else {
        return;
    };
    println!(
        "\nping-pong between cores {} and {}, one way = round trip / 2, {pings} pings × {} rounds, clock {}:\n  salias {bytes} B p50 {:.0} ns [{:.0}, {:.0}]",
        cores[0],
        cores[1],
        runs.len(),
        support::clock::latency().describe(),
        s.median,
        s.min,
        s.max,
    );
    for (name, floor) in [
        ("cache-line floor", p50s(|r| &r.floor)),
        ("64-byte message floor", p50s(|r| &r.message_floor)),
        ("ring floor (salias's frames)", p50s(|r| &r.ring_floor)),
    ] {
        if let (Some(f), Some(ratio)) = (Spread::of(&floor), Spread::of(&ratios(&salias, &floor))) {
            println!(
                "  {name} p50 {:.1} ns; salias = {:.2}× it (per-round ratios [{:.2}, {:.2}])",
                f.median, ratio.median, ratio.min, ratio.max
            );
        }
    }
    print_batched(runs);
    if let Some(last) = runs.last() {
        println!(
            "  last round, salias one way: {}",
            Quantiles::of_sorted(&last.salias.sorted).map(|rtt| rtt / 2)
        );
    }
}

/// The same medians and ratios from the batched figures, precise below the clock's step.
fn print_batched(runs: &[LatencyRound]) {
    let p50s = |of: fn(&LatencyRound) -> &Trips| -> Option<Vec<f64>> {
        runs.iter().map(|r| of(r).batched.map(|b| b.p50_ns)).collect()
    };
    let (Some(salias), Some(floor), Some(message), Some(ring)) = (
        p50s(|r| &r.salias),
        p50s(|r| &r.floor),
        p50s(|r| &r.message_floor),
        p50s(|r| &r.ring_floor),
    ) else {
        return;
    };
    let (Some(s), Some(to_floor), Some(to_message), Some(to_ring)) = (
        Spread::of(&salias),
        Spread::of(&ratios(&salias, &floor)),
        Spread::of(&ratios(&salias, &message)),
        Spread::of(&ratios(&salias, &ring)),
    ) else {
        return;
    };
    let times = |r: Spread| format!("{:.2}× [{:.2}, {:.2}]", r.median, r.min, r.max);
    println!(
        "  batched ({TRIPS_PER_SAMPLE} trips a sample): salias p50 {:.1} ns [{:.1}, {:.1}] = {} the line floor, {} the message floor, {} the ring floor",
        s.median,
        s.min,
        s.max,
        times(to_floor),
        times(to_message),
        times(to_ring),
    );
}
