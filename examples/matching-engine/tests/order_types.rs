//! Each order type, each edge of matching, cancel and modify, and every rejection, by
//! example, with the exact events expected.

use OrderType::{FillOrKill, ImmediateOrCancel, Limit, Market, PostOnly};
use Side::{Buy, Sell};
use matching_engine::{
    CancelReason, ConfigError, Engine, EngineConfig, Event, EventMsg, LevelSnapshot, NewOrder, OrderId, OrderMsg,
    OrderType, OwnerId, Price, Qty, RejectReason, SelfTradePrevention, Side, SymbolConfig, UnknownSymbol,
};

const SYMBOL: u32 = 0;

struct Harness {
    engine: Engine,
    events: Vec<Event>,
}

fn harness(policy: SelfTradePrevention) -> Harness {
    harness_with_pool(policy, 64)
}

fn harness_with_pool(policy: SelfTradePrevention, pool: u32) -> Harness {
    Harness {
        engine: Engine::new(&EngineConfig {
            symbols: vec![
                SymbolConfig {
                    min_price: 90,
                    max_price: 110,
                },
                SymbolConfig {
                    min_price: 0,
                    max_price: 1_000,
                },
            ],
            max_resting_orders: pool,
            self_trade_prevention: policy,
        })
        .unwrap(),
        events: Vec::with_capacity(256),
    }
}

impl Harness {
    fn add(
        &mut self,
        id: OrderId,
        side: Side,
        order_type: OrderType,
        price: Price,
        qty: Qty,
        owner: OwnerId,
    ) -> Vec<Event> {
        self.add_to(SYMBOL, id, side, order_type, price, qty, owner)
    }

    #[allow(clippy::too_many_arguments)]
    fn add_to(
        &mut self,
        symbol: u32,
        id: OrderId,
        side: Side,
        order_type: OrderType,
        price: Price,
        qty: Qty,
        owner: OwnerId,
    ) -> Vec<Event> {
        self.events.clear();
        let result = self.engine.add(
            NewOrder {
                id,
                symbol,
                side,
                order_type,
                price,
                qty,
                owner,
            },
            &mut self.events,
        );
        self.check_result(result)
    }

    fn cancel(&mut self, id: OrderId) -> Vec<Event> {
        self.events.clear();
        let result = self.engine.cancel(id, &mut self.events);
        self.check_result(result)
    }

    fn modify(&mut self, id: OrderId, price: Price, qty: Qty) -> Vec<Event> {
        self.events.clear();
        let result = self.engine.modify(id, price, qty, &mut self.events);
        self.check_result(result)
    }

    fn apply(&mut self, request: OrderMsg) -> Vec<Event> {
        self.events.clear();
        let result = self.engine.apply(&request, &mut self.events);
        self.check_result(result)
    }

    /// The returned result and the reported events must tell the same story.
    fn check_result(&self, result: Result<(), RejectReason>) -> Vec<Event> {
        match result {
            Ok(()) => assert!(!self.events.iter().any(|e| matches!(e, Event::Rejected { .. }))),
            Err(reason) => assert_eq!(
                self.events,
                [Event::Rejected {
                    order_id: match self.events[0] {
                        Event::Rejected { order_id, .. } => order_id,
                        other => panic!("expected a rejection, got {other:?}"),
                    },
                    reason
                }]
            ),
        }
        self.events.clone()
    }

    /// (id, price, remaining) of one side, in priority order.
    fn side(&self, side: Side) -> Vec<(OrderId, Price, Qty)> {
        self.engine
            .orders(SYMBOL, side)
            .unwrap()
            .map(|order| (order.id, order.price, order.remaining))
            .collect()
    }
}

fn trades(events: &[Event]) -> Vec<(OrderId, OrderId, Price, Qty)> {
    events
        .iter()
        .filter_map(|event| match *event {
            Event::Trade {
                maker_order_id,
                taker_order_id,
                price,
                qty,
                ..
            } => Some((maker_order_id, taker_order_id, price, qty)),
            _ => None,
        })
        .collect()
}

fn accepted(order_id: OrderId) -> Event {
    Event::Accepted {
        order_id,
        symbol: SYMBOL,
    }
}

