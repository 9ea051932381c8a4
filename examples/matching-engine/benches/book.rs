//! The book alone, one thread: what each operation costs with no channel in front of it.
//!
//! Run: `cargo bench -p matching-engine --bench book` (21 rounds), or add `-- --quick`
//! (5 rounds); a further argument keeps only the scenarios whose names contain it.
//!
//! Every scenario builds its state (engine, resting orders, requests) outside the timed
//! region, times only the requests, and asserts the outcome (trade count, resting count,
//! events) after every repetition, so no repetition runs against a book the previous one
//! emptied. Scenarios are alternated round by round and reported as median, min and max
//! nanoseconds per request over the rounds. Raw samples go to
//! `target/bench-results/book-<unix ms>-<pid>.jsonl` with the machine and the command.

use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

use matching_engine::{
    Engine, EngineConfig, Event, EventSink, FlowConfig, FlowMix, NewOrder, OrderFlow, OrderId, OrderMsg, OrderType,
    Price, SelfTradePrevention, Side, SplitMix64, SymbolConfig,
};

/// The figure the C++ original reported for its book (about 7.1 M orders/s). Its authors
/// withdrew their figures, and it was another machine, so the ratio is a landmark only.
const ANCHOR_NS_PER_ORDER: f64 = 140.0;

/// Counts what the engine reported; cheap enough not to dominate the measurement.
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
struct Counts {
    events: u64,
    trades: u64,
    traded_qty: u64,
    rejects: u64,
    cancels: u64,
    modifies_in_place: u64,
    modifies_moved: u64,
}

impl EventSink for Counts {
    fn emit(&mut self, event: Event) {
        self.events += 1;
        match event {
            Event::Trade { qty, .. } => {
                self.trades += 1;
                self.traded_qty += qty;
            }
            Event::Rejected { .. } => self.rejects += 1,
            Event::Cancelled { .. } => self.cancels += 1,
            Event::Modified {
                priority_kept: true, ..
            } => self.modifies_in_place += 1,
            Event::Modified {
                priority_kept: false, ..
            } => self.modifies_moved += 1,
            _ => {}
        }
    }
}

const MID: Price = 100_000;

fn engine(band_ticks: i64, pool: u32) -> Engine {
    Engine::new(&EngineConfig {
        symbols: vec![SymbolConfig {
            min_price: MID - band_ticks / 2,
            max_price: MID + band_ticks / 2,
        }],
        max_resting_orders: pool,
        self_trade_prevention: SelfTradePrevention::CancelResting,
    })
    .unwrap()
}

fn limit(id: OrderId, side: Side, price: Price, qty: u64) -> NewOrder {
    NewOrder {
        id,
        symbol: 0,
        side,
        order_type: OrderType::Limit,
        price,
        qty,
        owner: id % 64,
    }
}

/// `count` non-crossing orders: bids below the mid, asks above, spread over 200 levels a
/// side, sizes 2..=11.
fn passive_orders(count: u64, seed: u64) -> Vec<NewOrder> {
    let mut rng = SplitMix64::new(seed);
    (1..=count)
        .map(|id| {
            let side = if id % 2 == 0 { Side::Buy } else { Side::Sell };
            let away = 1 + rng.below(200) as Price;
            let price = if side == Side::Buy { MID - away } else { MID + away };
            limit(id, side, price, 2 + rng.below(10))
        })
        .collect()
}

fn rest_all(engine: &mut Engine, orders: &[NewOrder]) {
    let mut counts = Counts::default();
    for order in orders {
        engine.add(*order, &mut counts).unwrap();
    }
    assert_eq!(counts.trades, 0);
}

fn shuffled_ids(count: u64, seed: u64) -> Vec<OrderId> {
    let mut ids: Vec<OrderId> = (1..=count).collect();
    let mut rng = SplitMix64::new(seed);
    for i in (1..ids.len()).rev() {
        ids.swap(i, rng.below(i as u64 + 1) as usize);
    }
    ids
}

/// A scenario: `run` builds fresh state, times its requests, checks the outcome, and
/// returns nanoseconds per request.
struct Scenario {
    name: String,
    requests: usize,
    run: Box<dyn FnMut() -> f64>,
    samples: Vec<f64>,
}

fn time_requests<S>(requests: usize, state: &mut S, mut work: impl FnMut(&mut S)) -> f64 {
    let start = Instant::now();
    work(state);
    start.elapsed().as_nanos() as f64 / requests as f64
}

