//! The messages that will cross process boundaries over salias: [`OrderMsg`] from gateways
//! into the engine (an `OrderedMpsc`), [`EventMsg`] from the engine to market-data
//! subscribers (a `FifoFanout`).
//!
//! Both are `#[repr(C)]`, 64 bytes, integers only: a peer can send any bytes, so enums
//! travel as `u8` tags that the receiver decodes and may refuse.

use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::event::Event;
use crate::types::{CancelReason, OrderId, OrderType, OwnerId, Price, Qty, RejectReason, Side, SymbolId};

/// What an [`OrderMsg`] asks for.
pub mod order_kind {
    /// A new order.
    pub const ADD: u8 = 1;
    /// Cancel a resting order by id.
    pub const CANCEL: u8 = 2;
    /// Change a resting order's price and/or quantity.
    pub const MODIFY: u8 = 3;
}

/// A request from a gateway.
///
/// # Layout
///
/// 64 bytes, no padding. `side` and `order_type` are used by `ADD` only, `symbol` by `ADD`
/// only (cancel and modify find the order by id). For `MODIFY`, `price` and `qty` are the
/// new price and the new open quantity.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct OrderMsg {
    /// [`order_kind`]: add, cancel or modify.
    pub kind: u8,
    /// [`Side`] as a byte.
    pub side: u8,
    /// [`OrderType`] as a byte.
    pub order_type: u8,
    /// Always zero; keeps the layout free of padding.
    pub reserved: u8,
    /// The book.
    pub symbol: SymbolId,
    /// The order the request is about.
    pub order_id: OrderId,
    /// Limit price in ticks (ignored for market orders).
    pub price: Price,
    /// Quantity in lots.
    pub qty: Qty,
    /// The account, for self-trade prevention.
    pub owner: OwnerId,
    /// When the gateway planned to send the request (`CLOCK_MONOTONIC` nanoseconds), for
    /// open-loop latency: queueing in the gateway counts from here.
    pub gateway_ts_ns: u64,
    /// Which gateway sent it, so responses can be routed back.
    pub gateway_id: u32,
    /// Nanoseconds from `gateway_ts_ns` to the moment the gateway really offered the
    /// request to the channel (its queueing time), saturating at `u32::MAX` (4.3 s).
    pub send_delay_ns: u32,
    /// The gateway's own sequence number for the request.
    pub client_seq: u64,
}

const _: () = assert!(size_of::<OrderMsg>() == 64);

impl OrderMsg {
    const BLANK: OrderMsg = OrderMsg {
        kind: 0,
        side: 0,
        order_type: 0,
        reserved: 0,
        symbol: 0,
        order_id: 0,
        price: 0,
        qty: 0,
        owner: 0,
        gateway_ts_ns: 0,
        gateway_id: 0,
        send_delay_ns: 0,
        client_seq: 0,
    };

    /// The message's bytes in little-endian field order, independent of the host.
    pub fn to_bytes(&self) -> [u8; 64] {
        words_to_bytes(&self.to_words())
    }

    /// The message as the eight little-endian words of [`to_bytes`](Self::to_bytes),
    /// without going through bytes.
    pub fn to_words(&self) -> [u64; 8] {
        [
            low_bytes(self.kind, self.side, self.order_type, self.reserved, self.symbol),
            self.order_id,
            self.price as u64,
            self.qty,
            self.owner,
            self.gateway_ts_ns,
            u64::from(self.gateway_id) | u64::from(self.send_delay_ns) << 32,
            self.client_seq,
        ]
    }

    /// The message [`to_bytes`](Self::to_bytes) wrote. Any 64 bytes are a message; the
    /// engine decides whether it makes sense.
    pub fn from_bytes(bytes: &[u8; 64]) -> OrderMsg {
        let (words, _) = bytes.as_chunks::<8>();
        let u64_at = |word: usize| u64::from_le_bytes(words[word]);
        let [a, b, c, d, e, f, g, h] = words[6];
        OrderMsg {
            kind: bytes[0],
            side: bytes[1],
            order_type: bytes[2],
            reserved: bytes[3],
            symbol: u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
            order_id: u64_at(1),
            price: i64::from_le_bytes(words[2]),
            qty: u64_at(3),
            owner: u64_at(4),
            gateway_ts_ns: u64_at(5),
            gateway_id: u32::from_le_bytes([a, b, c, d]),
            send_delay_ns: u32::from_le_bytes([e, f, g, h]),
            client_seq: u64_at(7),
        }
    }

