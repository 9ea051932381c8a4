//! The vocabulary shared by the book, the events and the wire types.

use std::fmt;

/// A price in integer ticks. Each symbol accepts prices only inside its configured band.
pub type Price = i64;
/// A quantity in lots. Zero is never a valid order quantity.
pub type Qty = u64;
/// An order id chosen by the sender; unique among the orders resting in the engine.
pub type OrderId = u64;
/// The account an order belongs to; self-trade prevention compares these.
pub type OwnerId = u64;
/// A symbol is the index of its book in [`EngineConfig::symbols`](crate::EngineConfig::symbols).
pub type SymbolId = u32;

/// Which side of the book an order is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Side {
    /// Wants to buy; rests on the bid side.
    Buy = 1,
    /// Wants to sell; rests on the ask side.
    Sell = 2,
}

impl Side {
    /// The side an order of this side trades against.
    pub fn opposite(self) -> Side {
        match self {
            Side::Buy => Side::Sell,
            Side::Sell => Side::Buy,
        }
    }

    /// Decodes the wire byte; `None` for anything but 1 or 2.
    pub fn from_u8(byte: u8) -> Option<Side> {
        match byte {
            1 => Some(Side::Buy),
            2 => Some(Side::Sell),
            _ => None,
        }
    }
}

/// How an incoming order treats liquidity and whatever it cannot fill at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OrderType {
    /// Trades what crosses up to its price, rests the remainder.
    Limit = 1,
    /// Trades at any price against what is there, cancels the remainder. Its price is ignored.
    Market = 2,
    /// Immediate-or-cancel: trades what crosses up to its price, cancels the remainder.
    ImmediateOrCancel = 3,
    /// Fill-or-kill: trades its whole quantity up to its price at once, or nothing at all.
    FillOrKill = 4,
    /// Rests without trading; rejected if it would cross on arrival.
    PostOnly = 5,
}

impl OrderType {
    /// Decodes the wire byte; `None` for anything outside 1..=5.
    pub fn from_u8(byte: u8) -> Option<OrderType> {
        match byte {
            1 => Some(OrderType::Limit),
            2 => Some(OrderType::Market),
            3 => Some(OrderType::ImmediateOrCancel),
            4 => Some(OrderType::FillOrKill),
            5 => Some(OrderType::PostOnly),
            _ => None,
        }
    }

    /// Whether an unfilled remainder of this type stays in the book (and so needs a pool slot).
    pub fn can_rest(self) -> bool {
        matches!(self, OrderType::Limit | OrderType::PostOnly)
    }

    /// Whether the price field means anything for this type.
    pub fn has_price(self) -> bool {
        !matches!(self, OrderType::Market)
    }
}

/// What happens when an incoming order would trade against a resting order of the same owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SelfTradePrevention {
    /// Owners are not compared; an account may trade with itself.
    None,
    /// The resting order is cancelled and matching continues with the next one.
    #[default]
    CancelResting,
    /// The incoming order's remainder is cancelled; the resting order stays untouched.
    CancelIncoming,
}

/// Why the engine refused a request. Every invalid input maps to one of these; none panics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RejectReason {
    /// The wire message's kind, side or order type byte is not a known value.
    Malformed = 1,
    /// The symbol is not one the engine was configured with.
    UnknownSymbol = 2,
    /// The quantity is zero.
    ZeroQuantity = 3,
    /// The price is outside the symbol's configured tick band.
    PriceOutOfBand = 4,
    /// An order with this id is already resting in the engine.
    DuplicateOrderId = 5,
    /// No resting order has this id (never existed, already filled, or already cancelled).
    UnknownOrderId = 6,
    /// The order pool is full, so a limit or post-only order could not be guaranteed a place to rest.
    PoolExhausted = 7,
    /// A post-only order (or a post-only order's new price) would have traded on arrival.
    PostOnlyWouldCross = 8,
    /// The quantity is above [`MAX_ORDER_QTY`].
    QuantityTooLarge = 9,
}

/// The largest quantity one order may have: 2^32 lots. With at most
/// [`MAX_RESTING_ORDERS`](crate::MAX_RESTING_ORDERS) orders, no level total can overflow a `u64`.
pub const MAX_ORDER_QTY: Qty = 1 << 32;

impl RejectReason {
    /// Decodes the wire byte.
    pub fn from_u8(byte: u8) -> Option<RejectReason> {
        use RejectReason::*;
        [
            Malformed,
            UnknownSymbol,
            ZeroQuantity,
            PriceOutOfBand,
            DuplicateOrderId,
            UnknownOrderId,
            PoolExhausted,
            PostOnlyWouldCross,
            QuantityTooLarge,
        ]
        .into_iter()
        .find(|reason| *reason as u8 == byte)
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RejectReason::Malformed => "the message's kind, side or order type is not a known value",
            RejectReason::UnknownSymbol => "the symbol is not configured in this engine",
            RejectReason::ZeroQuantity => "the quantity is zero; use a cancel to remove an order",
            RejectReason::PriceOutOfBand => "the price is outside the symbol's configured tick band",
            RejectReason::DuplicateOrderId => "an order with this id is already resting",
            RejectReason::UnknownOrderId => "no resting order has this id (it may have filled or been cancelled)",
            RejectReason::PoolExhausted => "the order pool is full; no new order can rest until others leave the book",
            RejectReason::PostOnlyWouldCross => "the post-only order would have traded on arrival",
            RejectReason::QuantityTooLarge => "the quantity is above the per-order maximum of 2^32 lots",
        })
    }
}

impl std::error::Error for RejectReason {}

/// Why an accepted order left the book (or never reached it) without filling completely.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CancelReason {
    /// The owner asked for it.
    Requested = 1,
    /// The unfilled remainder of a market or immediate-or-cancel order.
    UnfilledImmediate = 2,
    /// A fill-or-kill order that could not fill completely; nothing traded.
    FillOrKillUnfillable = 3,
    /// Self-trade prevention removed it.
    SelfTradePrevention = 4,
}

impl CancelReason {
    /// Decodes the wire byte.
    pub fn from_u8(byte: u8) -> Option<CancelReason> {
        match byte {
            1 => Some(CancelReason::Requested),
            2 => Some(CancelReason::UnfilledImmediate),
            3 => Some(CancelReason::FillOrKillUnfillable),
            4 => Some(CancelReason::SelfTradePrevention),
            _ => None,
        }
    }
}

impl fmt::Display for CancelReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CancelReason::Requested => "cancelled at the owner's request",
            CancelReason::UnfilledImmediate => "the unfilled remainder of an immediate order was cancelled",
            CancelReason::FillOrKillUnfillable => "the fill-or-kill order could not fill completely, so nothing traded",
            CancelReason::SelfTradePrevention => "cancelled to prevent a trade between orders of the same owner",
        })
    }
}
