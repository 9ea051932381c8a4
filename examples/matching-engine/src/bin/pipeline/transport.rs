//! The four ends a transport provides; the roles are written once over them.

use matching_engine::{EventMsg, OrderMsg};

/// Gateway side of the request channel.
pub trait OrderTx {
    /// False when the queue is full (nothing sent).
    fn try_send(&mut self, order: &OrderMsg) -> bool;
}

/// Engine side of the request channel.
pub trait OrderRx {
    /// The next request and its position in the channel's total order (None: none yet).
    fn try_recv(&mut self) -> Option<(u64, OrderMsg)>;
    /// Waiting for a request: spin, yield or block, as the transport does.
    fn idle(&mut self);
    /// Sequence numbers lost in the channel (ordered salias only).
    fn gaps(&self) -> u64 {
        0
    }
}

/// Engine side of the event channel.
pub trait EventTx {
    /// Publishes as many of `events` as fit; 0 when none did.
    fn try_send(&mut self, events: &[EventMsg]) -> usize;
}

/// Subscriber side of the event channel.
pub trait EventRx {
    /// Hands every available event to `handle`; returns how many.
    fn poll(&mut self, handle: impl FnMut(&EventMsg)) -> usize;
    fn idle(&mut self);
    /// The engine's final event count, once it has finished.
    fn engine_done(&mut self) -> Option<u64>;
}