    /// The request without its timestamps: what determinism is defined over, since the
    /// times differ from run to run but the engine never reads them.
    pub fn untimed(&self) -> OrderMsg {
        OrderMsg {
            gateway_ts_ns: 0,
            send_delay_ns: 0,
            ..*self
        }
    }

    /// The request as gateway `gateway` sends it: ids and owners moved into the gateway's
    /// own range, so that gateways running the same generator never collide (an id keeps
    /// its low 40 bits; bits 40 and up name the gateway), and `gateway_id` set.
    pub fn for_gateway(&self, gateway: u32) -> OrderMsg {
        let prefix = (u64::from(gateway) + 1) << 40;
        OrderMsg {
            order_id: self.order_id ^ prefix,
            owner: if self.kind == order_kind::ADD {
                self.owner ^ prefix
            } else {
                self.owner
            },
            gateway_id: gateway,
            ..*self
        }
    }

    /// A new order.
    pub fn add(
        order_id: OrderId,
        symbol: SymbolId,
        side: Side,
        order_type: OrderType,
        price: Price,
        qty: Qty,
        owner: OwnerId,
    ) -> OrderMsg {
        OrderMsg {
            kind: order_kind::ADD,
            side: side as u8,
            order_type: order_type as u8,
            symbol,
            order_id,
            price,
            qty,
            owner,
            ..OrderMsg::BLANK
        }
    }

    /// Cancel a resting order.
    pub fn cancel(order_id: OrderId) -> OrderMsg {
        OrderMsg {
            kind: order_kind::CANCEL,
            order_id,
            ..OrderMsg::BLANK
        }
    }

    /// Give a resting order a new price and open quantity.
    pub fn modify(order_id: OrderId, price: Price, qty: Qty) -> OrderMsg {
        OrderMsg {
            kind: order_kind::MODIFY,
            order_id,
            price,
            qty,
            ..OrderMsg::BLANK
        }
    }
}

/// A count and a hash of a stream of 64-byte messages, for checking that two processes saw
/// the same stream. Word-wise (eight multiply-rotate steps per message) so that the engine
/// and the subscribers can afford it on every message; it detects loss, reordering and
/// changed bytes, it is not a cryptographic hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireHash {
    /// Messages folded in.
    pub count: u64,
    /// The running hash.
    pub hash: u64,
}

impl Default for WireHash {
    fn default() -> WireHash {
        WireHash {
            count: 0,
            hash: 0xcbf2_9ce4_8422_2325,
        }
    }
}

impl WireHash {
    /// Folds in one message's bytes.
    #[inline]
    pub fn add(&mut self, bytes: &[u8; 64]) {
        let mut words = [0_u64; 8];
        for (word, chunk) in words.iter_mut().zip(bytes.as_chunks::<8>().0) {
            *word = u64::from_le_bytes(*chunk);
        }
        self.add_words(&words);
    }