fn add_no_match() -> Scenario {
    const N: u64 = 10_000;
    let orders = passive_orders(N, 1);
    Scenario {
        name: "add, no match (10k orders onto an empty book)".into(),
        requests: N as usize,
        samples: Vec::new(),
        run: Box::new(move || {
            let mut state = (engine(4096, 1 << 15), Counts::default());
            let ns = time_requests(orders.len(), &mut state, |(engine, counts)| {
                for order in &orders {
                    let _ = engine.add(black_box(*order), counts);
                }
            });
            let (engine, counts) = state;
            assert_eq!(
                (engine.resting_orders(), counts.trades, counts.rejects),
                (N as u32, 0, 0)
            );
            ns
        }),
    }
}

fn add_crossing(levels: u64) -> Scenario {
    const SWEEPS: u64 = 1_000;
    Scenario {
        name: format!("add crossing {levels} level(s), 1 order each"),
        requests: SWEEPS as usize,
        samples: Vec::new(),
        run: Box::new(move || {
            let band = (SWEEPS * levels * 2 + 16) as i64;
            let mut book = engine(band, (SWEEPS * levels) as u32 + 16);
            // Asks on consecutive ticks above the mid; sweep i takes exactly levels
            // [i * levels, (i + 1) * levels).
            let asks: Vec<NewOrder> = (0..SWEEPS * levels)
                .map(|i| limit(i + 1, Side::Sell, MID + 1 + i as Price, 10))
                .collect();
            rest_all(&mut book, &asks);
            let sweeps: Vec<NewOrder> = (0..SWEEPS)
                .map(|i| NewOrder {
                    owner: 1_000_000,
                    ..limit(
                        10_000_000 + i,
                        Side::Buy,
                        MID + ((i + 1) * levels) as Price,
                        10 * levels,
                    )
                })
                .collect();
            let mut state = (book, Counts::default());
            let ns = time_requests(sweeps.len(), &mut state, |(engine, counts)| {
                for order in &sweeps {
                    let _ = engine.add(black_box(*order), counts);
                }
            });
            let (engine, counts) = state;
            assert_eq!(counts.trades, SWEEPS * levels);
            assert_eq!(counts.traded_qty, SWEEPS * levels * 10);
            assert_eq!(engine.resting_orders(), 0);
            ns
        }),
    }
}

fn cancel() -> Scenario {
    const N: u64 = 10_000;
    let orders = passive_orders(N, 2);
    let ids = shuffled_ids(N, 3);
    Scenario {
        name: "cancel (10k resting, random order)".into(),
        requests: N as usize,
        samples: Vec::new(),
        run: Box::new(move || {
            let mut book = engine(4096, 1 << 15);
            rest_all(&mut book, &orders);
            let mut state = (book, Counts::default());
            let ns = time_requests(ids.len(), &mut state, |(engine, counts)| {
                for id in &ids {
                    let _ = engine.cancel(black_box(*id), counts);
                }
            });
            let (engine, counts) = state;
            assert_eq!((counts.cancels, counts.rejects, engine.resting_orders()), (N, 0, 0));
            ns
        }),
    }
}

fn modify(move_price: bool) -> Scenario {
    const N: u64 = 10_000;
    let orders = passive_orders(N, 4);
    let ids = shuffled_ids(N, 5);
    let by_id = orders.clone();
    let requests: Vec<(OrderId, Price, u64)> = ids
        .iter()
        .map(|&id| {
            let order = by_id[id as usize - 1];
            if move_price {
                // One tick away from the mid: a new level, never crossing.
                let price = if order.side == Side::Buy {
                    order.price - 1
                } else {
                    order.price + 1
                };
                (id, price, order.qty)
            } else {
                (id, order.price, order.qty - 1)
            }
        })
        .collect();
    Scenario {
        name: if move_price {
            "modify, new price (loses priority)".into()
        } else {
            "modify, smaller qty (keeps priority)".into()
        },
        requests: N as usize,
        samples: Vec::new(),
        run: Box::new(move || {
            let mut book = engine(4096, 1 << 15);
            rest_all(&mut book, &orders);
            let mut state = (book, Counts::default());
            let ns = time_requests(requests.len(), &mut state, |(engine, counts)| {
                for &(id, price, qty) in &requests {
                    let _ = engine.modify(black_box(id), price, qty, counts);
                }
            });
            let (engine, counts) = state;
            let expected = if move_price { (0, N) } else { (N, 0) };
            assert_eq!((counts.modifies_in_place, counts.modifies_moved), expected);
            assert_eq!(
                (counts.trades, counts.rejects, engine.resting_orders()),
                (0, 0, N as u32)
            );
            ns
        }),
    }
}

