//! One symbol's book: for each side, an array of price levels indexed by tick.
//!
//! Prices are confined to a band, so a level is found by subtracting the band's low end,
//! with no search. Each level is a doubly linked FIFO of pool slots (time priority). A
//! bitset of occupied levels finds the next best level when the best one empties by
//! scanning 64 levels per word instead of one.

use crate::pool::{NIL, Order, OrderPool};
use crate::types::{Price, Qty, Side, SymbolId};

#[derive(Clone, Copy)]
pub(crate) struct Level {
    pub(crate) head: u32,
    pub(crate) tail: u32,
    pub(crate) order_count: u32,
    pub(crate) total_qty: Qty,
}

const EMPTY_LEVEL: Level = Level {
    head: NIL,
    tail: NIL,
    order_count: 0,
    total_qty: 0,
};

/// One side of a book.
pub(crate) struct Ladder {
    pub(crate) side: Side,
    pub(crate) levels: Vec<Level>,
    occupied: Vec<u64>,
    /// Index of the best occupied level, or `NIL` when the side is empty.
    best: u32,
}

impl Ladder {
    fn new(side: Side, level_count: u32) -> Ladder {
        Ladder {
            side,
            levels: vec![EMPTY_LEVEL; level_count as usize],
            occupied: vec![0; (level_count as usize).div_ceil(64)],
            best: NIL,
        }
    }

    pub(crate) fn best(&self) -> Option<u32> {
        (self.best != NIL).then_some(self.best)
    }

    /// Whether `a` is a better price than `b` for this side.
    fn better(&self, a: u32, b: u32) -> bool {
        match self.side {
            Side::Buy => a > b,
            Side::Sell => a < b,
        }
    }

    /// The best occupied level strictly worse than `index`.
    pub(crate) fn next_worse(&self, index: u32) -> Option<u32> {
        match self.side {
            Side::Buy => index
                .checked_sub(1)
                .and_then(|below| self.highest_occupied_at_or_below(below)),
            Side::Sell => self.lowest_occupied_at_or_above(index + 1),
        }
    }

    fn highest_occupied_at_or_below(&self, index: u32) -> Option<u32> {
        let mut word = index as usize / 64;
        let bit = index % 64;
        let mut bits = self.occupied[word] & (u64::MAX >> (63 - bit));
        loop {
            if bits != 0 {
                return Some(word as u32 * 64 + 63 - bits.leading_zeros());
            }
            if word == 0 {
                return None;
            }
            word -= 1;
            bits = self.occupied[word];
        }
    }

    fn lowest_occupied_at_or_above(&self, index: u32) -> Option<u32> {
        let mut word = index as usize / 64;
        if word >= self.occupied.len() {
            return None;
        }
        let mut bits = self.occupied[word] & (u64::MAX << (index % 64));
        loop {
            if bits != 0 {
                return Some(word as u32 * 64 + bits.trailing_zeros());
            }
            word += 1;
            if word == self.occupied.len() {
                return None;
            }
            bits = self.occupied[word];
        }
    }

    /// Appends a slot at the back of a level's queue.
    pub(crate) fn push_back(&mut self, index: u32, slot: u32, pool: &mut OrderPool) {
        let level = &mut self.levels[index as usize];
        let tail = level.tail;
        {
            let order = pool.get_mut(slot);
            order.prev = tail;
            order.next = NIL;
            level.total_qty += order.remaining;
        }
        if tail == NIL {
            level.head = slot;
        } else {
            pool.get_mut(tail).next = slot;
        }
        level.tail = slot;
        level.order_count += 1;
        if level.order_count == 1 {
            self.occupied[index as usize / 64] |= 1 << (index % 64);
            if self.best == NIL || self.better(index, self.best) {
                self.best = index;
            }
        }
    }

    /// Removes a slot from its level (its `remaining` leaves the level's total); the slot
    /// itself stays allocated.
    pub(crate) fn unlink(&mut self, index: u32, slot: u32, pool: &mut OrderPool) {
        let (prev, next, remaining) = {
            let order = pool.get(slot);
            (order.prev, order.next, order.remaining)
        };
        let level = &mut self.levels[index as usize];
        if prev == NIL {
            level.head = next;
        } else {
            pool.get_mut(prev).next = next;
        }
        if next == NIL {
            level.tail = prev;
        } else {
            pool.get_mut(next).prev = prev;
        }
        level.total_qty -= remaining;
        level.order_count -= 1;
        if level.order_count == 0 {
            self.occupied[index as usize / 64] &= !(1 << (index % 64));
            if self.best == index {
                self.best = self.next_worse(index).unwrap_or(NIL);
            }
        }
    }

    /// Takes `qty` off an order that stays in place (a partial fill or a size-down modify).
    pub(crate) fn reduce(&mut self, index: u32, slot: u32, qty: Qty, pool: &mut OrderPool) {
        pool.get_mut(slot).remaining -= qty;
        self.levels[index as usize].total_qty -= qty;
    }
}

/// One level as seen from outside: see [`Engine::depth`](crate::Engine::depth).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelSnapshot {
    /// The level's price.
    pub price: Price,
    /// The open quantity resting there.
    pub total_qty: Qty,
    /// How many orders rest there.
    pub order_count: u32,
}

