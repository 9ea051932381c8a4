//! The engine: one book per symbol, one order pool and one id index shared by all books,
//! and the matching rules.

use std::fmt;

use crate::book::{BestBidOffer, Book, LevelSnapshot, RestingOrders};
use crate::event::{Event, EventSink};
use crate::index::OrderIndex;
use crate::pool::{NIL, Order, OrderPool};
use crate::types::{
    CancelReason, MAX_ORDER_QTY, OrderId, OrderType, OwnerId, Price, Qty, RejectReason, SelfTradePrevention, Side,
    SymbolId,
};
use crate::wire::{EventMsg, OrderMsg, order_kind};

/// The widest price band a symbol may have, in ticks. Each tick costs two 24-byte levels.
pub const MAX_BAND_TICKS: u64 = 1 << 24;
/// The most orders that may rest at once.
pub const MAX_RESTING_ORDERS: u32 = 1 << 28;

/// One symbol's accepted price band, in ticks, both ends inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymbolConfig {
    /// The lowest accepted price.
    pub min_price: Price,
    /// The highest accepted price.
    pub max_price: Price,
}

/// Everything the engine allocates up front.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// One entry per symbol; a symbol's id is its index here.
    pub symbols: Vec<SymbolConfig>,
    /// How many orders may rest at once across all symbols (the pool's size).
    pub max_resting_orders: u32,
    /// The self-trade prevention policy for every symbol.
    pub self_trade_prevention: SelfTradePrevention,
}

/// An [`EngineConfig`] the engine cannot be built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `symbols` is empty.
    NoSymbols,
    /// More symbols than a `u32` id can name.
    TooManySymbols,
    /// A symbol's `min_price` is above its `max_price`.
    InvertedBand {
        /// The symbol.
        symbol: SymbolId,
    },
    /// A symbol's band has more than [`MAX_BAND_TICKS`] ticks.
    BandTooWide {
        /// The symbol.
        symbol: SymbolId,
    },
    /// `max_resting_orders` is zero or above [`MAX_RESTING_ORDERS`].
    PoolSize {
        /// The requested size.
        requested: u32,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::NoSymbols => f.write_str("the engine needs at least one symbol"),
            ConfigError::TooManySymbols => f.write_str("symbol ids are u32, so at most u32::MAX symbols fit"),
            ConfigError::InvertedBand { symbol } => {
                write!(f, "symbol {symbol}: min_price is above max_price")
            }
            ConfigError::BandTooWide { symbol } => write!(
                f,
                "symbol {symbol}: the price band is wider than {MAX_BAND_TICKS} ticks; every tick costs memory, so narrow the band or coarsen the tick"
            ),
            ConfigError::PoolSize { requested } => write!(
                f,
                "max_resting_orders is {requested}; it must be between 1 and {MAX_RESTING_ORDERS}"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// A query named a symbol the engine was not configured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownSymbol(pub SymbolId);

impl fmt::Display for UnknownSymbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "symbol {} is not configured in this engine", self.0)
    }
}

impl std::error::Error for UnknownSymbol {}

/// A new order, as the typed API takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewOrder {
    /// Must not be resting already.
    pub id: OrderId,
    /// The book.
    pub symbol: SymbolId,
    /// Buy or sell.
    pub side: Side,
    /// Limit, market, IOC, FOK or post-only.
    pub order_type: OrderType,
    /// Limit price in ticks; ignored for market orders.
    pub price: Price,
    /// Must not be zero.
    pub qty: Qty,
    /// The account, for self-trade prevention.
    pub owner: OwnerId,
}

/// The incoming side of a match.
#[derive(Clone, Copy)]
struct Taker {
    id: OrderId,
    owner: OwnerId,
    side: Side,
    /// The worst opposite level it may trade at.
    limit: u32,
}

enum MatchOutcome {
    /// Matching stopped with this much left (possibly zero).
    Remaining(Qty),
    /// Self-trade prevention cancelled the taker's remainder (already reported).
    TakerCancelled,
}

/// A price-time priority matching engine for several symbols.
///
/// All memory is allocated by [`Engine::new`]; processing a request allocates nothing
/// (`tests/no_alloc.rs` checks it). Requests never panic on bad input: each refusal is an
/// [`Event::Rejected`] with a [`RejectReason`], also returned as the `Err`.
pub struct Engine {
    books: Vec<Book>,
    pool: OrderPool,
    index: OrderIndex,
    self_trade_prevention: SelfTradePrevention,
    /// Arrival counter giving each queue entry its time priority.
    next_priority: u64,
}