/// Generated flow: `warm_up` requests build a realistic book outside the timer, then
/// `timed` requests are measured. The trade count must be the same every repetition.
fn generated(name: &str, mix: FlowMix, warm_up: usize, timed: usize) -> Scenario {
    let band = SymbolConfig {
        min_price: MID - 2_000,
        max_price: MID + 2_000,
    };
    let mut config = FlowConfig::new(0xBE7C4, vec![band]);
    config.mix = mix;
    let requests: Vec<OrderMsg> = OrderFlow::new(&config).take(warm_up + timed).collect();
    let mut expected: Option<Counts> = None;
    Scenario {
        name: name.into(),
        requests: timed,
        samples: Vec::new(),
        run: Box::new(move || {
            let mut book = Engine::new(&EngineConfig {
                symbols: vec![band],
                max_resting_orders: 1 << 18,
                self_trade_prevention: SelfTradePrevention::CancelResting,
            })
            .unwrap();
            let (warm, measured) = requests.split_at(warm_up);
            for request in warm {
                let _ = book.apply(request, &mut Counts::default());
            }
            let mut state = (book, Counts::default());
            let ns = time_requests(measured.len(), &mut state, |(engine, counts)| {
                for request in measured {
                    let _ = engine.apply(black_box(request), counts);
                }
            });
            let counts = state.1;
            assert!(
                counts.trades > 0,
                "a generated workload that never trades measures nothing"
            );
            assert_eq!(
                *expected.get_or_insert(counts),
                counts,
                "the same requests must give the same events"
            );
            ns
        }),
    }
}

fn stats(samples: &[f64]) -> (f64, f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    (sorted[sorted.len() / 2], sorted[0], sorted[sorted.len() - 1])
}

fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split(':').nth(1))
                .map(|name| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let online = std::fs::read_to_string("/proc/cpuinfo").map_or(0, |info| {
        info.lines().filter(|line| line.starts_with("processor")).count()
    });
    let allowed = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("Cpus_allowed_list"))
                .and_then(|line| line.split(':').nth(1))
                .map(|list| list.trim().to_string())
        })
        .unwrap_or_else(|| "?".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{model}, {online} cores online, running on core(s) {allowed}, Linux {}",
        kernel.trim()
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let filter = args.iter().skip(1).find(|a| !a.starts_with("--")).cloned();
    let rounds = if quick { 5 } else { 21 };

    let adds_only = FlowMix {
        passive_adds: 80,
        marketable_adds: 20,
        cancels: 0,
        modifies: 0,
        invalid: 0,
    };
    let mut scenarios = vec![
        add_no_match(),
        add_crossing(1),
        add_crossing(5),
        add_crossing(20),
        cancel(),
        modify(false),
        modify(true),
        generated(
            "mixed, steady state (100k after 50k warm-up)",
            FlowMix::default(),
            50_000,
            100_000,
        ),
        generated(
            "batch of 10k generated requests, fresh book",
            FlowMix::default(),
            0,
            10_000,
        ),
        generated("batch of 10k generated adds only, fresh book", adds_only, 0, 10_000),
    ];
    if let Some(filter) = &filter {
        scenarios.retain(|s| s.name.contains(filter.as_str()));
    }

    let out_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-results");
    std::fs::create_dir_all(&out_dir).unwrap();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let out_path = out_dir.join(format!("book-{stamp}-{}.jsonl", std::process::id()));
    let mut out = std::fs::File::create(&out_path).unwrap();
    writeln!(
        out,
        "{{\"machine\":{:?},\"command\":{:?},\"rounds\":{rounds}}}",
        machine(),
        args.join(" ")
    )
    .unwrap();
    println!("matching-engine book benchmark on {}", machine());
    println!(
        "{rounds} rounds, scenarios alternated within each round, one warm-up round discarded; raw data: {}",
        out_path.display()
    );

    for scenario in &mut scenarios {
        (scenario.run)();
    }
    for round in 0..rounds {
        for scenario in &mut scenarios {
            let ns = (scenario.run)();
            writeln!(
                out,
                "{{\"scenario\":{:?},\"round\":{round},\"requests\":{},\"ns_per_request\":{ns:.2}}}",
                scenario.name, scenario.requests
            )
            .unwrap();
            scenario.samples.push(ns);
        }
    }

    println!(
        "\n{:<48} {:>9} {:>10} {:>10} {:>10} {:>10}",
        "scenario", "requests", "median ns", "min ns", "max ns", "M req/s"
    );
    for scenario in &scenarios {
        let (median, min, max) = stats(&scenario.samples);
        println!(
            "{:<48} {:>9} {:>10.1} {:>10.1} {:>10.1} {:>10.2}",
            scenario.name,
            scenario.requests,
            median,
            min,
            max,
            1e3 / median
        );
    }
    for scenario in scenarios.iter().filter(|s| s.name.starts_with("batch")) {
        let (median, _, _) = stats(&scenario.samples);
        println!(
            "{}: {:.1} ns/order = {:.2}x the {ANCHOR_NS_PER_ORDER} ns/order anchor (lower is faster)",
            scenario.name,
            median,
            median / ANCHOR_NS_PER_ORDER
        );
    }
}
