//! Replays a seeded synthetic order flow through the engine and prints what came out: event
//! counts, the hash of the event stream, and each book's top of book. Two runs with the same
//! arguments print the same hash, in any process on any host.
//!
//! `cargo run --release -p matching-engine --bin replay -- [--seed N] [--requests N] [--symbols N] [--stp none|resting|incoming]`

use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use matching_engine::{
    Engine, EngineConfig, EventTally, FlowConfig, OrderFlow, SelfTradePrevention, Side, SymbolConfig,
};

/// Replays a seeded synthetic order flow through the engine and prints the event counts,
/// the event stream's hash and each book's top of book. The same arguments print the same
/// hash, in any process on any host.
#[derive(Parser, Debug)]
#[command(name = "replay", args_override_self = true)]
struct Options {
    /// Seed of the order flow
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// How many requests to replay
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    requests: u64,
    /// How many symbols (1 to 1024)
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    symbols: u32,
    /// Self-trade prevention
    #[arg(long, value_enum, default_value_t = Stp::Resting)]
    stp: Stp,
}

/// `SelfTradePrevention` by its command-line name.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Stp {
    /// Orders of one owner may trade with each other
    None,
    /// The resting order of the same owner is cancelled and matching goes on
    Resting,
    /// The incoming remainder is cancelled
    Incoming,
}

impl From<Stp> for SelfTradePrevention {
    fn from(stp: Stp) -> SelfTradePrevention {
        match stp {
            Stp::None => SelfTradePrevention::None,
            Stp::Resting => SelfTradePrevention::CancelResting,
            Stp::Incoming => SelfTradePrevention::CancelIncoming,
        }
    }
}

fn main() -> ExitCode {
    let options = Options::parse();
    let policy = SelfTradePrevention::from(options.stp);
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
        self_trade_prevention: policy,
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
        options.seed, options.requests, options.symbols, policy
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
