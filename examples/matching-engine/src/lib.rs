//! A price-time priority matching engine: the core of the salias showcase.
//!
//! ```
//! use matching_engine::{Engine, EngineConfig, Event, NewOrder, OrderType, SelfTradePrevention, Side, SymbolConfig};
//!
//! let mut engine = Engine::new(&EngineConfig {
//!     symbols: vec![SymbolConfig { min_price: 9_000, max_price: 11_000 }],
//!     max_resting_orders: 1024,
//!     self_trade_prevention: SelfTradePrevention::CancelResting,
//! })?;
//! let mut events: Vec<Event> = Vec::with_capacity(64); // cleared, never grown, between requests
//! let order = |id, side, price, qty, owner| NewOrder { id, symbol: 0, side, order_type: OrderType::Limit, price, qty, owner };
//!
//! engine.add(order(1, Side::Sell, 10_001, 5, 7), &mut events).unwrap();
//! events.clear();
//! engine.add(order(2, Side::Buy, 10_001, 3, 8), &mut events).unwrap();
//! assert!(events.contains(&Event::Trade {
//!     symbol: 0, maker_order_id: 1, taker_order_id: 2, price: 10_001, qty: 3, aggressor: Side::Buy,
//! }));
//! assert_eq!(engine.best_bid_offer(0)?.ask.map(|level| level.total_qty), Some(2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Contents
//!
//! - [`Engine`]: one book per symbol; [`add`](Engine::add), [`cancel`](Engine::cancel),
//!   [`modify`](Engine::modify), or [`apply`](Engine::apply) for a wire [`OrderMsg`];
//!   queries [`best_bid_offer`](Engine::best_bid_offer), [`depth`](Engine::depth),
//!   [`orders`](Engine::orders), [`order`](Engine::order).
//! - [`Event`] and [`EventSink`]: what the engine reports and where; [`EventTally`] counts
//!   and hashes a stream.
//! - [`OrderMsg`], [`EventMsg`]: the 64-byte salias wire messages, in and out.
//! - [`OrderFlow`]: a seeded synthetic workload; [`gateway_requests`] and
//!   [`pipeline_engine_config`]: the workload and engine of the showcase pipeline.
//!
//! # Rules
//!
//! Prices are integer ticks inside each symbol's configured band; the band is what makes a
//! price level an array slot. Orders trade at the resting order's price, best price first
//! and earliest first within a price. The memory for resting orders (one 64-byte [`Order`]
//! each), their id index and every price level is allocated by [`Engine::new`]; requests
//! allocate nothing. Order ids must be unique among resting orders; the engine cannot
//! remember every id it has ever seen without unbounded memory.

// The unsafe items in this crate's output are the `unsafe impl`s of zerocopy's traits that
// its derives generate after proving the layout; the lint does not see into those external
// macros, and nothing here needs hand-written unsafe.
#![forbid(unsafe_code)]

mod book;
mod engine;
mod event;
mod generator;
mod index;
mod pool;
mod showcase;
mod types;
mod wire;

pub use book::{BestBidOffer, LevelSnapshot, RestingOrders};
pub use engine::{
    ConfigError, Engine, EngineConfig, MAX_BAND_TICKS, MAX_RESTING_ORDERS, NewOrder, SymbolConfig, UnknownSymbol,
};
pub use event::{Event, EventSink, EventTally};
pub use generator::{FlowConfig, FlowMix, OrderFlow, SplitMix64};
pub use pool::Order;
pub use showcase::{gateway_requests, pipeline_engine_config, pipeline_symbols};
pub use types::{
    CancelReason, MAX_ORDER_QTY, OrderId, OrderType, OwnerId, Price, Qty, RejectReason, SelfTradePrevention, Side,
    SymbolId,
};
pub use wire::{EventMsg, OrderMsg, UndecodableEvent, WireHash, event_kind, order_kind};