/// The best bid and best offer of one book; `None` for an empty side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BestBidOffer {
    /// The highest bid level.
    pub bid: Option<LevelSnapshot>,
    /// The lowest ask level.
    pub ask: Option<LevelSnapshot>,
}

/// One symbol's book.
pub(crate) struct Book {
    pub(crate) symbol: SymbolId,
    pub(crate) min_price: Price,
    pub(crate) max_price: Price,
    pub(crate) bids: Ladder,
    pub(crate) asks: Ladder,
}

impl Book {
    /// The engine's config check guarantees `min_price <= max_price` and a band that fits in `u32`.
    pub(crate) fn new(symbol: SymbolId, min_price: Price, max_price: Price) -> Book {
        let level_count = (max_price - min_price + 1) as u32;
        Book {
            symbol,
            min_price,
            max_price,
            bids: Ladder::new(Side::Buy, level_count),
            asks: Ladder::new(Side::Sell, level_count),
        }
    }

    /// The level index of an in-band price, or `None` outside the band.
    pub(crate) fn index_of(&self, price: Price) -> Option<u32> {
        (self.min_price..=self.max_price)
            .contains(&price)
            .then(|| (price - self.min_price) as u32)
    }

    pub(crate) fn price_at(&self, index: u32) -> Price {
        self.min_price + Price::from(index)
    }

    pub(crate) fn ladder(&self, side: Side) -> &Ladder {
        match side {
            Side::Buy => &self.bids,
            Side::Sell => &self.asks,
        }
    }

    pub(crate) fn ladder_mut(&mut self, side: Side) -> &mut Ladder {
        match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        }
    }

    /// Whether an order on `side` limited to level `limit` would trade against level `opposite`.
    pub(crate) fn crosses(side: Side, limit: u32, opposite: u32) -> bool {
        match side {
            Side::Buy => opposite <= limit,
            Side::Sell => opposite >= limit,
        }
    }

    /// Whether an order on `side` limited to level `limit` would trade on arrival.
    pub(crate) fn would_cross(&self, side: Side, limit: u32) -> bool {
        self.ladder(side.opposite())
            .best()
            .is_some_and(|best| Book::crosses(side, limit, best))
    }

    pub(crate) fn snapshot(&self, side: Side, index: u32) -> LevelSnapshot {
        let level = &self.ladder(side).levels[index as usize];
        LevelSnapshot {
            price: self.price_at(index),
            total_qty: level.total_qty,
            order_count: level.order_count,
        }
    }

    pub(crate) fn best_bid_offer(&self) -> BestBidOffer {
        BestBidOffer {
            bid: self.bids.best().map(|index| self.snapshot(Side::Buy, index)),
            ask: self.asks.best().map(|index| self.snapshot(Side::Sell, index)),
        }
    }

    /// Fills `out` with the best levels of `side`, best first; returns how many it wrote.
    pub(crate) fn depth(&self, side: Side, out: &mut [LevelSnapshot]) -> usize {
        let ladder = self.ladder(side);
        let mut level = ladder.best();
        let mut written = 0;
        while let (Some(index), Some(slot)) = (level, out.get_mut(written)) {
            *slot = self.snapshot(side, index);
            written += 1;
            level = ladder.next_worse(index);
        }
        written
    }

    /// Every resting order of `side`, best level first, time priority within a level.
    pub(crate) fn orders<'a>(&'a self, side: Side, pool: &'a OrderPool) -> RestingOrders<'a> {
        let ladder = self.ladder(side);
        RestingOrders {
            ladder,
            pool,
            level: ladder.best(),
            slot: ladder.best().map_or(NIL, |index| ladder.levels[index as usize].head),
        }
    }
}

/// Iterator over one side's resting orders in priority order; see [`Engine::orders`](crate::Engine::orders).
pub struct RestingOrders<'a> {
    ladder: &'a Ladder,
    pool: &'a OrderPool,
    level: Option<u32>,
    slot: u32,
}

impl<'a> Iterator for RestingOrders<'a> {
    type Item = &'a Order;

    fn next(&mut self) -> Option<&'a Order> {
        loop {
            let index = self.level?;
            if self.slot != NIL {
                let order = self.pool.get(self.slot);
                self.slot = order.next;
                return Some(order);
            }
            self.level = self.ladder.next_worse(index);
            self.slot = self.level.map_or(NIL, |index| self.ladder.levels[index as usize].head);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitset_scans_find_neighbours_across_words() {
        let mut bids = Ladder::new(Side::Buy, 300);
        let mut asks = Ladder::new(Side::Sell, 300);
        for index in [0, 63, 64, 130, 299] {
            bids.occupied[index / 64] |= 1 << (index % 64);
            asks.occupied[index / 64] |= 1 << (index % 64);
        }
        assert_eq!(bids.next_worse(299), Some(130));
        assert_eq!(bids.next_worse(130), Some(64));
        assert_eq!(bids.next_worse(64), Some(63));
        assert_eq!(bids.next_worse(63), Some(0));
        assert_eq!(bids.next_worse(0), None);
        assert_eq!(asks.next_worse(0), Some(63));
        assert_eq!(asks.next_worse(63), Some(64));
        assert_eq!(asks.next_worse(130), Some(299));
        assert_eq!(asks.next_worse(299), None);
    }
}
