//! Replays generated order flow through the engine and through a plain reference book
//! (`tests/reference`) and requires identical events, in order, for every request, and an
//! identical book at checkpoints and at the end: every level and every order in priority order.

mod reference;

use matching_engine::{
    Engine, EngineConfig, Event, FlowConfig, LevelSnapshot, OrderFlow, SelfTradePrevention, Side, SymbolConfig,
};
use reference::ReferenceBook;

fn bands() -> Vec<SymbolConfig> {
    vec![
        // A wide band, a narrow one whose edges the mid keeps hitting, and negative prices.
        SymbolConfig {
            min_price: 9_000,
            max_price: 11_000,
        },
        SymbolConfig {
            min_price: 100,
            max_price: 160,
        },
        SymbolConfig {
            min_price: -50,
            max_price: 50,
        },
    ]
}

#[derive(Debug)]
struct Totals {
    trades: u64,
    rejects: u64,
    self_trade_cancels: u64,
    fok_kills: u64,
    modifies: u64,
    pool_exhausted: u64,
    /// Count per `RejectReason` byte.
    reject_reasons: [u64; 10],
}

fn compare_books(engine: &Engine, reference: &ReferenceBook, step: usize) {
    assert_eq!(
        engine.resting_orders() as usize,
        reference.resting_count(),
        "resting order count after request {step}"
    );
    let mut depth = [LevelSnapshot::default(); 8];
    for symbol in 0..engine.symbol_count() {
        for side in [Side::Buy, Side::Sell] {
            let engine_orders: Vec<_> = engine
                .orders(symbol, side)
                .unwrap()
                .map(|o| (o.id, o.owner, o.price, o.remaining, o.side, o.symbol))
                .collect();
            let reference_orders: Vec<_> = reference
                .orders(symbol, side)
                .into_iter()
                .map(|o| (o.id, o.owner, o.price, o.qty, side, symbol))
                .collect();
            assert_eq!(
                engine_orders, reference_orders,
                "orders of symbol {symbol} {side:?} after request {step}"
            );
            let levels = reference.levels(symbol, side);
            let written = engine.depth(symbol, side, &mut depth).unwrap();
            let expected: Vec<_> = levels
                .iter()
                .take(depth.len())
                .map(|&(price, total_qty, order_count)| LevelSnapshot {
                    price,
                    total_qty,
                    order_count,
                })
                .collect();
            assert_eq!(
                &depth[..written],
                &expected[..],
                "depth of symbol {symbol} {side:?} after request {step}"
            );
            let best = engine.best_bid_offer(symbol).unwrap();
            let best_of_side = match side {
                Side::Buy => best.bid,
                Side::Sell => best.ask,
            };
            assert_eq!(best_of_side, expected.first().copied());
        }
    }
}