    /// Folds in one message given as its eight little-endian words (`to_words`): the same
    /// result as [`add`](Self::add) of its bytes, without building them.
    #[inline]
    pub fn add_words(&mut self, words: &[u64; 8]) {
        for &word in words {
            // Odd multiplier: a bijection, so any single changed word changes the result;
            // the rotation carries high bits back down to the low ones.
            self.hash = (self.hash ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
        }
        self.count += 1;
    }
}

/// The first word of both messages: four tag bytes, then a 32-bit symbol.
fn low_bytes(a: u8, b: u8, c: u8, d: u8, symbol: u32) -> u64 {
    u64::from(u32::from_le_bytes([a, b, c, d])) | u64::from(symbol) << 32
}

fn words_to_bytes(words: &[u64; 8]) -> [u8; 64] {
    let mut bytes = [0_u8; 64];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    bytes
}

/// What an [`EventMsg`] reports; one per [`Event`] variant.
pub mod event_kind {
    /// [`Event::Accepted`](crate::Event::Accepted).
    pub const ACCEPTED: u8 = 1;
    /// [`Event::Rejected`](crate::Event::Rejected).
    pub const REJECTED: u8 = 2;
    /// [`Event::Trade`](crate::Event::Trade).
    pub const TRADE: u8 = 3;
    /// [`Event::Cancelled`](crate::Event::Cancelled).
    pub const CANCELLED: u8 = 4;
    /// [`Event::Modified`](crate::Event::Modified).
    pub const MODIFIED: u8 = 5;
    /// [`Event::BookUpdate`](crate::Event::BookUpdate).
    pub const BOOK_UPDATE: u8 = 6;
}

/// An [`Event`] on the wire.
///
/// # Layout
///
/// 64 bytes, no padding. Field use by kind:
///
/// | kind | `side` | `reason` | `flag` | `order_id` | `other_order_id` | `price` | `qty` | `count` |
/// |---|---|---|---|---|---|---|---|---|
/// | accepted | | | | order | | | | |
/// | rejected | | [`RejectReason`] | | order | | | | |
/// | trade | aggressor | | | taker | maker | price | traded | |
/// | cancelled | | [`CancelReason`] | | order | | | remaining | |
/// | modified | | | priority kept (0/1) | order | | new price | new qty | |
/// | book update | level side | | | | | level price | level qty | orders at level |
///
/// `engine_seq`, `gateway_ts_ns` and `send_delay_ns` are left zero by [`From<Event>`] and
/// filled in by [`Engine::apply_stamped`](crate::Engine::apply_stamped) (the causing
/// request's input position, for order checks and replay; its planned and actual send
/// times, for end-to-end latency).
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct EventMsg {
    /// [`event_kind`].
    pub kind: u8,
    /// A [`Side`] byte, where the kind has one.
    pub side: u8,
    /// A [`RejectReason`] or [`CancelReason`] byte, where the kind has one.
    pub reason: u8,
    /// Kind-specific flag (see the table).
    pub flag: u8,
    /// The book (zero for rejections, which may name no valid book).
    pub symbol: SymbolId,
    /// The order the event is about (the taker for trades).
    pub order_id: OrderId,
    /// The maker for trades.
    pub other_order_id: OrderId,
    /// A price in ticks.
    pub price: Price,
    /// A quantity.
    pub qty: Qty,
    /// Orders at the level, for book updates.
    pub count: u32,
    /// The causing request's `send_delay_ns`, set by the pipeline.
    pub send_delay_ns: u32,
    /// The position of the causing request in the engine's input (0 for the first
    /// request), set by the pipeline; every event of one request carries the same number.
    pub engine_seq: u64,
    /// The causing request's `gateway_ts_ns` (its planned send time), set by the pipeline.
    pub gateway_ts_ns: u64,
}

const _: () = assert!(size_of::<EventMsg>() == 64);

/// An [`EventMsg`] whose bytes do not decode to an [`Event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UndecodableEvent {
    /// The kind byte that was received.
    pub kind: u8,
}

impl std::fmt::Display for UndecodableEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "an event message of kind {} carries a kind, side or reason byte this version does not know",
            self.kind
        )
    }
}

impl std::error::Error for UndecodableEvent {}

impl EventMsg {
    const BLANK: EventMsg = EventMsg {
        kind: 0,
        side: 0,
        reason: 0,
        flag: 0,
        symbol: 0,
        order_id: 0,
        other_order_id: 0,
        price: 0,
        qty: 0,
        count: 0,
        send_delay_ns: 0,
        engine_seq: 0,
        gateway_ts_ns: 0,
    };

    /// The message's bytes in little-endian field order, independent of the host.
    pub fn to_bytes(&self) -> [u8; 64] {
        words_to_bytes(&self.to_words())
    }

    /// The message as the eight little-endian words of [`to_bytes`](Self::to_bytes),
    /// without going through bytes.
    pub fn to_words(&self) -> [u64; 8] {
        [
            low_bytes(self.kind, self.side, self.reason, self.flag, self.symbol),
            self.order_id,
            self.other_order_id,
            self.price as u64,
            self.qty,
            u64::from(self.count) | u64::from(self.send_delay_ns) << 32,
            self.engine_seq,
            self.gateway_ts_ns,
        ]
    }

    /// The event without its timestamps (`engine_seq` stays: it is determined by the input).
    pub fn untimed(&self) -> EventMsg {
        EventMsg {
            gateway_ts_ns: 0,
            send_delay_ns: 0,
            ..*self
        }
    }