fn rejected(order_id: OrderId, reason: RejectReason) -> Event {
    Event::Rejected { order_id, reason }
}

fn cancelled(order_id: OrderId, remaining: Qty, reason: CancelReason) -> Event {
    Event::Cancelled {
        order_id,
        symbol: SYMBOL,
        remaining,
        reason,
    }
}

fn level(side: Side, price: Price, total_qty: Qty, order_count: u32) -> Event {
    Event::BookUpdate {
        symbol: SYMBOL,
        side,
        price,
        total_qty,
        order_count,
    }
}

fn trade(maker: OrderId, taker: OrderId, price: Price, qty: Qty, aggressor: Side) -> Event {
    Event::Trade {
        symbol: SYMBOL,
        maker_order_id: maker,
        taker_order_id: taker,
        price,
        qty,
        aggressor,
    }
}

fn modified(order_id: OrderId, price: Price, qty: Qty, priority_kept: bool) -> Event {
    Event::Modified {
        order_id,
        symbol: SYMBOL,
        price,
        qty,
        priority_kept,
    }
}

// ---- limit orders ----

#[test]
fn a_limit_order_that_does_not_cross_rests() {
    let mut h = harness(SelfTradePrevention::None);
    assert_eq!(h.add(1, Buy, Limit, 99, 10, 1), [accepted(1), level(Buy, 99, 10, 1)]);
    assert_eq!(h.side(Buy), [(1, 99, 10)]);
    assert_eq!(h.engine.order(1).map(|o| (o.side, o.remaining)), Some((Buy, 10)));
}

#[test]
fn full_fill_removes_both_orders() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 10, 1);
    assert_eq!(
        h.add(2, Buy, Limit, 100, 10, 2),
        [accepted(2), trade(1, 2, 100, 10, Buy), level(Sell, 100, 0, 0)]
    );
    assert!(h.side(Buy).is_empty() && h.side(Sell).is_empty());
    assert_eq!(h.engine.resting_orders(), 0);
    assert!(h.engine.order(1).is_none());
}

#[test]
fn partial_fill_of_the_taker_rests_its_remainder() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 4, 1);
    assert_eq!(
        h.add(2, Buy, Limit, 101, 10, 2),
        [
            accepted(2),
            trade(1, 2, 100, 4, Buy),
            level(Sell, 100, 0, 0),
            level(Buy, 101, 6, 1)
        ]
    );
    assert_eq!(h.side(Buy), [(2, 101, 6)]);
}

#[test]
fn partial_fill_of_the_maker_keeps_it_first_in_line() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 10, 1);
    h.add(2, Sell, Limit, 100, 5, 1);
    assert_eq!(
        h.add(3, Buy, Limit, 100, 4, 2),
        [accepted(3), trade(1, 3, 100, 4, Buy), level(Sell, 100, 11, 2)]
    );
    assert_eq!(h.side(Sell), [(1, 100, 6), (2, 100, 5)]);
}

#[test]
fn a_sweep_takes_best_price_first_and_earliest_first_at_each_price() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 102, 5, 1);
    h.add(2, Sell, Limit, 100, 3, 1);
    h.add(3, Sell, Limit, 101, 4, 1);
    h.add(4, Sell, Limit, 100, 2, 1);
    let events = h.add(5, Buy, Limit, 102, 12, 2);
    assert_eq!(
        trades(&events),
        [(2, 5, 100, 3), (4, 5, 100, 2), (3, 5, 101, 4), (1, 5, 102, 3)]
    );
    assert_eq!(
        events,
        [
            accepted(5),
            trade(2, 5, 100, 3, Buy),
            trade(4, 5, 100, 2, Buy),
            level(Sell, 100, 0, 0),
            trade(3, 5, 101, 4, Buy),
            level(Sell, 101, 0, 0),
            trade(1, 5, 102, 3, Buy),
            level(Sell, 102, 2, 1),
        ]
    );
    assert_eq!(h.side(Sell), [(1, 102, 2)]);
}

