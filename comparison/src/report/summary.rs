//! The summary on stdout: per setup or system the median [min, max] over rounds, and the
//! ratios computed round by round (the runs of a round ran back to back).

use support::hist::Quantiles;
use support::records::{System, Wake};
use support::stats::{Spread, ratios};
use support::trips::{Batched, TRIPS_PER_SAMPLE};

use crate::openloop::OpenLoop;
use crate::pingpong::PING_WARMUP;
use crate::plan::Plan;
use crate::platform::latency_cores;
use crate::roles::system_name;
use crate::setup::{Api, wake_label};
use crate::throughput::Run;

/// Per offered load (M msg/s), per open-loop system of the plan, its runs in round order.
pub type OpenLoopLevels = Vec<(f64, Vec<Vec<OpenLoop>>)>;

/// Every run of one invocation, as the parts collected them.
pub struct Results {
    /// Per setup of the plan, its runs in round order.
    pub throughput: Vec<Vec<Run>>,
    /// Per latency system of the plan, its round trips in round order.
    pub latency: Vec<Vec<Quantiles>>,
    /// The same runs' batched one-way figures.
    pub batched: Vec<Vec<Option<Batched>>>,
    pub pingpong_cores: [usize; 2],
    pub openloop: OpenLoopLevels,
    /// Per wake-up system of the plan, its records in round order.
    pub wake: Vec<Vec<Wake>>,
}

/// The spread of `f` over `runs`; all zero for no runs (a part that did not run).
fn spread<T>(runs: &[T], f: impl Fn(&T) -> f64) -> Spread {
    Spread::of_each(runs, f).unwrap_or(Spread {
        median: 0.0,
        min: 0.0,
        max: 0.0,
    })
}

pub fn print(plan: &Plan, results: &Results) {
    if plan.throughput {
        throughput(plan, &results.throughput);
    }
    if plan.latency {
        latency(plan, &results.latency, results.pingpong_cores);
        batched_latency(plan, &results.batched);
    }
    if plan.openloop && !results.openloop.is_empty() {
        openloop(plan, &results.openloop);
    }
    if plan.wake && !results.wake.is_empty() {
        wake(plan, &results.wake);
    }
}

/// Per variant the median [min, max] over rounds of p50, p99 and p99.9, in µs, its p50 over
/// salias futex recv's round by round, and the idle receiver's CPU.
fn wake(plan: &Plan, results: &[Vec<Wake>]) {
    println!(
        "\nwake-up latency, commit to woken receiver, 2-5 ms gaps, {} per run, µs med [min,max]; ×salias: p50 ratio per round",
        plan.wake_plan.messages
    );
    println!(
        "{:<40} {:>22} {:>22} {:>24} {:>20}  idle CPU ms/s utime+stime (run time)",
        "", "p50", "p99", "p99.9", "×salias"
    );
    let at = |runs: &[Wake], q: &str| -> Vec<f64> {
        runs.iter()
            .map(|w| w.wake_ns.get(q).unwrap_or(0) as f64 / 1e3)
            .collect()
    };
    let salias = plan.wake_variants.iter().position(|&(s, _)| s == System::Salias);
    for (variant, runs) in plan.wake_variants.iter().zip(results) {
        let cell = |q| {
            let s = spread(&at(runs, q), |x| *x);
            format!("{:.1} [{:.1},{:.1}]", s.median, s.min, s.max)
        };
        let ratio = salias.map_or("-".into(), |i| {
            let r = spread(&ratios(&at(runs, "p50"), &at(&results[i], "p50")), |x| *x);
            format!("{:.2} [{:.2},{:.2}]", r.median, r.min, r.max)
        });
        let cpu = spread(runs, |w| w.idle_cpu_s_per_s * 1e3).median;
        let runtime = spread(runs, |w| w.idle_runtime_s_per_s * 1e3).median;
        println!(
            "{:<40} {:>22} {:>22} {:>24} {ratio:>20}  {cpu:.1} ({runtime:.3})",
            wake_label(*variant),
            cell("p50"),
            cell("p99"),
            cell("p99.9"),
        );
    }
}

