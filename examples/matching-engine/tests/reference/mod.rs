//! A deliberately plain order book to check the engine against: ordered maps of queues,
//! a hash map from id to location, no pools, no bitsets, no intrusive links. It is written
//! from the rules in the engine's documentation, not from the engine's code, and favours
//! being obviously right over being fast.

use std::collections::{BTreeMap, HashMap, VecDeque};

use matching_engine::{
    CancelReason, Event, MAX_ORDER_QTY, OrderId, OrderMsg, OrderType, OwnerId, Price, Qty, RejectReason,
    SelfTradePrevention, Side, SymbolConfig, SymbolId, order_kind,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RestingOrder {
    pub id: OrderId,
    pub owner: OwnerId,
    pub price: Price,
    pub qty: Qty,
    pub order_type: OrderType,
}

#[derive(Default)]
struct SymbolBook {
    bids: BTreeMap<Price, VecDeque<RestingOrder>>,
    asks: BTreeMap<Price, VecDeque<RestingOrder>>,
}

impl SymbolBook {
    fn side(&mut self, side: Side) -> &mut BTreeMap<Price, VecDeque<RestingOrder>> {
        match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        }
    }

    /// The best price on `side`: highest bid, lowest ask.
    fn best(&self, side: Side) -> Option<Price> {
        match side {
            Side::Buy => self.bids.keys().next_back().copied(),
            Side::Sell => self.asks.keys().next().copied(),
        }
    }
}

pub struct ReferenceBook {
    bands: Vec<SymbolConfig>,
    books: Vec<SymbolBook>,
    /// id -> (symbol, side, price) of every resting order.
    locations: HashMap<OrderId, (SymbolId, Side, Price)>,
    capacity: usize,
    policy: SelfTradePrevention,
}

/// Whether a `side` order limited to `limit` (None: market) trades against a resting `price`.
fn crosses(side: Side, limit: Option<Price>, price: Price) -> bool {
    match (side, limit) {
        (_, None) => true,
        (Side::Buy, Some(limit)) => price <= limit,
        (Side::Sell, Some(limit)) => price >= limit,
    }
}

fn level_update(symbol: SymbolId, side: Side, price: Price, queue: Option<&VecDeque<RestingOrder>>) -> Event {
    let queue = queue
        .map(|q| q.iter().map(|o| o.qty).collect::<Vec<_>>())
        .unwrap_or_default();
    Event::BookUpdate {
        symbol,
        side,
        price,
        total_qty: queue.iter().sum(),
        order_count: queue.len() as u32,
    }
}

impl ReferenceBook {
    pub fn new(bands: Vec<SymbolConfig>, capacity: usize, policy: SelfTradePrevention) -> ReferenceBook {
        ReferenceBook {
            books: bands.iter().map(|_| SymbolBook::default()).collect(),
            bands,
            locations: HashMap::new(),
            capacity,
            policy,
        }
    }

    pub fn resting_count(&self) -> usize {
        self.locations.len()
    }

    /// Every resting order of one side, best price first, earliest first.
    pub fn orders(&self, symbol: SymbolId, side: Side) -> Vec<RestingOrder> {
        let book = &self.books[symbol as usize];
        let levels: Vec<&VecDeque<RestingOrder>> = match side {
            Side::Buy => book.bids.values().rev().collect(),
            Side::Sell => book.asks.values().collect(),
        };
        levels.into_iter().flatten().copied().collect()
    }

    /// (price, total, count) of every level of one side, best first.
    pub fn levels(&self, symbol: SymbolId, side: Side) -> Vec<(Price, Qty, u32)> {
        let book = &self.books[symbol as usize];
        let summarize = |(price, queue): (&Price, &VecDeque<RestingOrder>)| {
            (*price, queue.iter().map(|o| o.qty).sum(), queue.len() as u32)
        };
        match side {
            Side::Buy => book.bids.iter().rev().map(summarize).collect(),
            Side::Sell => book.asks.iter().map(summarize).collect(),
        }
    }

    fn in_band(&self, symbol: SymbolId, price: Price) -> bool {
        let band = self.bands[symbol as usize];
        band.min_price <= price && price <= band.max_price
    }

    pub fn apply(&mut self, request: &OrderMsg, out: &mut Vec<Event>) {
        let id = request.order_id;
        match request.kind {
            order_kind::ADD => match (Side::from_u8(request.side), OrderType::from_u8(request.order_type)) {
                (Some(side), Some(order_type)) => self.add(request, side, order_type, out),
                _ => out.push(Event::Rejected {
                    order_id: id,
                    reason: RejectReason::Malformed,
                }),
            },
            order_kind::CANCEL => self.cancel(id, out),
            order_kind::MODIFY => self.modify(id, request.price, request.qty, out),
            _ => out.push(Event::Rejected {
                order_id: id,
                reason: RejectReason::Malformed,
            }),
        }
    }