#[test]
fn a_sell_sweep_walks_bids_downwards_and_stops_at_its_limit() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Buy, Limit, 98, 5, 1);
    h.add(2, Buy, Limit, 100, 5, 1);
    h.add(3, Buy, Limit, 99, 5, 1);
    let events = h.add(4, Sell, Limit, 99, 20, 2);
    assert_eq!(trades(&events), [(2, 4, 100, 5), (3, 4, 99, 5)]);
    assert_eq!(h.side(Sell), [(4, 99, 10)]);
    assert_eq!(h.side(Buy), [(1, 98, 5)]);
}

#[test]
fn an_order_reaches_levels_beyond_a_64_level_bitset_word() {
    let mut h = harness(SelfTradePrevention::None);
    h.add_to(1, 1, Sell, Limit, 900, 5, 1);
    h.add_to(1, 2, Sell, Limit, 10, 5, 1);
    let events = h.add_to(1, 3, Buy, Market, 0, 10, 2);
    assert_eq!(trades(&events), [(2, 3, 10, 5), (1, 3, 900, 5)]);
}

// ---- market, IOC, FOK, post-only ----

#[test]
fn a_market_order_on_an_empty_book_is_cancelled_unfilled() {
    let mut h = harness(SelfTradePrevention::None);
    assert_eq!(
        h.add(1, Buy, Market, 0, 10, 1),
        [accepted(1), cancelled(1, 10, CancelReason::UnfilledImmediate)]
    );
    assert_eq!(h.engine.resting_orders(), 0);
}

#[test]
fn a_market_order_ignores_its_price_and_cancels_what_it_cannot_fill() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Buy, Limit, 90, 3, 1);
    h.add(2, Buy, Limit, 110, 3, 1);
    // The price (far out of band) means nothing for a market order.
    let events = h.add(3, Sell, Market, -12_345, 10, 2);
    assert_eq!(trades(&events), [(2, 3, 110, 3), (1, 3, 90, 3)]);
    assert_eq!(events.last(), Some(&cancelled(3, 4, CancelReason::UnfilledImmediate)));
    assert!(h.side(Sell).is_empty());
}

#[test]
fn an_ioc_remainder_is_cancelled_not_rested() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 4, 1);
    h.add(2, Sell, Limit, 102, 4, 1);
    assert_eq!(
        h.add(3, Buy, ImmediateOrCancel, 101, 10, 2),
        [
            accepted(3),
            trade(1, 3, 100, 4, Buy),
            level(Sell, 100, 0, 0),
            cancelled(3, 6, CancelReason::UnfilledImmediate)
        ]
    );
    assert!(h.side(Buy).is_empty());
    assert_eq!(h.side(Sell), [(2, 102, 4)]);
}

#[test]
fn an_ioc_that_fills_completely_reports_no_cancel() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 10, 1);
    let events = h.add(2, Buy, ImmediateOrCancel, 100, 10, 2);
    assert!(!events.iter().any(|e| matches!(e, Event::Cancelled { .. })));
}

#[test]
fn a_fill_or_kill_that_cannot_fill_leaves_the_book_untouched() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 4, 1);
    h.add(2, Sell, Limit, 101, 4, 1);
    h.add(3, Sell, Limit, 103, 50, 1);
    let before = (h.side(Buy), h.side(Sell), h.engine.best_bid_offer(SYMBOL).unwrap());
    // 8 lots within its limit of 102, it needs 9.
    assert_eq!(
        h.add(4, Buy, FillOrKill, 102, 9, 2),
        [accepted(4), cancelled(4, 9, CancelReason::FillOrKillUnfillable)]
    );
    assert_eq!(
        (h.side(Buy), h.side(Sell), h.engine.best_bid_offer(SYMBOL).unwrap()),
        before
    );
}

#[test]
fn a_fill_or_kill_that_can_fill_sweeps_levels() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 4, 1);
    h.add(2, Sell, Limit, 101, 4, 1);
    let events = h.add(3, Buy, FillOrKill, 101, 8, 2);
    assert_eq!(trades(&events), [(1, 3, 100, 4), (2, 3, 101, 4)]);
    assert!(h.side(Sell).is_empty() && h.side(Buy).is_empty());
}

