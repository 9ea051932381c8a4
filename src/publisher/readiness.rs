//! The publisher's readiness descriptor (`AsFd`): readable when room may have appeared
//! since an offer was refused, armed by each refusal once watched.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use super::Publisher;
use crate::kind::{Mode, Topology};
use crate::message::Payload;
use crate::protocol;

/// A descriptor that is readable when an offer may succeed: until an offer is refused
/// for lack of room, and again once a subscriber has released enough room for the
/// refused one. For `send_async` and event loops that publish; see
/// [`Subscriber`'s descriptor](crate::Subscriber#impl-AsFd-for-Subscriber<T,+M,+K>) for
/// the mechanism, which this runs with the roles swapped: the first call starts
/// watching, and each refused offer from then on arms (drains the descriptor, registers
/// on the channel's room line, runs the barrier, looks at the subscribers' cursors once
/// more). Subscribers, after releasing room, look for armed or parked publishers with one
/// load of a read-mostly line and wake them (one futex call per arm); a subscriber busy
/// receiving makes no system call for it while no publisher waits.
///
/// On a fanout channel room can also appear without a release, when a subscriber that
/// held it dies and a publisher's check frees its slot: so there an armed publisher's
/// descriptor also turns readable every 100 ms while it waits, and the retried offer
/// makes that check. On an Mpsc channel it turns readable when the subscriber it waits
/// for has gone (dropped, or its process died: the watcher looks every 100 ms), so the
/// retried offer returns [`PublishError::NoSubscriber`](crate::PublishError::NoSubscriber)
/// once; and when a subscriber joins a channel that had none.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-publisher-fd-{}", std::process::id());
/// use std::os::fd::AsFd;
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).capacity(4096))?;
/// let mut publisher = channel.publisher()?;
/// let fd = publisher.as_fd().try_clone_to_owned()?; // starts watching; room now: readable
/// let mut seq = 0;
/// while publisher.offer(&Tick { seq }).is_ok() {
///     seq += 1;
/// }
/// // Refused, and armed: `fd` turns readable once a subscriber releases room.
/// # drop(fd);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<T: Payload, M: Mode, K: Topology> AsFd for Publisher<T, M, K> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.readiness.fd(&self.shared, || self.room_appeared())
    }
}

/// The raw form of [`AsFd`](#impl-AsFd-for-Publisher<T,+M,+K>), which starts watching
/// the same way.
impl<T: Payload, M: Mode, K: Topology> AsRawFd for Publisher<T, M, K> {
    fn as_raw_fd(&self) -> RawFd {
        self.as_fd().as_raw_fd()
    }
}

impl<T: Payload, M: Mode, K: Topology> Publisher<T, M, K> {
    /// An offer ending at `wanted` was refused: arms the descriptor if watched.
    #[inline(always)]
    pub(super) fn refused(&mut self, wanted: u64) {
        self.hot.wanted = wanted;
        self.readiness.found_nothing(&self.shared, || self.room_appeared());
    }

    /// Whether the subscribers' cursors now leave room for the last refused offer (or
    /// hold something a retry must report). Reads the cursors; changes nothing.
    pub(super) fn room_appeared(&self) -> bool {
        let shared = &*self.shared;
        if !K::FANOUT && self.expects_subscriber == self.no_subscriber() {
            // The subscriber holding us back left (the retry reports `NoSubscriber`), or
            // one joined while none was expected (its releases will make room).
            return true;
        }
        let cursors = (0..shared.subscribers as usize).map(|subscriber| &**shared.cursor(subscriber, self.slot));
        let limit = protocol::write_limit(self.hot.tail, self.window, self.ring.capacity(), K::FANOUT, cursors);
        !matches!(limit, Ok(limit) if limit < self.hot.wanted)
    }
}