fn throughput(plan: &Plan, results: &[Vec<Run>]) {
    println!(
        "\n{:<46} {:>26} {:>26} {:>9}  placement",
        "throughput, 64-byte messages", "published M/s med [min,max]", "delivered M/s med [min,max]", "refused"
    );
    for (setup, runs) in plan.setups.iter().zip(results) {
        let p = spread(runs, |r| r.published_per_s / 1e6);
        let d = spread(runs, |r| r.delivered_per_s / 1e6);
        let refused = spread(runs, |r| r.refused * 100.0).median;
        println!(
            "{:<46} {:>9.2} [{:>6.2},{:>6.2}] {:>11.2} [{:>6.2},{:>6.2}] {refused:>8.2}%  {}",
            setup.label(),
            p.median,
            p.min,
            p.max,
            d.median,
            d.min,
            d.max,
            runs.first().map_or("", |r| r.placement.as_str())
        );
    }
    let find = |system: System, api: Api, publishers: u32| {
        plan.setups
            .iter()
            .position(|s| s.system == system && s.api == api && s.publishers == publishers)
    };
    let pairs = [
        ((System::Salias, Api::Offer, 1), (System::Aeron, Api::TryClaim, 1)),
        ((System::Salias, Api::Offer, 1), (System::Aeron, Api::Offer, 1)),
        ((System::Salias, Api::Offer, 1), (System::Iceoryx2, Api::LoanUninit, 1)),
        ((System::Salias, Api::Offer, 1), (System::SpscFloor, Api::Batch, 1)),
        ((System::Salias, Api::OfferBatch, 1), (System::SpscFloor, Api::Batch, 1)),
        ((System::Salias, Api::Offer, 1), (System::SpscFloor, Api::FrameBatch, 1)),
        (
            (System::Salias, Api::OfferBatch, 1),
            (System::SpscFloor, Api::FrameBatch, 1),
        ),
        (
            (System::SpscFloor, Api::FrameBatch, 1),
            (System::SpscFloor, Api::Batch, 1),
        ),
        ((System::Salias, Api::OfferBatch, 1), (System::Aeron, Api::TryClaim, 1)),
        ((System::Salias, Api::Offer, 2), (System::Aeron, Api::TryClaim, 2)),
        ((System::Salias, Api::Offer, 2), (System::Iceoryx2, Api::LoanUninit, 2)),
    ];
    // What each larger ring costs salias and the machine itself (the SPSC floor), in the
    // same rounds, where the run had them.
    let find_at = |system: System, ring: u64| {
        plan.setups.iter().position(|s| {
            (s.system, s.publishers, s.param) == (system, 1, ring) && matches!(s.api, Api::Offer | Api::Batch)
        })
    };
    // salias's default ring: the size the other setups run at, left unnamed in the ratios.
    let default_ring = find(System::Salias, Api::Offer, 1).map(|i| plan.setups[i].param);
    let mut ring_pairs = Vec::new();
    if let Some(small) = default_ring {
        let mut larger: Vec<u64> = plan
            .setups
            .iter()
            .filter(|s| s.system == System::SpscFloor && s.param > small)
            .map(|s| s.param)
            .collect();
        larger.dedup();
        for large in larger {
            let pair = |a: Option<usize>, b: Option<usize>| Some((a?, b?));
            ring_pairs.push(pair(find_at(System::Salias, large), find_at(System::Salias, small)));
            ring_pairs.push(pair(
                find_at(System::SpscFloor, large),
                find_at(System::SpscFloor, small),
            ));
            ring_pairs.push(pair(find_at(System::Salias, large), find_at(System::SpscFloor, large)));
        }
    }
    let found: Vec<(usize, usize)> = if plan.headline {
        headline_pairs(plan)
    } else {
        pairs
            .iter()
            .filter_map(|(a, b)| Some((find(a.0, a.1, a.2)?, find(b.0, b.1, b.2)?)))
            .chain(ring_pairs.into_iter().flatten())
            .collect()
    };
    println!("\nratios of delivered rates, median [min,max] of per-round ratios:");
    let delivered = |runs: &[Run]| runs.iter().map(|r| r.delivered_per_s).collect::<Vec<_>>();
    let name = |i: usize| {
        let s = &plan.setups[i];
        let shape = format!("{}P{}S", s.publishers, s.subscribers);
        // Rings other than salias's default are named: the ring-size pairs.
        if plan.headline || s.system != System::Aeron && Some(s.param) != default_ring {
            format!(
                "{} {shape} {} MiB {}",
                system_name(s.system),
                s.param >> 20,
                s.variant()
            )
        } else {
            format!("{} {shape} {}", system_name(s.system), s.variant())
        }
    };
    for (i, j) in found {
        let r = spread(&ratios(&delivered(&results[i]), &delivered(&results[j])), |x| *x);
        println!(
            "  {:<32} / {:<32} {:>6.2}× [{:.2}, {:.2}]",
            name(i),
            name(j),
            r.median,
            r.min,
            r.max
        );
    }
}

/// The headline grid's pairs: each salias setup with the Aeron one of its shape and size.
fn headline_pairs(plan: &Plan) -> Vec<(usize, usize)> {
    let setups = &plan.setups;
    let same = |a: usize, b: usize| {
        let (a, b) = (&setups[a], &setups[b]);
        (a.publishers, a.subscribers, a.param) == (b.publishers, b.subscribers, b.param)
    };
    (0..setups.len())
        .filter(|&i| setups[i].system == System::Salias)
        .filter_map(|i| {
            let j = (0..setups.len()).find(|&j| setups[j].system == System::Aeron && same(i, j))?;
            Some((i, j))
        })
        .collect()
}

/// p50 … max of a round trip, halved: the one-way figure, in ns.
fn one_way(q: &Quantiles, name: &str) -> f64 {
    q.get(name).unwrap_or(0) as f64 / 2.0
}