#[test]
fn a_fill_or_kill_does_not_count_liquidity_self_trade_prevention_would_remove() {
    for policy in [SelfTradePrevention::CancelResting, SelfTradePrevention::CancelIncoming] {
        let mut h = harness(policy);
        h.add(1, Sell, Limit, 100, 5, 7); // the taker's own order
        h.add(2, Sell, Limit, 100, 5, 1);
        let before = h.side(Sell);
        assert_eq!(
            h.add(3, Buy, FillOrKill, 100, 10, 7),
            [accepted(3), cancelled(3, 10, CancelReason::FillOrKillUnfillable)],
            "{policy:?}"
        );
        assert_eq!(
            h.side(Sell),
            before,
            "{policy:?}: a killed FOK must not cancel anything"
        );
    }
}

#[test]
fn a_post_only_order_that_would_cross_is_rejected() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 5, 1);
    assert_eq!(
        h.add(2, Buy, PostOnly, 100, 5, 2),
        [rejected(2, RejectReason::PostOnlyWouldCross)]
    );
    assert_eq!(h.side(Sell), [(1, 100, 5)]);
    assert!(h.side(Buy).is_empty());
}

#[test]
fn a_post_only_order_that_does_not_cross_rests() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 5, 1);
    assert_eq!(h.add(2, Buy, PostOnly, 99, 5, 2), [accepted(2), level(Buy, 99, 5, 1)]);
}

// ---- self-trade prevention ----

#[test]
fn cancel_resting_removes_own_orders_and_trades_with_the_rest() {
    let mut h = harness(SelfTradePrevention::CancelResting);
    h.add(1, Sell, Limit, 100, 5, 7);
    h.add(2, Sell, Limit, 100, 5, 1);
    assert_eq!(
        h.add(3, Buy, Limit, 100, 5, 7),
        [
            accepted(3),
            cancelled(1, 5, CancelReason::SelfTradePrevention),
            trade(2, 3, 100, 5, Buy),
            level(Sell, 100, 0, 0),
        ]
    );
    assert!(h.engine.order(1).is_none());
}

#[test]
fn cancel_incoming_stops_at_the_first_own_order() {
    let mut h = harness(SelfTradePrevention::CancelIncoming);
    h.add(1, Sell, Limit, 100, 3, 1);
    h.add(2, Sell, Limit, 100, 5, 7);
    assert_eq!(
        h.add(3, Buy, Limit, 100, 10, 7),
        [
            accepted(3),
            trade(1, 3, 100, 3, Buy),
            level(Sell, 100, 5, 1),
            cancelled(3, 7, CancelReason::SelfTradePrevention),
        ]
    );
    assert_eq!(h.side(Sell), [(2, 100, 5)]);
    assert!(h.side(Buy).is_empty());
}

#[test]
fn cancel_incoming_against_an_untouched_level_reports_no_level_change() {
    let mut h = harness(SelfTradePrevention::CancelIncoming);
    h.add(1, Sell, Limit, 100, 5, 7);
    assert_eq!(
        h.add(2, Buy, Market, 0, 5, 7),
        [accepted(2), cancelled(2, 5, CancelReason::SelfTradePrevention)]
    );
    assert_eq!(h.side(Sell), [(1, 100, 5)]);
}

#[test]
fn without_prevention_an_owner_trades_with_itself() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 5, 7);
    assert_eq!(trades(&h.add(2, Buy, Limit, 100, 5, 7)), [(1, 2, 100, 5)]);
}

// ---- cancel ----

#[test]
fn cancel_removes_the_order_and_reports_the_level() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Buy, Limit, 99, 5, 1);
    h.add(2, Buy, Limit, 99, 7, 1);
    assert_eq!(
        h.cancel(1),
        [cancelled(1, 5, CancelReason::Requested), level(Buy, 99, 7, 1)]
    );
    assert_eq!(h.side(Buy), [(2, 99, 7)]);
}

