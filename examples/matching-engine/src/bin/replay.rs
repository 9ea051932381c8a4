//! Replays a seeded synthetic order flow through the engine and prints what came out: event
//! counts, the hash of the event stream, and each book's top of book. Two runs with the same
//! arguments print the same hash, in any process on any host.
//!
//! `cargo run --release -p matching-engine --bin replay -- [--seed N] [--requests N] [--symbols N] [--stp none|resting|incoming]`
//!
//! With `--recording FILE.mcap` it replays a pipeline's recorded order feed instead
//! (`pipeline --record-feed FILE.mcap`): `salias replay` publishes the recording into a
//! channel of the recorded kind and type, in its recorded order, and a fresh engine of the
//! pipeline's configuration reads it from there as the live engine did, then prints the
//! same `RESULT` line the pipeline prints: the same input and output hashes as the live run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use matching_engine::{
    Engine, EngineConfig, EventMsg, EventTally, FlowConfig, OrderFlow, OrderMsg, SelfTradePrevention, Side,
    SymbolConfig, WireHash, pipeline_engine_config,
};
use salias::{OrderedFanout, ReceiveError};

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
    /// Replay a pipeline's recorded order feed (`pipeline --record-feed FILE`) through the
    /// pipeline's engine instead of a seeded flow, and print its RESULT line
    #[arg(long, value_name = "FILE", conflicts_with_all = ["seed", "requests", "symbols", "stp"])]
    recording: Option<PathBuf>,
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
    if let Some(recording) = &options.recording {
        return match replay_recording(recording) {
            Ok(()) => ExitCode::SUCCESS,
            Err(problem) => {
                eprintln!("replay: {problem}");
                ExitCode::FAILURE
            }
        };
    }
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

/// Publishes `recording` into a channel of its own with `salias replay`, and applies what
/// arrives to a fresh engine of the pipeline's configuration, stamping and hashing as the
/// pipeline's engine does (`roles/engine.rs`).
fn replay_recording(recording: &Path) -> Result<(), String> {
    let name = format!("me-replay-{}", std::process::id());
    let args: Vec<OsString> = vec![
        "salias".into(),
        "replay".into(),
        recording.into(),
        name.clone().into(),
        "--fast".into(),
    ];
    let replay = std::thread::spawn(move || salias_cli::run(args));
    // `salias replay` reads the whole file first, then makes the channel and waits for
    // one subscriber before it publishes.
    let deadline = Instant::now() + Duration::from_secs(60);
    let channel = loop {
        match OrderedFanout::<OrderMsg>::connect(&name) {
            Ok(channel) => break channel,
            Err(_) if replay.is_finished() => {
                return Err(format!(
                    "salias replay of {} failed (its error is above)",
                    recording.display()
                ));
            }
            Err(salias::Error::NotFound { .. } | salias::Error::Initializing { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(format!("{}: {e}", recording.display())),
        }
    };
    let mut feed = channel.subscriber().map_err(|e| e.to_string())?;
    let mut engine = Engine::new(&pipeline_engine_config()).map_err(|e| e.to_string())?;
    let (mut input, mut output) = (WireHash::default(), WireHash::default());
    let mut events: Vec<EventMsg> = Vec::new();
    let mut index = 0;
    loop {
        let request = match feed.recv_timeout(Duration::from_secs(60)) {
            Ok(request) => *request,
            // The replay's publishers are gone: everything it published was received.
            Err(ReceiveError::Disconnected) => break,
            Err(e) => return Err(format!("receiving the replayed feed: {e}")),
        };
        events.clear();
        // Rejections are events like any other.
        let _ = engine.apply_stamped(&request, index, &mut events);
        input.add_words(&request.untimed().to_words());
        for event in &events {
            output.add_words(&event.untimed().to_words());
        }
        index += 1;
    }
    if replay.join().map_err(|_| "the replay thread panicked")? != 0 {
        return Err(format!(
            "salias replay of {} failed (its error is above)",
            recording.display()
        ));
    }
    if feed.gaps().missing > 0 {
        return Err(format!("the replayed feed had gaps: {:?}", feed.gaps()));
    }
    println!(
        "RESULT input_count {} input_hash {} output_count {} output_hash {}",
        input.count, input.hash, output.count, output.hash
    );
    Ok(())
}