fn latency(plan: &Plan, latency: &[Vec<Quantiles>], cores: [usize; 2]) {
    let (pings, rounds) = (plan.pings, plan.rounds);
    println!(
        "\nping-pong one way (round trip / 2) between cores {} and {}, {pings} pings + {PING_WARMUP} warm-up × {rounds} rounds; ns, median over rounds [min,max] of p50; medians of the other percentiles:",
        cores[0], cores[1]
    );
    println!(
        "{:<13} {:>20} {:>8} {:>8} {:>8} {:>9} {:>9}",
        "system", "p50 [min,max]", "p90", "p99", "p99.9", "p99.99", "max"
    );
    for (&system, runs) in plan.latency_systems.iter().zip(latency) {
        let q = |name: &str| spread(runs, |p| one_way(p, name));
        let p50 = q("p50");
        println!(
            "{:<13} {:>20} {:>8.0} {:>8.0} {:>8.0} {:>9.0} {:>9.0}",
            system_name(system),
            format!("{:.0} [{:.0},{:.0}]", p50.median, p50.min, p50.max),
            q("p90").median,
            q("p99").median,
            q("p99.9").median,
            q("p99.99").median,
            q("max").median
        );
    }
    let at = |s: System| plan.latency_systems.iter().position(|x| *x == s);
    let p50s = |i: usize| latency[i].iter().map(|p| one_way(p, "p50")).collect::<Vec<_>>();
    if let Some(si) = at(System::Salias) {
        for other in [System::Aeron, System::Iceoryx2, System::Floor, System::MessageFloor] {
            if let Some(oi) = at(other) {
                let r = spread(&ratios(&p50s(si), &p50s(oi)), |x| *x);
                println!(
                    "  p50 latency salias / {:<13} {:>5.2}× [{:.2}, {:.2}]  (medians {:.0} / {:.0} ns)",
                    system_name(other),
                    r.median,
                    r.min,
                    r.max,
                    spread(&p50s(si), |x| *x).median,
                    spread(&p50s(oi), |x| *x).median
                );
            }
        }
    }
}

/// The salias ratios again from the batched figures, precise below the clock's step.
fn batched_latency(plan: &Plan, batched: &[Vec<Option<Batched>>]) {
    let at = |s: System| plan.latency_systems.iter().position(|x| *x == s);
    let p50s = |i: usize| -> Option<Vec<f64>> { batched[i].iter().map(|b| b.map(|b| b.p50_ns)).collect() };
    let Some(salias) = at(System::Salias).and_then(p50s) else {
        return;
    };
    println!("  batched ({TRIPS_PER_SAMPLE} round trips a sample, one way):");
    for other in [System::Aeron, System::Iceoryx2, System::Floor, System::MessageFloor] {
        if let Some(theirs) = at(other).and_then(p50s) {
            let r = spread(&ratios(&salias, &theirs), |x| *x);
            println!(
                "  p50 latency salias / {:<13} {:>5.2}× [{:.2}, {:.2}]  (medians {:.1} / {:.1} ns)",
                system_name(other),
                r.median,
                r.min,
                r.max,
                spread(&salias, |x| *x).median,
                spread(&theirs, |x| *x).median
            );
        }
    }
}

fn openloop(plan: &Plan, openloop: &OpenLoopLevels) {
    let [a, b] = latency_cores();
    let scheduler = plan.realtime.map_or("the ordinary scheduler".to_owned(), |r| {
        format!("{} priority {}", r.policy.name(), r.priority)
    });
    println!(
        "\nopen loop, 1P1S, publisher on core {a}, subscriber on core {b}, under {scheduler}, {} s per level + {} s warm-up × {} rounds;\nns, medians over rounds of each percentile (total = queueing + service):",
        plan.ol_duration, plan.ol_warmup, plan.rounds
    );
    println!(
        "{:>7} {:<9} {:>8} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>8} {:>6}",
        "M/s", "system", "sent M/s", "total p50", "p99", "p99.9", "max", "queue p50", "serv p50", "refused", "sat"
    );
    for (load, runs) in openloop {
        for ((system, _), runs) in plan.openloop_systems.iter().zip(runs) {
            if runs.is_empty() {
                continue;
            }
            let total = |name: &str| spread(runs, |r| r.total.get(name).unwrap_or(0) as f64).median;
            let saturated = runs.iter().filter(|r| r.saturated()).count();
            println!(
                "{load:>7} {:<9} {:>8.2} {:>9.0} {:>9.0} {:>10.0} {:>10.0} {:>9.0} {:>9.0} {:>7.2}% {saturated:>4}/{}",
                system_name(*system),
                spread(runs, |r| r.achieved_per_s / 1e6).median,
                total("p50"),
                total("p99"),
                total("p99.9"),
                total("max"),
                spread(runs, |r| r.queueing.p50() as f64).median,
                spread(runs, |r| r.service.p50() as f64).median,
                spread(runs, |r| r.refused * 100.0).median,
                runs.len()
            );
        }
    }
}