#[test]
fn cancel_of_an_unknown_filled_or_already_cancelled_id_is_rejected() {
    let mut h = harness(SelfTradePrevention::None);
    assert_eq!(h.cancel(42), [rejected(42, RejectReason::UnknownOrderId)]);
    h.add(1, Buy, Limit, 99, 5, 1);
    h.cancel(1);
    assert_eq!(h.cancel(1), [rejected(1, RejectReason::UnknownOrderId)]);
    h.add(2, Buy, Limit, 99, 5, 1);
    h.add(3, Sell, Limit, 99, 5, 2);
    assert_eq!(h.cancel(2), [rejected(2, RejectReason::UnknownOrderId)]);
}

#[test]
fn cancelling_the_best_level_exposes_the_next_one() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Buy, Limit, 99, 5, 1);
    h.add(2, Buy, Limit, 95, 6, 1);
    h.cancel(1);
    let best = h.engine.best_bid_offer(SYMBOL).unwrap();
    assert_eq!(
        best.bid,
        Some(LevelSnapshot {
            price: 95,
            total_qty: 6,
            order_count: 1
        })
    );
    assert_eq!(best.ask, None);
}

// ---- modify ----

#[test]
fn a_quantity_decrease_keeps_priority() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 10, 1);
    h.add(2, Sell, Limit, 100, 10, 1);
    assert_eq!(
        h.modify(1, 100, 4),
        [modified(1, 100, 4, true), level(Sell, 100, 14, 2)]
    );
    assert_eq!(trades(&h.add(3, Buy, Limit, 100, 4, 2)), [(1, 3, 100, 4)]);
}

#[test]
fn an_unchanged_quantity_keeps_priority() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 10, 1);
    h.add(2, Sell, Limit, 100, 10, 1);
    assert_eq!(
        h.modify(1, 100, 10),
        [modified(1, 100, 10, true), level(Sell, 100, 20, 2)]
    );
    assert_eq!(h.side(Sell), [(1, 100, 10), (2, 100, 10)]);
}

#[test]
fn a_quantity_increase_loses_priority() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 10, 1);
    h.add(2, Sell, Limit, 100, 10, 1);
    assert_eq!(
        h.modify(1, 100, 12),
        [modified(1, 100, 12, false), level(Sell, 100, 22, 2)]
    );
    assert_eq!(h.side(Sell), [(2, 100, 10), (1, 100, 12)]);
    assert_eq!(trades(&h.add(3, Buy, Limit, 100, 4, 2)), [(2, 3, 100, 4)]);
}

#[test]
fn a_price_change_loses_priority_even_when_moving_back() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 10, 1);
    h.add(2, Sell, Limit, 100, 10, 1);
    assert_eq!(
        h.modify(1, 101, 10),
        [
            modified(1, 101, 10, false),
            level(Sell, 100, 10, 1),
            level(Sell, 101, 10, 1)
        ]
    );
    h.modify(1, 100, 10);
    assert_eq!(h.side(Sell), [(2, 100, 10), (1, 100, 10)]);
}

#[test]
fn a_modify_that_crosses_trades_like_an_incoming_limit_order() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Buy, Limit, 99, 10, 1);
    h.add(2, Sell, Limit, 101, 4, 2);
    assert_eq!(
        h.modify(1, 101, 10),
        [
            modified(1, 101, 10, false),
            level(Buy, 99, 0, 0),
            trade(2, 1, 101, 4, Buy),
            level(Sell, 101, 0, 0),
            level(Buy, 101, 6, 1),
        ]
    );
    assert_eq!(h.side(Buy), [(1, 101, 6)]);
}

#[test]
fn a_modify_that_fills_completely_frees_the_order() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Buy, Limit, 99, 4, 1);
    h.add(2, Sell, Limit, 101, 10, 2);
    h.modify(1, 101, 4);
    assert!(h.engine.order(1).is_none());
    assert_eq!(h.engine.resting_orders(), 1);
    assert_eq!(h.cancel(1), [rejected(1, RejectReason::UnknownOrderId)]);
}

#[test]
fn a_post_only_modify_that_would_cross_is_rejected_and_leaves_the_order() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Buy, PostOnly, 99, 10, 1);
    h.add(2, Sell, Limit, 101, 4, 2);
    assert_eq!(h.modify(1, 101, 10), [rejected(1, RejectReason::PostOnlyWouldCross)]);
    assert_eq!(h.side(Buy), [(1, 99, 10)]);
    assert_eq!(h.side(Sell), [(2, 101, 4)]);
}