impl Engine {
    /// Allocates every book, the order pool and the id index.
    pub fn new(config: &EngineConfig) -> Result<Engine, ConfigError> {
        if config.symbols.is_empty() {
            return Err(ConfigError::NoSymbols);
        }
        let symbol_count = u32::try_from(config.symbols.len()).map_err(|_| ConfigError::TooManySymbols)?;
        if config.max_resting_orders == 0 || config.max_resting_orders > MAX_RESTING_ORDERS {
            return Err(ConfigError::PoolSize {
                requested: config.max_resting_orders,
            });
        }
        let mut books = Vec::with_capacity(config.symbols.len());
        for (symbol, band) in (0..symbol_count).zip(&config.symbols) {
            if band.min_price > band.max_price {
                return Err(ConfigError::InvertedBand { symbol });
            }
            let ticks = band.max_price.abs_diff(band.min_price).saturating_add(1);
            if ticks > MAX_BAND_TICKS {
                return Err(ConfigError::BandTooWide { symbol });
            }
            books.push(Book::new(symbol, band.min_price, band.max_price));
        }
        Ok(Engine {
            books,
            pool: OrderPool::with_capacity(config.max_resting_orders),
            index: OrderIndex::with_capacity(config.max_resting_orders),
            self_trade_prevention: config.self_trade_prevention,
            next_priority: 0,
        })
    }

    /// Processes one wire request: decodes it and calls [`add`](Self::add),
    /// [`cancel`](Self::cancel) or [`modify`](Self::modify). Unknown kind, side or order
    /// type bytes are rejected as [`RejectReason::Malformed`].
    pub fn apply<S: EventSink + ?Sized>(&mut self, request: &OrderMsg, sink: &mut S) -> Result<(), RejectReason> {
        match request.kind {
            order_kind::ADD => {
                let (Some(side), Some(order_type)) =
                    (Side::from_u8(request.side), OrderType::from_u8(request.order_type))
                else {
                    return reject(sink, request.order_id, RejectReason::Malformed);
                };
                self.add(
                    NewOrder {
                        id: request.order_id,
                        symbol: request.symbol,
                        side,
                        order_type,
                        price: request.price,
                        qty: request.qty,
                        owner: request.owner,
                    },
                    sink,
                )
            }
            order_kind::CANCEL => self.cancel(request.order_id, sink),
            order_kind::MODIFY => self.modify(request.order_id, request.price, request.qty, sink),
            _ => reject(sink, request.order_id, RejectReason::Malformed),
        }
    }

    /// [`apply`](Self::apply) for a pipeline: appends the request's events to `out` as wire
    /// messages stamped with `input_seq` (the request's position in the engine's input) and
    /// the request's planned and actual send times, so a market-data subscriber can group
    /// events by request and measure latency. Everything else in the events is what
    /// `apply` reports, so replaying the same requests gives the same bytes bar the times.
    pub fn apply_stamped(
        &mut self,
        request: &OrderMsg,
        input_seq: u64,
        out: &mut Vec<EventMsg>,
    ) -> Result<(), RejectReason> {
        let first = out.len();
        let outcome = self.apply(request, out);
        for event in &mut out[first..] {
            event.engine_seq = input_seq;
            event.gateway_ts_ns = request.gateway_ts_ns;
            event.send_delay_ns = request.send_delay_ns;
        }
        outcome
    }