    /// Decodes the event; fails on an unknown kind, side or reason byte.
    pub fn decode(&self) -> Result<Event, UndecodableEvent> {
        let bad = UndecodableEvent { kind: self.kind };
        let side = || Side::from_u8(self.side).ok_or(bad);
        Ok(match self.kind {
            event_kind::ACCEPTED => Event::Accepted {
                order_id: self.order_id,
                symbol: self.symbol,
            },
            event_kind::REJECTED => Event::Rejected {
                order_id: self.order_id,
                reason: RejectReason::from_u8(self.reason).ok_or(bad)?,
            },
            event_kind::TRADE => Event::Trade {
                symbol: self.symbol,
                maker_order_id: self.other_order_id,
                taker_order_id: self.order_id,
                price: self.price,
                qty: self.qty,
                aggressor: side()?,
            },
            event_kind::CANCELLED => Event::Cancelled {
                order_id: self.order_id,
                symbol: self.symbol,
                remaining: self.qty,
                reason: CancelReason::from_u8(self.reason).ok_or(bad)?,
            },
            event_kind::MODIFIED => Event::Modified {
                order_id: self.order_id,
                symbol: self.symbol,
                price: self.price,
                qty: self.qty,
                priority_kept: self.flag != 0,
            },
            event_kind::BOOK_UPDATE => Event::BookUpdate {
                symbol: self.symbol,
                side: side()?,
                price: self.price,
                total_qty: self.qty,
                order_count: self.count,
            },
            _ => return Err(bad),
        })
    }
}