#[test]
fn invalid_modifies_are_rejected_and_change_nothing() {
    let mut h = harness(SelfTradePrevention::None);
    assert_eq!(h.modify(9, 100, 1), [rejected(9, RejectReason::UnknownOrderId)]);
    h.add(1, Buy, Limit, 99, 10, 1);
    assert_eq!(h.modify(1, 99, 0), [rejected(1, RejectReason::ZeroQuantity)]);
    assert_eq!(h.modify(1, 99, u64::MAX), [rejected(1, RejectReason::QuantityTooLarge)]);
    assert_eq!(h.modify(1, 111, 5), [rejected(1, RejectReason::PriceOutOfBand)]);
    assert_eq!(h.modify(1, 89, 5), [rejected(1, RejectReason::PriceOutOfBand)]);
    assert_eq!(h.side(Buy), [(1, 99, 10)]);
}

// ---- invalid input ----

#[test]
fn every_invalid_add_is_a_typed_rejection() {
    let mut h = harness(SelfTradePrevention::None);
    assert_eq!(
        h.add_to(2, 1, Buy, Limit, 100, 1, 1),
        [rejected(1, RejectReason::UnknownSymbol)]
    );
    assert_eq!(
        h.add_to(u32::MAX, 1, Buy, Limit, 100, 1, 1),
        [rejected(1, RejectReason::UnknownSymbol)]
    );
    assert_eq!(
        h.add(1, Buy, Limit, 100, 0, 1),
        [rejected(1, RejectReason::ZeroQuantity)]
    );
    assert_eq!(
        h.add(1, Buy, Market, 0, 0, 1),
        [rejected(1, RejectReason::ZeroQuantity)]
    );
    for qty in [matching_engine::MAX_ORDER_QTY + 1, u64::MAX] {
        assert_eq!(
            h.add(1, Buy, Limit, 100, qty, 1),
            [rejected(1, RejectReason::QuantityTooLarge)]
        );
    }
    for price in [89, 111, i64::MIN, i64::MAX] {
        for order_type in [Limit, ImmediateOrCancel, FillOrKill, PostOnly] {
            assert_eq!(
                h.add(1, Sell, order_type, price, 1, 1),
                [rejected(1, RejectReason::PriceOutOfBand)],
                "{order_type:?} at {price}"
            );
        }
    }
    h.add(1, Buy, Limit, 90, 1, 1);
    assert_eq!(
        h.add(1, Buy, Limit, 95, 1, 1),
        [rejected(1, RejectReason::DuplicateOrderId)]
    );
    assert_eq!(
        h.add(1, Sell, Market, 0, 1, 1),
        [rejected(1, RejectReason::DuplicateOrderId)]
    );
    assert_eq!(h.side(Buy), [(1, 90, 1)]);
}

#[test]
fn an_id_may_be_reused_once_its_order_has_left_the_book() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Buy, Limit, 90, 1, 1);
    h.cancel(1);
    assert_eq!(h.add(1, Buy, Limit, 91, 1, 1), [accepted(1), level(Buy, 91, 1, 1)]);
}

#[test]
fn malformed_wire_requests_are_rejected() {
    let mut h = harness(SelfTradePrevention::None);
    let good = OrderMsg::add(1, SYMBOL, Buy, Limit, 100, 5, 1);
    for bad in [
        OrderMsg { kind: 0, ..good },
        OrderMsg { kind: 4, ..good },
        OrderMsg { side: 0, ..good },
        OrderMsg { side: 3, ..good },
        OrderMsg { order_type: 0, ..good },
        OrderMsg { order_type: 6, ..good },
    ] {
        assert_eq!(h.apply(bad), [rejected(1, RejectReason::Malformed)], "{bad:?}");
    }
    assert_eq!(h.apply(good), [accepted(1), level(Buy, 100, 5, 1)]);
    assert_eq!(
        h.apply(OrderMsg::modify(1, 100, 2)),
        [modified(1, 100, 2, true), level(Buy, 100, 2, 1)]
    );
    assert_eq!(
        h.apply(OrderMsg::cancel(1)),
        [cancelled(1, 2, CancelReason::Requested), level(Buy, 100, 0, 0)]
    );
}

