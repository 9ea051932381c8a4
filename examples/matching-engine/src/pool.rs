//! Resting orders: one cache line each, kept in a preallocated pool with a free list.

use crate::types::{OrderId, OrderType, OwnerId, Price, Qty, Side, SymbolId};

/// Marks "no slot" in the intrusive links and the free list.
pub(crate) const NIL: u32 = u32::MAX;

/// A resting order.
///
/// # Layout
///
/// 64 bytes, aligned to 64, so one order is exactly one cache line and walking a price
/// level touches one line per order. `next` and `prev` link the orders of one price level
/// in time priority; on a free slot `next` links the free list instead.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct Order {
    /// The sender's id.
    pub id: OrderId,
    /// The account, for self-trade prevention.
    pub owner: OwnerId,
    /// Limit price in ticks.
    pub price: Price,
    /// What is still open.
    pub remaining: Qty,
    /// The quantity it arrived with, or was given by its last priority-losing modify.
    pub entered_qty: Qty,
    /// Engine-wide arrival sequence of the order's current queue position; lower is earlier.
    pub priority: u64,
    pub(crate) next: u32,
    pub(crate) prev: u32,
    /// The book the order rests in.
    pub symbol: SymbolId,
    /// Bid or ask.
    pub side: Side,
    /// `Limit` or `PostOnly`: the only types that rest.
    pub order_type: OrderType,
}

const _: () = assert!(size_of::<Order>() == 64, "an order must be exactly one cache line");
const _: () = assert!(align_of::<Order>() == 64, "an order must start on a cache line");

impl Order {
    const EMPTY: Order = Order {
        id: 0,
        owner: 0,
        price: 0,
        remaining: 0,
        entered_qty: 0,
        priority: 0,
        next: NIL,
        prev: NIL,
        symbol: 0,
        side: Side::Buy,
        order_type: OrderType::Limit,
    };
}

/// A fixed number of order slots allocated once; slots go back on the free list when an
/// order fills or is cancelled, so the pool serves any number of orders over its life as
/// long as no more than `capacity` rest at once.
pub(crate) struct OrderPool {
    slots: Vec<Order>,
    free_head: u32,
    free_count: u32,
}

impl OrderPool {
    /// `capacity` must be below `u32::MAX` (checked by the engine's config).
    pub(crate) fn with_capacity(capacity: u32) -> OrderPool {
        let mut slots = vec![Order::EMPTY; capacity as usize];
        for (index, slot) in slots.iter_mut().enumerate() {
            slot.next = if index + 1 < capacity as usize {
                index as u32 + 1
            } else {
                NIL
            };
        }
        OrderPool {
            slots,
            free_head: if capacity == 0 { NIL } else { 0 },
            free_count: capacity,
        }
    }

    pub(crate) fn capacity(&self) -> u32 {
        self.slots.len() as u32
    }

    pub(crate) fn free_count(&self) -> u32 {
        self.free_count
    }

    /// Takes a free slot and fills it, or `None` when every slot is in use.
    pub(crate) fn allocate(&mut self, order: Order) -> Option<u32> {
        let slot = self.free_head;
        if slot == NIL {
            return None;
        }
        self.free_head = self.slots[slot as usize].next;
        self.free_count -= 1;
        self.slots[slot as usize] = Order {
            next: NIL,
            prev: NIL,
            ..order
        };
        Some(slot)
    }

    /// Returns a slot to the free list. The caller has unlinked it from its level.
    pub(crate) fn release(&mut self, slot: u32) {
        let order = &mut self.slots[slot as usize];
        order.next = self.free_head;
        order.prev = NIL;
        self.free_head = slot;
        self.free_count += 1;
    }

    pub(crate) fn get(&self, slot: u32) -> &Order {
        &self.slots[slot as usize]
    }

    pub(crate) fn get_mut(&mut self, slot: u32) -> &mut Order {
        &mut self.slots[slot as usize]
    }

    /// A blank order for callers to fill with struct update syntax.
    pub(crate) fn blank() -> Order {
        Order::EMPTY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_come_back_after_release_in_lifo_order() {
        let mut pool = OrderPool::with_capacity(3);
        let a = pool.allocate(Order { id: 1, ..Order::EMPTY }).unwrap();
        let b = pool.allocate(Order { id: 2, ..Order::EMPTY }).unwrap();
        let c = pool.allocate(Order { id: 3, ..Order::EMPTY }).unwrap();
        assert!(pool.allocate(Order::EMPTY).is_none(), "a full pool must refuse");
        assert_eq!(pool.free_count(), 0);
        pool.release(b);
        assert_eq!(pool.free_count(), 1);
        let again = pool.allocate(Order { id: 4, ..Order::EMPTY }).unwrap();
        assert_eq!(again, b);
        assert_eq!(pool.get(again).id, 4);
        assert_eq!((pool.get(a).id, pool.get(c).id), (1, 3));
    }

    #[test]
    fn an_empty_pool_refuses_without_panicking() {
        let mut pool = OrderPool::with_capacity(0);
        assert!(pool.allocate(Order::EMPTY).is_none());
    }
}
