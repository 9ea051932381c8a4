//! Replays a seeded synthetic order flow through the engine and prints what came out: event
//! counts, the hash of the event stream, and each book's top of book. Two runs with the same
//! arguments print the same hash, in any process on any host.
//!
//! `cargo run --release -p matching-engine --bin replay -- [--seed N] [--requests N] [--symbols N] [--stp none|resting|incoming]`

use std::process::ExitCode;
use std::time::Instant;

use matching_engine::{
    Engine, EngineConfig, EventTally, FlowConfig, OrderFlow, SelfTradePrevention, Side, SymbolConfig,
};

struct Options {
    seed: u64,
    requests: u64,
    symbols: u32,
    policy: SelfTradePrevention,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        seed: 1,
        requests: 1_000_000,
        symbols: 4,
        policy: SelfTradePrevention::CancelResting,
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag} takes a number, not {value:?}"))
        };
        match flag.as_str() {
            "--seed" => options.seed = number()?,
            "--requests" => options.requests = number()?,
            "--symbols" => {
                options.symbols = u32::try_from(number()?)
                    .ok()
                    .filter(|&n| (1..=1024).contains(&n))
                    .ok_or("--symbols takes 1 to 1024")?
            }
            "--stp" => {
                options.policy = match value.as_str() {
                    "none" => SelfTradePrevention::None,
                    "resting" => SelfTradePrevention::CancelResting,
                    "incoming" => SelfTradePrevention::CancelIncoming,
                    _ => return Err(format!("--stp takes none, resting or incoming, not {value:?}")),
                }
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(options) => options,
        Err(problem) => {
            eprintln!(
                "replay: {problem}\nusage: replay [--seed N] [--requests N] [--symbols N] [--stp none|resting|incoming]"
            );
            return ExitCode::FAILURE;
        }
    };
    // Symbol s trades around 10_000 * (s + 1) ticks, in a band of +-2_000 ticks.
    let bands: Vec<SymbolConfig> = (0..i64::from(options.symbols))
        .map(|s| SymbolConfig {
            min_price: 10_000 * (s + 1) - 2_000,
            max_price: 10_000 * (s + 1) + 2_000,
        })
        .collect();
    let config = EngineConfig {
        symbols: bands.clone(),
        max_resting_orders: 1 << 20,
        self_trade_prevention: options.policy,
    };
    let mut engine = match Engine::new(&config) {
        Ok(engine) => engine,
        Err(problem) => {
            eprintln!("replay: {problem}");
            return ExitCode::FAILURE;
        }
    };
    let mut flow = OrderFlow::new(&FlowConfig::new(options.seed, bands));
    let mut tally = EventTally::default();
    let started = Instant::now();
    for _ in 0..options.requests {
        // Rejections are events like any other; they are counted in the tally.
        let _ = engine.apply(&flow.next_request(), &mut tally);
    }
    let elapsed = started.elapsed();

    println!(
        "seed {} requests {} symbols {} stp {:?}",
        options.seed, options.requests, options.symbols, options.policy
    );
    println!(
        "events {} trades {} traded_qty {} rejects {} cancels {} resting {}",
        tally.events,
        tally.trades,
        tally.traded_qty,
        tally.rejects,
        tally.cancels,
        engine.resting_orders()
    );
    println!("event stream hash {:#018x}", tally.hash);
    for symbol in 0..engine.symbol_count() {
        let best = engine.best_bid_offer(symbol).expect("symbols come from the engine");
        let show = |level: Option<matching_engine::LevelSnapshot>| {
            level.map_or("-".to_string(), |l| format!("{} x {}", l.total_qty, l.price))
        };
        let count = |side| engine.orders(symbol, side).map_or(0, |orders| orders.count());
        println!(
            "symbol {symbol}: bid {} / ask {} ({} bids, {} asks resting)",
            show(best.bid),
            show(best.ask),
            count(Side::Buy),
            count(Side::Sell)
        );
    }
    // The benches measure the engine alone; this includes the flow and the hashing.
    eprintln!(
        "{:.1} s, {:.0} ns per request, including generating the requests and hashing the events",
        elapsed.as_secs_f64(),
        elapsed.as_nanos() as f64 / options.requests.max(1) as f64
    );
    ExitCode::SUCCESS
}