#[test]
fn queries_on_an_unknown_symbol_are_typed_errors() {
    let h = harness(SelfTradePrevention::None);
    let mut out = [LevelSnapshot::default(); 4];
    assert_eq!(h.engine.best_bid_offer(5), Err(UnknownSymbol(5)));
    assert_eq!(h.engine.depth(5, Buy, &mut out), Err(UnknownSymbol(5)));
    assert!(h.engine.orders(5, Sell).is_err());
    assert_eq!(
        UnknownSymbol(5).to_string(),
        "symbol 5 is not configured in this engine"
    );
}

// ---- pool ----

#[test]
fn a_full_pool_rejects_resting_orders_but_still_serves_immediate_ones() {
    let mut h = harness_with_pool(SelfTradePrevention::None, 3);
    for id in 1..=3 {
        h.add(id, Sell, Limit, 100 + id as Price, 1, 1);
    }
    assert_eq!(
        h.add(10, Buy, Limit, 90, 1, 2),
        [rejected(10, RejectReason::PoolExhausted)]
    );
    assert_eq!(
        h.add(11, Buy, PostOnly, 90, 1, 2),
        [rejected(11, RejectReason::PoolExhausted)]
    );
    // A limit order that would fill completely is still refused: the check comes first,
    // so an order never trades and then finds nowhere to rest.
    assert_eq!(
        h.add(12, Buy, Limit, 101, 1, 2),
        [rejected(12, RejectReason::PoolExhausted)]
    );
    assert_eq!(trades(&h.add(13, Buy, ImmediateOrCancel, 101, 1, 2)), [(1, 13, 101, 1)]);
    assert_eq!(h.add(14, Buy, Limit, 90, 1, 2), [accepted(14), level(Buy, 90, 1, 1)]);
}

#[test]
fn the_pool_refills_through_many_more_orders_than_it_holds() {
    let pool = 16;
    let mut h = harness_with_pool(SelfTradePrevention::None, pool);
    let mut next_id = 0;
    for round in 0..10_000 {
        // Fill the pool completely, then empty it by cancels (even rounds) or fills (odd rounds).
        for _ in 0..pool {
            next_id += 1;
            let events = h.add(next_id, Sell, Limit, 95 + (next_id % 10) as Price, 2, 1);
            assert_eq!(events[0], accepted(next_id), "round {round}");
        }
        assert_eq!(
            h.add(u64::MAX, Sell, Limit, 100, 1, 1),
            [rejected(u64::MAX, RejectReason::PoolExhausted)]
        );
        if round % 2 == 0 {
            for id in next_id - u64::from(pool) + 1..=next_id {
                assert_eq!(h.cancel(id)[0], cancelled(id, 2, CancelReason::Requested));
            }
        } else {
            next_id += 1;
            let events = h.add(next_id, Buy, Market, 0, 2 * u64::from(pool), 2);
            assert_eq!(trades(&events).len(), pool as usize);
        }
        assert_eq!(h.engine.resting_orders(), 0, "round {round}");
    }
    assert!(next_id > 100 * u64::from(pool));
}

// ---- snapshots ----

#[test]
fn depth_writes_the_best_levels_into_the_callers_buffer() {
    let mut h = harness(SelfTradePrevention::None);
    for (id, price, qty) in [(1, 95, 1), (2, 97, 2), (3, 97, 3), (4, 93, 4), (5, 99, 5)] {
        h.add(id, Buy, Limit, price, qty, 1);
    }
    let snapshot = |price, total_qty, order_count| LevelSnapshot {
        price,
        total_qty,
        order_count,
    };
    let mut top2 = [LevelSnapshot::default(); 2];
    assert_eq!(h.engine.depth(SYMBOL, Buy, &mut top2), Ok(2));
    assert_eq!(top2, [snapshot(99, 5, 1), snapshot(97, 5, 2)]);
    let mut top10 = [LevelSnapshot::default(); 10];
    assert_eq!(h.engine.depth(SYMBOL, Buy, &mut top10), Ok(4));
    assert_eq!(
        top10[..4],
        [
            snapshot(99, 5, 1),
            snapshot(97, 5, 2),
            snapshot(95, 1, 1),
            snapshot(93, 4, 1)
        ]
    );
    assert_eq!(h.engine.depth(SYMBOL, Sell, &mut top10), Ok(0));
    assert_eq!(h.engine.depth(SYMBOL, Buy, &mut []), Ok(0));
}