    fn add(&mut self, request: &OrderMsg, side: Side, order_type: OrderType, out: &mut Vec<Event>) {
        let id = request.order_id;
        let symbol = request.symbol;
        let reject = |reason| Event::Rejected { order_id: id, reason };
        let is_market = order_type == OrderType::Market;
        let can_rest = order_type == OrderType::Limit || order_type == OrderType::PostOnly;
        let limit = if is_market { None } else { Some(request.price) };
        if symbol as usize >= self.books.len() {
            return out.push(reject(RejectReason::UnknownSymbol));
        }
        if request.qty == 0 {
            return out.push(reject(RejectReason::ZeroQuantity));
        }
        if request.qty > MAX_ORDER_QTY {
            return out.push(reject(RejectReason::QuantityTooLarge));
        }
        if !is_market && !self.in_band(symbol, request.price) {
            return out.push(reject(RejectReason::PriceOutOfBand));
        }
        if self.locations.contains_key(&id) {
            return out.push(reject(RejectReason::DuplicateOrderId));
        }
        if can_rest && self.locations.len() == self.capacity {
            return out.push(reject(RejectReason::PoolExhausted));
        }
        let opposite_best = self.books[symbol as usize].best(side.opposite());
        if order_type == OrderType::PostOnly && opposite_best.is_some_and(|best| crosses(side, limit, best)) {
            return out.push(reject(RejectReason::PostOnlyWouldCross));
        }
        out.push(Event::Accepted { order_id: id, symbol });
        if order_type == OrderType::FillOrKill && self.available(symbol, side, limit, request.owner) < request.qty {
            return out.push(Event::Cancelled {
                order_id: id,
                symbol,
                remaining: request.qty,
                reason: CancelReason::FillOrKillUnfillable,
            });
        }
        let Some(remaining) = self.take(symbol, side, limit, id, request.owner, request.qty, out) else {
            return;
        };
        if remaining == 0 {
            return;
        }
        if can_rest {
            self.rest(
                symbol,
                side,
                RestingOrder {
                    id,
                    owner: request.owner,
                    price: request.price,
                    qty: remaining,
                    order_type,
                },
                out,
            );
        } else {
            out.push(Event::Cancelled {
                order_id: id,
                symbol,
                remaining,
                reason: CancelReason::UnfilledImmediate,
            });
        }
    }

    /// How much a fill-or-kill taker would really trade, given self-trade prevention.
    fn available(&self, symbol: SymbolId, side: Side, limit: Option<Price>, owner: OwnerId) -> Qty {
        let book = &self.books[symbol as usize];
        let crossing: Vec<&VecDeque<RestingOrder>> = match side {
            Side::Buy => book
                .asks
                .iter()
                .filter(|(p, _)| crosses(side, limit, **p))
                .map(|(_, q)| q)
                .collect(),
            Side::Sell => book
                .bids
                .iter()
                .rev()
                .filter(|(p, _)| crosses(side, limit, **p))
                .map(|(_, q)| q)
                .collect(),
        };
        let mut total = 0;
        for order in crossing.into_iter().flatten() {
            if order.owner == owner {
                match self.policy {
                    SelfTradePrevention::None => total += order.qty,
                    SelfTradePrevention::CancelResting => {}
                    SelfTradePrevention::CancelIncoming => return total,
                }
            } else {
                total += order.qty;
            }
        }
        total
    }