    /// Enters a new order: validates it, matches it against the opposite side, then rests,
    /// cancels or kills what is left according to its type.
    pub fn add<S: EventSink + ?Sized>(&mut self, order: NewOrder, sink: &mut S) -> Result<(), RejectReason> {
        let Engine {
            books,
            pool,
            index,
            self_trade_prevention,
            next_priority,
        } = self;
        let Some(book) = books.get_mut(order.symbol as usize) else {
            return reject(sink, order.id, RejectReason::UnknownSymbol);
        };
        if order.qty == 0 {
            return reject(sink, order.id, RejectReason::ZeroQuantity);
        }
        if order.qty > MAX_ORDER_QTY {
            return reject(sink, order.id, RejectReason::QuantityTooLarge);
        }
        let limit = if order.order_type.has_price() {
            match book.index_of(order.price) {
                Some(limit) => limit,
                None => return reject(sink, order.id, RejectReason::PriceOutOfBand),
            }
        } else {
            // A market order may trade at any level of the band.
            match order.side {
                Side::Buy => (book.max_price - book.min_price) as u32,
                Side::Sell => 0,
            }
        };
        if index.get(order.id).is_some() {
            return reject(sink, order.id, RejectReason::DuplicateOrderId);
        }
        // Checked before any matching, so a limit order never trades and then finds no room.
        if order.order_type.can_rest() && pool.free_count() == 0 {
            return reject(sink, order.id, RejectReason::PoolExhausted);
        }
        if order.order_type == OrderType::PostOnly && book.would_cross(order.side, limit) {
            return reject(sink, order.id, RejectReason::PostOnlyWouldCross);
        }
        sink.emit(Event::Accepted {
            order_id: order.id,
            symbol: order.symbol,
        });
        let taker = Taker {
            id: order.id,
            owner: order.owner,
            side: order.side,
            limit,
        };
        if order.order_type == OrderType::FillOrKill && !fillable(book, pool, *self_trade_prevention, taker, order.qty)
        {
            sink.emit(Event::Cancelled {
                order_id: order.id,
                symbol: order.symbol,
                remaining: order.qty,
                reason: CancelReason::FillOrKillUnfillable,
            });
            return Ok(());
        }
        let remaining = match match_incoming(book, pool, index, *self_trade_prevention, taker, order.qty, sink) {
            MatchOutcome::TakerCancelled | MatchOutcome::Remaining(0) => return Ok(()),
            MatchOutcome::Remaining(remaining) => remaining,
        };
        if !order.order_type.can_rest() {
            sink.emit(Event::Cancelled {
                order_id: order.id,
                symbol: order.symbol,
                remaining,
                reason: CancelReason::UnfilledImmediate,
            });
            return Ok(());
        }
        *next_priority += 1;
        let resting = Order {
            id: order.id,
            owner: order.owner,
            price: order.price,
            remaining,
            entered_qty: order.qty,
            priority: *next_priority,
            symbol: order.symbol,
            side: order.side,
            order_type: order.order_type,
            ..OrderPool::blank()
        };
        // The free-slot check above still holds: matching only releases slots.
        let Some(slot) = pool.allocate(resting) else {
            unreachable!("a slot was free before matching and matching frees slots")
        };
        index.insert(order.id, slot);
        book.ladder_mut(order.side).push_back(limit, slot, pool);
        sink.emit(book_update(book, order.side, limit));
        Ok(())
    }

    /// Removes a resting order.
    pub fn cancel<S: EventSink + ?Sized>(&mut self, order_id: OrderId, sink: &mut S) -> Result<(), RejectReason> {
        let Some(slot) = self.index.remove(order_id) else {
            return reject(sink, order_id, RejectReason::UnknownOrderId);
        };
        let order = *self.pool.get(slot);
        let book = &mut self.books[order.symbol as usize];
        let level = book.index_of(order.price).expect("resting orders are in band");
        book.ladder_mut(order.side).unlink(level, slot, &mut self.pool);
        self.pool.release(slot);
        sink.emit(Event::Cancelled {
            order_id,
            symbol: order.symbol,
            remaining: order.remaining,
            reason: CancelReason::Requested,
        });
        sink.emit(book_update(book, order.side, level));
        Ok(())
    }

