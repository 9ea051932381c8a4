//! What a receive hands out: [`Received`] views into the ring and [`MessageInfo`].

use std::ops::Deref;

use super::{Next, Subscriber};
use crate::kind::{GlobalOrder, KindMarker, Mode, Topology};
use crate::message::{Bytes, Message, Payload};

/// Where a message came from: the publisher slot, and in Ordered mode its global sequence.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-info-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).publishers(2))?;
/// let _first = channel.publisher()?;
/// channel.publisher()?.offer(&Tick { seq: 1 })?;
/// let mut subscriber = channel.subscriber()?;
/// subscriber.drain(1, |info, _| assert_eq!(info.publisher_slot(), 1))?;
/// # Ok::<(), salias::Error>(())
/// ```
pub struct MessageInfo<M: Mode> {
    pub(super) slot: usize,
    pub(super) seq: u64,
    pub(super) gap: u64,
    pub(super) _mode: KindMarker<(), M, ()>,
}

// Not derived: derives would demand `M: Clone` etc. of the uninhabited mode markers.
impl<M: Mode> Clone for MessageInfo<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: Mode> Copy for MessageInfo<M> {}

impl<M: Mode> std::fmt::Debug for MessageInfo<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("MessageInfo");
        out.field("publisher_slot", &self.slot);
        if M::ORDERED {
            out.field("sequence", &self.seq).field("gap_before", &self.gap);
        }
        out.finish()
    }
}

impl<M: Mode> MessageInfo<M> {
    /// Where a message copied out without a subscriber came from (`latest`).
    pub(crate) fn new(slot: usize, seq: u64, gap: u64) -> Self {
        MessageInfo {
            slot,
            seq,
            gap,
            _mode: KindMarker::default(),
        }
    }

    /// The publisher slot that sent the message.
    pub fn publisher_slot(&self) -> usize {
        self.slot
    }
}

impl<M: Mode> MessageInfo<M> {
    /// The message's global sequence number: the same for every subscriber and gap-free
    /// across all publishers, except where a publisher died holding numbers (see
    /// [`gap_before`](Self::gap_before)).
    pub fn sequence(&self) -> u64
    where
        M: GlobalOrder,
    {
        self.seq
    }

    /// How many sequence numbers right before this message were lost because the
    /// publishers holding them died or declared them lost
    /// ([`Publisher::publish_gap`](crate::Publisher::publish_gap)); 0 almost always.
    pub fn gap_before(&self) -> u64
    where
        M: GlobalOrder,
    {
        self.gap
    }
}

/// A typed message borrowed from the ring. Dropping it (or [`release`](Received::release))
/// releases it.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-received-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// channel.publisher()?.offer(&Tick { seq: 5 })?;
/// let mut subscriber = channel.subscriber()?;
/// let tick = subscriber.try_recv()?.expect("one message");
/// let copy: Tick = *tick; // copy it out to keep it past the next receive
/// tick.release();
/// assert_eq!(copy.seq, 5);
/// # Ok::<(), salias::Error>(())
/// ```
pub struct Received<'a, T: Payload, M: Mode, K: Topology> {
    subscriber: &'a mut Subscriber<T, M, K>,
    next: Next,
}

impl<'a, T: Payload, M: Mode, K: Topology> Received<'a, T, M, K> {
    pub(crate) fn new(subscriber: &'a mut Subscriber<T, M, K>, next: Next) -> Self {
        Received { subscriber, next }
    }

    /// The publisher slot that sent the message.
    pub fn publisher_slot(&self) -> usize {
        self.next.ring
    }

    /// Where the message came from.
    pub fn info(&self) -> MessageInfo<M> {
        Subscriber::<T, M, K>::info(self.next)
    }

    /// Releases the message now (same as dropping the view).
    pub fn release(self) {}
}

impl<T: Payload, M: Mode, K: Topology> Received<'_, T, M, K> {
    /// The message's global sequence number.
    pub fn sequence(&self) -> u64
    where
        M: GlobalOrder,
    {
        self.next.sequence
    }

    /// How many sequence numbers right before this message were lost because the
    /// publishers holding them died or declared them lost
    /// ([`Publisher::publish_gap`](crate::Publisher::publish_gap)); 0 almost always.
    pub fn gap_before(&self) -> u64
    where
        M: GlobalOrder,
    {
        self.next.gap_before
    }
}

impl<T: Message, M: Mode, K: Topology> Deref for Received<'_, T, M, K> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: `next` is what the search that made this view returned, and the head
        // moves only when the view is dropped (peers' part: crate docs, "What a borrowed
        // message assumes about peers"). A raw cast, as zerocopy's checked one would test
        // the alignment again on every receive.
        unsafe { self.subscriber.message(self.next) }
    }
}

impl<T: Payload, M: Mode, K: Topology> Drop for Received<'_, T, M, K> {
    fn drop(&mut self) {
        self.subscriber.advance(self.next);
    }
}

/// The message's origin and, for a type that is `Debug`, the message.
impl<T: Message + std::fmt::Debug, M: Mode, K: Topology> std::fmt::Debug for Received<'_, T, M, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Received")
            .field("info", &self.info())
            .field("message", &**self)
            .finish()
    }
}

/// The message's origin and its bytes.
impl<M: Mode, K: Topology> std::fmt::Debug for Received<'_, Bytes, M, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Received")
            .field("info", &self.info())
            .field("bytes", &&**self)
            .finish()
    }
}

/// A raw message borrowed from the ring. Dropping it (or [`release`](ReceivedBytes::release))
/// releases it.
pub type ReceivedBytes<'a, M, K> = Received<'a, Bytes, M, K>;

impl<M: Mode, K: Topology> Deref for Received<'_, Bytes, M, K> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: as for the typed view.
        unsafe { self.subscriber.payload(self.next) }
    }
}
