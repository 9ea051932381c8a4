//! What the engine reports, and where it reports it.

use crate::types::{CancelReason, OrderId, Price, Qty, RejectReason, Side, SymbolId};
use crate::wire::EventMsg;

/// One outcome of a request, in the order it happened.
///
/// For one request the engine emits, in this order: `Rejected` alone; or `Accepted` (new
/// orders) / `Modified` (modifies; a price change also reports the level it left), then
/// for each price level the request changed a `BookUpdate` after the `Trade`s and
/// `Cancelled`s at that level, then `Cancelled` for a remainder that does not rest
/// (immediate orders, a killed fill-or-kill, an incoming order stopped by
/// [`SelfTradePrevention::CancelIncoming`](crate::SelfTradePrevention::CancelIncoming)) or
/// a `BookUpdate` for the level where the remainder rests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// A new order passed validation and entered matching.
    Accepted {
        /// The order.
        order_id: OrderId,
        /// Its book.
        symbol: SymbolId,
    },
    /// A request was refused; nothing changed.
    Rejected {
        /// The order the request named.
        order_id: OrderId,
        /// Why.
        reason: RejectReason,
    },
    /// Two orders traded at the resting (maker) order's price.
    Trade {
        /// The book.
        symbol: SymbolId,
        /// The resting order.
        maker_order_id: OrderId,
        /// The incoming (or modified-and-crossing) order.
        taker_order_id: OrderId,
        /// The maker's price.
        price: Price,
        /// The quantity traded.
        qty: Qty,
        /// The taker's side.
        aggressor: Side,
    },
    /// An order, or an incoming order's remainder, was removed.
    Cancelled {
        /// The order.
        order_id: OrderId,
        /// Its book.
        symbol: SymbolId,
        /// The quantity that was still open.
        remaining: Qty,
        /// Why.
        reason: CancelReason,
    },
    /// A resting order's price or quantity changed.
    Modified {
        /// The order.
        order_id: OrderId,
        /// Its book.
        symbol: SymbolId,
        /// The new price.
        price: Price,
        /// The new open quantity.
        qty: Qty,
        /// True when the order kept its place in the queue (same price, quantity not increased).
        priority_kept: bool,
    },
    /// The new state of one price level (level-2 incremental update). `total_qty == 0`
    /// means the level is now empty.
    BookUpdate {
        /// The book.
        symbol: SymbolId,
        /// The level's side.
        side: Side,
        /// The level's price.
        price: Price,
        /// The open quantity at the level.
        total_qty: Qty,
        /// How many orders rest at the level.
        order_count: u32,
    },
}

/// Where the engine writes events. Implement it for whatever consumes them (a salias
/// publisher, a counter); the engine calls it synchronously while it processes a request.
pub trait EventSink {
    /// Receives one event.
    fn emit(&mut self, event: Event);
}

/// Collects events. Give it enough capacity up front and `clear()` it between requests,
/// and it never allocates.
impl EventSink for Vec<Event> {
    fn emit(&mut self, event: Event) {
        self.push(event);
    }
}

/// Collects events already encoded as wire messages.
impl EventSink for Vec<EventMsg> {
    fn emit(&mut self, event: Event) {
        self.push(EventMsg::from(event));
    }
}

/// Discards events; for measuring the book alone.
impl EventSink for () {
    fn emit(&mut self, _event: Event) {}
}

/// Counts events by kind and folds every event's wire bytes into a hash, so a run can be
/// checked (trade count, traded quantity, determinism) without storing its events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventTally {
    /// Events seen.
    pub events: u64,
    /// `Trade` events.
    pub trades: u64,
    /// Sum of traded quantity.
    pub traded_qty: u64,
    /// `Rejected` events.
    pub rejects: u64,
    /// `Cancelled` events.
    pub cancels: u64,
    /// FNV-1a over the 64-byte wire encoding of every event, in order.
    pub hash: u64,
}

impl Default for EventTally {
    fn default() -> EventTally {
        EventTally {
            events: 0,
            trades: 0,
            traded_qty: 0,
            rejects: 0,
            cancels: 0,
            hash: 0xcbf2_9ce4_8422_2325,
        }
    }
}

impl EventSink for EventTally {
    fn emit(&mut self, event: Event) {
        self.events += 1;
        match event {
            Event::Trade { qty, .. } => {
                self.trades += 1;
                self.traded_qty += qty;
            }
            Event::Rejected { .. } => self.rejects += 1,
            Event::Cancelled { .. } => self.cancels += 1,
            _ => {}
        }
        for byte in EventMsg::from(event).to_bytes() {
            self.hash ^= u64::from(byte);
            self.hash = self.hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}