    /// Gives a resting order a new price and open quantity.
    ///
    /// Same price and a quantity no larger than what is open: the order keeps its place.
    /// A larger quantity or a new price sends it to the back of its (new) level's queue. A
    /// new price that crosses trades first, as an incoming limit order would (self-trade
    /// prevention applies); a post-only order is rejected instead and left unchanged.
    pub fn modify<S: EventSink + ?Sized>(
        &mut self,
        order_id: OrderId,
        price: Price,
        qty: Qty,
        sink: &mut S,
    ) -> Result<(), RejectReason> {
        let Engine {
            books,
            pool,
            index,
            self_trade_prevention,
            next_priority,
        } = self;
        let Some(slot) = index.get(order_id) else {
            return reject(sink, order_id, RejectReason::UnknownOrderId);
        };
        if qty == 0 {
            return reject(sink, order_id, RejectReason::ZeroQuantity);
        }
        if qty > MAX_ORDER_QTY {
            return reject(sink, order_id, RejectReason::QuantityTooLarge);
        }
        let order = *pool.get(slot);
        let book = &mut books[order.symbol as usize];
        let Some(new_level) = book.index_of(price) else {
            return reject(sink, order_id, RejectReason::PriceOutOfBand);
        };
        let old_level = book.index_of(order.price).expect("resting orders are in band");
        let modified = |priority_kept| Event::Modified {
            order_id,
            symbol: order.symbol,
            price,
            qty,
            priority_kept,
        };
        if new_level == old_level {
            let ladder = book.ladder_mut(order.side);
            if qty <= order.remaining {
                ladder.reduce(old_level, slot, order.remaining - qty, pool);
                sink.emit(modified(true));
            } else {
                ladder.unlink(old_level, slot, pool);
                *next_priority += 1;
                let requeued = pool.get_mut(slot);
                requeued.remaining = qty;
                requeued.entered_qty = qty;
                requeued.priority = *next_priority;
                ladder.push_back(old_level, slot, pool);
                sink.emit(modified(false));
            }
            sink.emit(book_update(book, order.side, old_level));
            return Ok(());
        }
        if order.order_type == OrderType::PostOnly && book.would_cross(order.side, new_level) {
            return reject(sink, order_id, RejectReason::PostOnlyWouldCross);
        }
        book.ladder_mut(order.side).unlink(old_level, slot, pool);
        sink.emit(modified(false));
        sink.emit(book_update(book, order.side, old_level));
        let taker = Taker {
            id: order_id,
            owner: order.owner,
            side: order.side,
            limit: new_level,
        };
        match match_incoming(book, pool, index, *self_trade_prevention, taker, qty, sink) {
            MatchOutcome::TakerCancelled | MatchOutcome::Remaining(0) => {
                index.remove(order_id);
                pool.release(slot);
            }
            MatchOutcome::Remaining(remaining) => {
                *next_priority += 1;
                let moved = pool.get_mut(slot);
                moved.price = price;
                moved.remaining = remaining;
                moved.entered_qty = qty;
                moved.priority = *next_priority;
                book.ladder_mut(order.side).push_back(new_level, slot, pool);
                sink.emit(book_update(book, order.side, new_level));
            }
        }
        Ok(())
    }

    /// The best bid and offer of a symbol.
    pub fn best_bid_offer(&self, symbol: SymbolId) -> Result<BestBidOffer, UnknownSymbol> {
        Ok(self.book(symbol)?.best_bid_offer())
    }

    /// Writes the best `out.len()` levels of one side into `out`, best first, and returns
    /// how many levels there were (at most `out.len()`). Allocates nothing.
    pub fn depth(&self, symbol: SymbolId, side: Side, out: &mut [LevelSnapshot]) -> Result<usize, UnknownSymbol> {
        Ok(self.book(symbol)?.depth(side, out))
    }

    /// Every resting order of one side of a symbol, best level first, earliest first within
    /// a level.
    pub fn orders(&self, symbol: SymbolId, side: Side) -> Result<RestingOrders<'_>, UnknownSymbol> {
        Ok(self.book(symbol)?.orders(side, &self.pool))
    }

    /// A resting order by id.
    pub fn order(&self, order_id: OrderId) -> Option<&Order> {
        self.index.get(order_id).map(|slot| self.pool.get(slot))
    }

    /// How many orders rest, across all symbols.
    pub fn resting_orders(&self) -> u32 {
        self.pool.capacity() - self.pool.free_count()
    }

    /// How many orders may rest at once.
    pub fn capacity(&self) -> u32 {
        self.pool.capacity()
    }

    /// How many symbols the engine has.
    pub fn symbol_count(&self) -> u32 {
        self.books.len() as u32
    }

    /// A symbol's configured price band.
    pub fn band(&self, symbol: SymbolId) -> Result<SymbolConfig, UnknownSymbol> {
        let book = self.book(symbol)?;
        Ok(SymbolConfig {
            min_price: book.min_price,
            max_price: book.max_price,
        })
    }

    fn book(&self, symbol: SymbolId) -> Result<&Book, UnknownSymbol> {
        self.books.get(symbol as usize).ok_or(UnknownSymbol(symbol))
    }
}