impl From<Event> for EventMsg {
    fn from(event: Event) -> EventMsg {
        match event {
            Event::Accepted { order_id, symbol } => EventMsg {
                kind: event_kind::ACCEPTED,
                symbol,
                order_id,
                ..EventMsg::BLANK
            },
            Event::Rejected { order_id, reason } => EventMsg {
                kind: event_kind::REJECTED,
                reason: reason as u8,
                order_id,
                ..EventMsg::BLANK
            },
            Event::Trade {
                symbol,
                maker_order_id,
                taker_order_id,
                price,
                qty,
                aggressor,
            } => EventMsg {
                kind: event_kind::TRADE,
                side: aggressor as u8,
                symbol,
                order_id: taker_order_id,
                other_order_id: maker_order_id,
                price,
                qty,
                ..EventMsg::BLANK
            },
            Event::Cancelled {
                order_id,
                symbol,
                remaining,
                reason,
            } => EventMsg {
                kind: event_kind::CANCELLED,
                reason: reason as u8,
                symbol,
                order_id,
                qty: remaining,
                ..EventMsg::BLANK
            },
            Event::Modified {
                order_id,
                symbol,
                price,
                qty,
                priority_kept,
            } => EventMsg {
                kind: event_kind::MODIFIED,
                flag: u8::from(priority_kept),
                symbol,
                order_id,
                price,
                qty,
                ..EventMsg::BLANK
            },
            Event::BookUpdate {
                symbol,
                side,
                price,
                total_qty,
                order_count,
            } => EventMsg {
                kind: event_kind::BOOK_UPDATE,
                side: side as u8,
                symbol,
                price,
                qty: total_qty,
                count: order_count,
                ..EventMsg::BLANK
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_survives_the_wire() {
        let events = [
            Event::Accepted { order_id: 1, symbol: 2 },
            Event::Rejected {
                order_id: 3,
                reason: RejectReason::PostOnlyWouldCross,
            },
            Event::Trade {
                symbol: 1,
                maker_order_id: 4,
                taker_order_id: 5,
                price: -7,
                qty: 9,
                aggressor: Side::Sell,
            },
            Event::Cancelled {
                order_id: 6,
                symbol: 0,
                remaining: 11,
                reason: CancelReason::SelfTradePrevention,
            },
            Event::Modified {
                order_id: 7,
                symbol: 3,
                price: 100,
                qty: 12,
                priority_kept: true,
            },
            Event::BookUpdate {
                symbol: 2,
                side: Side::Buy,
                price: 99,
                total_qty: 0,
                order_count: 0,
            },
        ];
        for event in events {
            assert_eq!(EventMsg::from(event).decode(), Ok(event));
        }
    }

    #[test]
    fn unknown_bytes_are_refused_not_trusted() {
        let unknown_kind = EventMsg {
            kind: 77,
            ..EventMsg::BLANK
        };
        assert_eq!(unknown_kind.decode(), Err(UndecodableEvent { kind: 77 }));
        let bad_side = EventMsg {
            kind: event_kind::TRADE,
            side: 9,
            ..EventMsg::BLANK
        };
        assert!(bad_side.decode().is_err());
        let bad_reason = EventMsg {
            kind: event_kind::REJECTED,
            reason: 0,
            ..EventMsg::BLANK
        };
        assert!(bad_reason.decode().is_err());
    }

    #[test]
    fn order_bytes_round_trip_and_untimed_clears_only_the_times() {
        let order = OrderMsg {
            gateway_ts_ns: 123_456_789,
            gateway_id: 3,
            send_delay_ns: 0xdead_beef,
            client_seq: u64::MAX - 1,
            ..OrderMsg::add(42, 7, Side::Sell, OrderType::FillOrKill, -5, 9, 11)
        };
        let bytes = order.to_bytes();
        assert_eq!(OrderMsg::from_bytes(&bytes), order);
        assert_eq!(bytes[52..56], 0xdead_beef_u32.to_le_bytes());
        assert_eq!(std::mem::offset_of!(OrderMsg, send_delay_ns), 52);
        let untimed = order.untimed();
        assert_eq!((untimed.gateway_ts_ns, untimed.send_delay_ns), (0, 0));
        assert_eq!(
            OrderMsg {
                gateway_ts_ns: 123_456_789,
                send_delay_ns: 0xdead_beef,
                ..untimed
            },
            order
        );
    }

    #[test]
    fn gateways_get_disjoint_ids_and_owners() {
        let add = OrderMsg::add(5, 0, Side::Buy, OrderType::Limit, 100, 1, 2);
        let (a, b) = (add.for_gateway(0), add.for_gateway(1));
        assert_ne!(a.order_id, b.order_id);
        assert_ne!(a.owner, b.owner);
        assert_eq!(a.order_id & ((1 << 40) - 1), 5);
        assert_eq!((a.gateway_id, b.gateway_id), (0, 1));
        // A cancel names the same id its add got.
        assert_eq!(OrderMsg::cancel(5).for_gateway(1).order_id, b.order_id);
    }

    #[test]
    fn wire_hash_sees_order_and_every_word() {
        let one = EventMsg {
            kind: 1,
            ..EventMsg::BLANK
        }
        .to_bytes();
        let two = EventMsg {
            kind: 2,
            ..EventMsg::BLANK
        }
        .to_bytes();
        let hash = |messages: &[[u8; 64]]| {
            let mut h = WireHash::default();
            messages.iter().for_each(|m| h.add(m));
            h
        };
        assert_ne!(hash(&[one, two]), hash(&[two, one]));
        assert_eq!(hash(&[one, two]), hash(&[one, two]));
        for at in 0..64 {
            let mut changed = one;
            changed[at] ^= 0x80;
            assert_ne!(hash(&[changed]).hash, hash(&[one]).hash, "byte {at}");
        }
    }

    #[test]
    fn hashing_words_equals_hashing_bytes() {
        let order = OrderMsg {
            side: 2,
            reserved: 7,
            price: -5,
            gateway_id: 9,
            send_delay_ns: u32::MAX,
            client_seq: 11,
            ..OrderMsg::add(3, 4, Side::Sell, OrderType::PostOnly, 100, 5, 6)
        };
        let event = EventMsg {
            flag: 1,
            other_order_id: 8,
            count: 3,
            send_delay_ns: 4,
            engine_seq: 12,
            ..EventMsg::from(Event::Accepted { order_id: 1, symbol: 2 })
        };
        let (mut by_bytes, mut by_words) = (WireHash::default(), WireHash::default());
        by_bytes.add(&order.to_bytes());
        by_bytes.add(&event.to_bytes());
        by_words.add_words(&order.to_words());
        by_words.add_words(&event.to_words());
        assert_eq!(by_bytes, by_words);
        assert_eq!(OrderMsg::from_bytes(&order.to_bytes()), order);
    }

    #[test]
    fn to_bytes_places_fields_at_their_offsets() {
        let message = EventMsg {
            kind: 3,
            symbol: 0x0102_0304,
            qty: 0x1122_3344_5566_7788,
            gateway_ts_ns: u64::MAX,
            ..EventMsg::BLANK
        };
        let bytes = message.to_bytes();
        assert_eq!(bytes[0], 3);
        assert_eq!(bytes[4..8], [4, 3, 2, 1]);
        assert_eq!(bytes[32..40], 0x1122_3344_5566_7788_u64.to_le_bytes());
        assert_eq!(bytes[56..64], [0xff; 8]);
        assert_eq!(
            [
                std::mem::offset_of!(EventMsg, symbol),
                std::mem::offset_of!(EventMsg, qty),
                std::mem::offset_of!(EventMsg, gateway_ts_ns)
            ],
            [4, 32, 56]
        );
    }
}