#[test]
fn levels_at_both_ends_of_the_band_work() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Buy, Limit, 90, 1, 1);
    h.add(2, Sell, Limit, 110, 1, 1);
    let best = h.engine.best_bid_offer(SYMBOL).unwrap();
    assert_eq!((best.bid.unwrap().price, best.ask.unwrap().price), (90, 110));
    assert_eq!(trades(&h.add(3, Sell, Limit, 90, 1, 2)), [(1, 3, 90, 1)]);
    assert_eq!(trades(&h.add(4, Buy, Limit, 110, 1, 2)), [(2, 4, 110, 1)]);
}

// ---- sinks, config ----

#[test]
fn a_wire_sink_receives_the_same_events_encoded() {
    let mut h = harness(SelfTradePrevention::None);
    h.add(1, Sell, Limit, 100, 5, 1);
    let mut wire: Vec<EventMsg> = Vec::with_capacity(16);
    h.engine
        .add(
            NewOrder {
                id: 2,
                symbol: SYMBOL,
                side: Buy,
                order_type: Limit,
                price: 100,
                qty: 3,
                owner: 2,
            },
            &mut wire,
        )
        .unwrap();
    let decoded: Vec<Event> = wire.iter().map(|message| message.decode().unwrap()).collect();
    assert_eq!(decoded, [accepted(2), trade(1, 2, 100, 3, Buy), level(Sell, 100, 2, 1)]);
}

#[test]
fn bad_configs_are_typed_errors_with_sentences() {
    let band = SymbolConfig {
        min_price: 0,
        max_price: 10,
    };
    let config = |symbols: Vec<SymbolConfig>, max_resting_orders| EngineConfig {
        symbols,
        max_resting_orders,
        self_trade_prevention: SelfTradePrevention::None,
    };
    let cases = [
        (config(vec![], 10), ConfigError::NoSymbols),
        (config(vec![band], 0), ConfigError::PoolSize { requested: 0 }),
        (
            config(vec![band], u32::MAX),
            ConfigError::PoolSize { requested: u32::MAX },
        ),
        (
            config(
                vec![
                    band,
                    SymbolConfig {
                        min_price: 5,
                        max_price: 4,
                    },
                ],
                10,
            ),
            ConfigError::InvertedBand { symbol: 1 },
        ),
        (
            config(
                vec![SymbolConfig {
                    min_price: i64::MIN,
                    max_price: i64::MAX,
                }],
                10,
            ),
            ConfigError::BandTooWide { symbol: 0 },
        ),
    ];
    for (config, expected) in cases {
        let error = Engine::new(&config).err();
        assert_eq!(error, Some(expected));
        let message = expected.to_string();
        assert!(message.len() > 20 && !message.contains("{"), "{message}");
    }
}

#[test]
fn reasons_display_as_sentences() {
    for reason in [
        RejectReason::Malformed,
        RejectReason::UnknownSymbol,
        RejectReason::ZeroQuantity,
        RejectReason::PriceOutOfBand,
        RejectReason::DuplicateOrderId,
        RejectReason::UnknownOrderId,
        RejectReason::PoolExhausted,
        RejectReason::PostOnlyWouldCross,
        RejectReason::QuantityTooLarge,
    ] {
        assert_eq!(RejectReason::from_u8(reason as u8), Some(reason));
        assert!(reason.to_string().len() > 20);
        assert_ne!(reason.to_string(), format!("{reason:?}"));
    }
    for reason in [
        CancelReason::Requested,
        CancelReason::UnfilledImmediate,
        CancelReason::FillOrKillUnfillable,
        CancelReason::SelfTradePrevention,
    ] {
        assert_eq!(CancelReason::from_u8(reason as u8), Some(reason));
        assert!(reason.to_string().len() > 20);
    }
}