fn reject<S: EventSink + ?Sized>(sink: &mut S, order_id: OrderId, reason: RejectReason) -> Result<(), RejectReason> {
    sink.emit(Event::Rejected { order_id, reason });
    Err(reason)
}

fn book_update(book: &Book, side: Side, level: u32) -> Event {
    let snapshot = book.snapshot(side, level);
    Event::BookUpdate {
        symbol: book.symbol,
        side,
        price: snapshot.price,
        total_qty: snapshot.total_qty,
        order_count: snapshot.order_count,
    }
}

/// Whether a fill-or-kill taker could trade its whole `qty` now, counting only what it
/// would really trade under the self-trade prevention policy.
fn fillable(book: &Book, pool: &OrderPool, policy: SelfTradePrevention, taker: Taker, qty: Qty) -> bool {
    let ladder = book.ladder(taker.side.opposite());
    let mut available: Qty = 0;
    let mut level = ladder.best();
    while let Some(index) = level {
        if !Book::crosses(taker.side, taker.limit, index) {
            return false;
        }
        let queue = &ladder.levels[index as usize];
        if policy == SelfTradePrevention::None {
            available += queue.total_qty;
        } else {
            let mut slot = queue.head;
            while slot != NIL {
                let maker = pool.get(slot);
                if maker.owner == taker.owner {
                    if policy == SelfTradePrevention::CancelIncoming {
                        return available >= qty;
                    }
                } else {
                    available += maker.remaining;
                    if available >= qty {
                        return true;
                    }
                }
                slot = maker.next;
            }
        }
        if available >= qty {
            return true;
        }
        level = ladder.next_worse(index);
    }
    false
}

/// Trades `qty` of `taker` against the opposite side, best level first and in time order
/// within a level, for as long as levels cross its limit.
fn match_incoming<S: EventSink + ?Sized>(
    book: &mut Book,
    pool: &mut OrderPool,
    index: &mut OrderIndex,
    policy: SelfTradePrevention,
    taker: Taker,
    qty: Qty,
    sink: &mut S,
) -> MatchOutcome {
    let maker_side = taker.side.opposite();
    let symbol = book.symbol;
    let mut remaining = qty;
    while remaining > 0 {
        let Some(level) = book.ladder(maker_side).best() else {
            break;
        };
        if !Book::crosses(taker.side, taker.limit, level) {
            break;
        }
        let price = book.price_at(level);
        let ladder = book.ladder_mut(maker_side);
        let mut slot = ladder.levels[level as usize].head;
        let mut level_changed = false;
        while remaining > 0 && slot != NIL {
            let maker = *pool.get(slot);
            if maker.owner == taker.owner && policy != SelfTradePrevention::None {
                if policy == SelfTradePrevention::CancelIncoming {
                    // The level may already have traded: report it before the taker goes.
                    if level_changed {
                        sink.emit(book_update(book, maker_side, level));
                    }
                    sink.emit(Event::Cancelled {
                        order_id: taker.id,
                        symbol,
                        remaining,
                        reason: CancelReason::SelfTradePrevention,
                    });
                    return MatchOutcome::TakerCancelled;
                }
                ladder.unlink(level, slot, pool);
                index.remove(maker.id);
                pool.release(slot);
                sink.emit(Event::Cancelled {
                    order_id: maker.id,
                    symbol,
                    remaining: maker.remaining,
                    reason: CancelReason::SelfTradePrevention,
                });
                level_changed = true;
                slot = maker.next;
                continue;
            }
            let traded = remaining.min(maker.remaining);
            sink.emit(Event::Trade {
                symbol,
                maker_order_id: maker.id,
                taker_order_id: taker.id,
                price,
                qty: traded,
                aggressor: taker.side,
            });
            remaining -= traded;
            level_changed = true;
            if traded == maker.remaining {
                ladder.unlink(level, slot, pool);
                index.remove(maker.id);
                pool.release(slot);
            } else {
                ladder.reduce(level, slot, traded, pool);
            }
            slot = maker.next;
        }
        // Entering a crossing level always changes it: a trade or a self-trade cancel.
        debug_assert!(level_changed);
        sink.emit(book_update(book, maker_side, level));
    }
    MatchOutcome::Remaining(remaining)
}