fn run(seed: u64, requests: usize, capacity: u32, policy: SelfTradePrevention) -> Totals {
    let config = EngineConfig {
        symbols: bands(),
        max_resting_orders: capacity,
        self_trade_prevention: policy,
    };
    let mut engine = Engine::new(&config).unwrap();
    let mut reference = ReferenceBook::new(bands(), capacity as usize, policy);
    let mut flow = OrderFlow::new(&FlowConfig::new(seed, bands()));
    let mut engine_events: Vec<Event> = Vec::with_capacity(1024);
    let mut reference_events: Vec<Event> = Vec::with_capacity(1024);
    let mut totals = Totals {
        trades: 0,
        rejects: 0,
        self_trade_cancels: 0,
        fok_kills: 0,
        modifies: 0,
        pool_exhausted: 0,
        reject_reasons: [0; 10],
    };
    for step in 0..requests {
        let request = flow.next_request();
        engine_events.clear();
        reference_events.clear();
        let result = engine.apply(&request, &mut engine_events);
        reference.apply(&request, &mut reference_events);
        if engine_events != reference_events {
            panic!(
                "request {step} diverged: {request:?}\nengine:    {engine_events:#?}\nreference: {reference_events:#?}"
            );
        }
        let rejected = engine_events.iter().find_map(|event| match event {
            Event::Rejected { reason, .. } => Some(*reason),
            _ => None,
        });
        assert_eq!(
            result.err(),
            rejected,
            "the returned result must match the reported rejection"
        );
        for event in &engine_events {
            match event {
                Event::Trade { .. } => totals.trades += 1,
                Event::Rejected { reason, .. } => {
                    totals.rejects += 1;
                    totals.reject_reasons[*reason as usize] += 1;
                    if *reason == matching_engine::RejectReason::PoolExhausted {
                        totals.pool_exhausted += 1;
                    }
                }
                Event::Cancelled { reason, .. } => match reason {
                    matching_engine::CancelReason::SelfTradePrevention => totals.self_trade_cancels += 1,
                    matching_engine::CancelReason::FillOrKillUnfillable => totals.fok_kills += 1,
                    _ => {}
                },
                Event::Modified { .. } => totals.modifies += 1,
                _ => {}
            }
        }
        if step % 100_000 == 0 {
            compare_books(&engine, &reference, step);
        }
    }
    compare_books(&engine, &reference, requests);
    println!("seed {seed:#x}, {requests} requests, pool {capacity}, {policy:?}: {totals:?}");
    totals
}

/// The flow must actually reach the interesting paths, or agreement proves little.
fn assert_covered(totals: &Totals, requests: u64) {
    assert!(totals.trades > requests / 20, "too few trades: {}", totals.trades);
    assert!(totals.rejects > requests / 100, "too few rejects: {}", totals.rejects);
    assert!(totals.fok_kills > 0, "no fill-or-kill was ever killed");
    assert!(totals.modifies > requests / 50, "too few modifies: {}", totals.modifies);
    // Every reason but pool exhaustion (a separate test) must have been produced.
    for (byte, count) in totals.reject_reasons.iter().enumerate().skip(1) {
        if byte != matching_engine::RejectReason::PoolExhausted as usize {
            assert!(*count > 0, "reject reason {byte} never produced: {totals:?}");
        }
    }
}

/// `MATCHING_ENGINE_DIFF_REQUESTS=50000000 cargo test --release ...` for a longer soak.
fn requests_or(default: usize) -> usize {
    std::env::var("MATCHING_ENGINE_DIFF_REQUESTS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

#[test]
fn one_million_requests_agree_with_the_reference_cancel_resting() {
    let requests = requests_or(1_000_000);
    let totals = run(0x5EED_0001, requests, 1 << 16, SelfTradePrevention::CancelResting);
    assert_covered(&totals, requests as u64);
    assert!(totals.self_trade_cancels > 0, "self-trade prevention never fired");
}

#[test]
fn requests_agree_with_the_reference_cancel_incoming() {
    let requests = requests_or(200_000);
    let totals = run(0x5EED_0002, requests, 1 << 16, SelfTradePrevention::CancelIncoming);
    assert_covered(&totals, requests as u64);
    assert!(totals.self_trade_cancels > 0, "self-trade prevention never fired");
}

#[test]
fn requests_agree_with_the_reference_without_self_trade_prevention() {
    let requests = requests_or(200_000);
    let totals = run(0x5EED_0003, requests, 1 << 16, SelfTradePrevention::None);
    assert_covered(&totals, requests as u64);
    assert_eq!(totals.self_trade_cancels, 0);
}

#[test]
fn requests_agree_with_the_reference_when_the_pool_is_tiny() {
    let requests = requests_or(200_000);
    let totals = run(0x5EED_0004, requests, 40, SelfTradePrevention::CancelResting);
    // Most orders are refused here, so only ask that each path was reached.
    assert!(
        totals.trades > 1000 && totals.modifies > 0 && totals.fok_kills > 0,
        "{totals:?}"
    );
    assert!(totals.pool_exhausted > 100, "the small pool was never exhausted");
}