    /// Matches an incoming order. `None` when self-trade prevention cancelled it.
    #[allow(clippy::too_many_arguments)]
    fn take(
        &mut self,
        symbol: SymbolId,
        side: Side,
        limit: Option<Price>,
        taker: OrderId,
        owner: OwnerId,
        qty: Qty,
        out: &mut Vec<Event>,
    ) -> Option<Qty> {
        let maker_side = side.opposite();
        let mut remaining = qty;
        while remaining > 0 {
            let book = &mut self.books[symbol as usize];
            let Some(price) = book.best(maker_side) else { break };
            if !crosses(side, limit, price) {
                break;
            }
            let queue = book.side(maker_side).get_mut(&price).unwrap();
            let mut changed = false;
            let mut position = 0;
            while remaining > 0 && position < queue.len() {
                let maker = queue[position];
                if maker.owner == owner && self.policy != SelfTradePrevention::None {
                    if self.policy == SelfTradePrevention::CancelIncoming {
                        if changed {
                            out.push(level_update(symbol, maker_side, price, Some(queue)));
                        }
                        out.push(Event::Cancelled {
                            order_id: taker,
                            symbol,
                            remaining,
                            reason: CancelReason::SelfTradePrevention,
                        });
                        return None;
                    }
                    queue.remove(position);
                    self.locations.remove(&maker.id);
                    out.push(Event::Cancelled {
                        order_id: maker.id,
                        symbol,
                        remaining: maker.qty,
                        reason: CancelReason::SelfTradePrevention,
                    });
                    changed = true;
                    continue;
                }
                let traded = remaining.min(maker.qty);
                out.push(Event::Trade {
                    symbol,
                    maker_order_id: maker.id,
                    taker_order_id: taker,
                    price,
                    qty: traded,
                    aggressor: side,
                });
                remaining -= traded;
                changed = true;
                if traded == maker.qty {
                    queue.remove(position);
                    self.locations.remove(&maker.id);
                } else {
                    queue[position].qty -= traded;
                    position += 1;
                }
            }
            out.push(level_update(symbol, maker_side, price, Some(queue)));
            if queue.is_empty() {
                book.side(maker_side).remove(&price);
            }
        }
        Some(remaining)
    }

    fn rest(&mut self, symbol: SymbolId, side: Side, order: RestingOrder, out: &mut Vec<Event>) {
        let queue = self.books[symbol as usize].side(side).entry(order.price).or_default();
        queue.push_back(order);
        self.locations.insert(order.id, (symbol, side, order.price));
        out.push(level_update(symbol, side, order.price, Some(queue)));
    }

    /// Takes an order out of its queue; returns it and the level's state afterwards.
    fn remove(&mut self, id: OrderId) -> (SymbolId, Side, RestingOrder, Event) {
        let (symbol, side, price) = self.locations.remove(&id).unwrap();
        let levels = self.books[symbol as usize].side(side);
        let queue = levels.get_mut(&price).unwrap();
        let position = queue.iter().position(|o| o.id == id).unwrap();
        let order = queue.remove(position).unwrap();
        let update = level_update(symbol, side, price, Some(queue));
        if queue.is_empty() {
            levels.remove(&price);
        }
        (symbol, side, order, update)
    }

    fn cancel(&mut self, id: OrderId, out: &mut Vec<Event>) {
        if !self.locations.contains_key(&id) {
            return out.push(Event::Rejected {
                order_id: id,
                reason: RejectReason::UnknownOrderId,
            });
        }
        let (symbol, _, order, update) = self.remove(id);
        out.push(Event::Cancelled {
            order_id: id,
            symbol,
            remaining: order.qty,
            reason: CancelReason::Requested,
        });
        out.push(update);
    }

    fn modify(&mut self, id: OrderId, price: Price, qty: Qty, out: &mut Vec<Event>) {
        let reject = |reason| Event::Rejected { order_id: id, reason };
        let Some(&(symbol, side, old_price)) = self.locations.get(&id) else {
            return out.push(reject(RejectReason::UnknownOrderId));
        };
        if qty == 0 {
            return out.push(reject(RejectReason::ZeroQuantity));
        }
        if qty > MAX_ORDER_QTY {
            return out.push(reject(RejectReason::QuantityTooLarge));
        }
        if !self.in_band(symbol, price) {
            return out.push(reject(RejectReason::PriceOutOfBand));
        }
        let modified = |priority_kept| Event::Modified {
            order_id: id,
            symbol,
            price,
            qty,
            priority_kept,
        };
        let queue = self.books[symbol as usize].side(side).get_mut(&old_price).unwrap();
        let position = queue.iter().position(|o| o.id == id).unwrap();
        let current = queue[position];
        if price == old_price {
            if qty <= current.qty {
                queue[position].qty = qty;
                out.push(modified(true));
            } else {
                queue.remove(position);
                queue.push_back(RestingOrder { qty, ..current });
                out.push(modified(false));
            }
            out.push(level_update(symbol, side, price, Some(queue)));
            return;
        }
        let opposite_best = self.books[symbol as usize].best(side.opposite());
        if current.order_type == OrderType::PostOnly
            && opposite_best.is_some_and(|best| crosses(side, Some(price), best))
        {
            return out.push(reject(RejectReason::PostOnlyWouldCross));
        }
        let (_, _, order, old_level) = self.remove(id);
        out.push(modified(false));
        out.push(old_level);
        let Some(remaining) = self.take(symbol, side, Some(price), id, order.owner, qty, out) else {
            return;
        };
        if remaining > 0 {
            self.rest(
                symbol,
                side,
                RestingOrder {
                    price,
                    qty: remaining,
                    ..order
                },
                out,
            );
        }
    }
}
