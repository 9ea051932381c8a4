//! The publishing end: one [`Publisher`] owns one publisher slot and its ring.
//!
//! The hot path writes the frame into the ring, then stores the frame's commit word with
//! Release. In FIFO mode it performs no read-modify-write on shared memory; in Ordered
//! mode it takes its global sequence number with one `fetch_add` per message (one per
//! batch with `offer_batch`). It makes no system call and no heap allocation, and reads
//! subscriber cursors only when its cached limit runs out.
//!
//! By job: `room` finds space (the write limit, backpressure, the checks a held-back
//! publisher makes), `write` puts frames in the ring and commits them, `typed` and `raw`
//! are the two APIs on top, `readiness` the descriptor a poll loop watches for room, and
//! `fault` is the crash tests' fault injection.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

#[cfg(salias_testing)]
mod fault;
mod raw;
mod readiness;
mod room;
mod tether;
mod typed;
mod write;

pub use raw::ClaimBytes;
pub use typed::Claim;

use crate::error::{Error, Result, Role};
use crate::fault::FaultRecord;
use crate::handle_error::PublishError;
use crate::kind::{Fifo, KindMarker, Mode, Mpsc, Topology};
use crate::message::{Frame, Payload};
use crate::protocol;
use crate::readiness::{Line, Readiness};
use crate::region::Shared;
use crate::wait::{Adaptive, WaitStrategy, Waiter};
use crate::wire::frame::Shape;
use crate::wire::layout::{Progress, ShmPtr, SingleUser, WakeWord};
use crate::wire::ring::{Ring, Writable};

/// Publishes messages of type `T` into its own ring of a channel.
///
/// `Send` but not `Sync`: every method takes `&mut self`, so the compiler guarantees one
/// writer per ring. Dropping it frees the slot for another publisher.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-publisher-type-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut publisher = channel.publisher()?;
/// publisher.offer(&Tick { seq: 1 })?;
/// assert_eq!(publisher.published(), 1);
/// # Ok::<(), salias::Error>(())
/// ```
pub struct Publisher<T: Payload, M: Mode = Fifo, K: Topology = Mpsc> {
    shared: Arc<Shared>,
    slot: usize,
    /// The ring of this publisher's slot, the one this process may write.
    ring: Ring<Writable>,
    /// What every publish writes, on cache lines of its own: two publishers of one
    /// process, kept side by side (a `Vec` of them, one per thread), would otherwise
    /// false-share them on every message.
    hot: CachePadded<WriteState>,
    window: u64,
    /// Fanout: how far past its tail the write limit, and so the overwrite frontier lossy
    /// subscribers read, may reach (`refresh_limit`).
    frontier_step: u64,
    max_len: usize,
    /// The frames of a raw publisher (`Frame::in_channel`); a typed one uses its type's,
    /// known at compile time (`shape`).
    raw_shape: Shape,
    progress: ShmPtr<Progress>,
    wake: ShmPtr<WakeWord>,
    /// The line this publisher sleeps on while it waits for room.
    room: ShmPtr<WakeWord>,
    /// The descriptor a poll loop watches for room (`as_fd`).
    readiness: Readiness,
    /// Whether sleepers' barriers reach this process; if not, it fences before looking
    /// for sleepers.
    barrier_reaches_us: bool,
    /// The channel's global sequence (used in Ordered mode only).
    sequence: ShmPtr<AtomicU64>,
    /// Which publisher may take numbers alone (Ordered mode).
    sole_taker: ShmPtr<AtomicU64>,
    /// Whether this one does (`protocol::join_takers`); `Shared` in FIFO mode.
    taking: protocol::Taking,
    last_reap: Option<Instant>,
    /// Fanout with a tether timeout: since when, and at which tail, offers have been
    /// refused (`tether`).
    held: Option<(Instant, u64)>,
    /// Mpsc: a subscriber held the slot when this publisher connected or at a refusal
    /// since; a refusal that then finds the slot free reports `NoSubscriber` (once).
    expects_subscriber: bool,
    /// Taken out while a blocking call runs, so waiting never allocates.
    strategy: Option<Box<dyn WaitStrategy>>,
    /// The channel's health cell (`platform::guard`), checked on every call.
    health: &'static AtomicU32,
    /// The full error behind the last broken-channel failure returned.
    fault: FaultRecord,
    /// The readiness descriptor's registration with a tokio runtime (`send_async`).
    #[cfg(feature = "tokio")]
    pub(crate) reactor: crate::readiness::Reactor,
    _marker: KindMarker<T, M, K>,
    _single_writer: SingleUser,
}

/// A publisher's process-local position and counters.
struct WriteState {
    /// Position of the next frame.
    tail: u64,
    /// Cached `slowest cursor + window`: frames may be written up to here without looking
    /// at subscriber cursors again.
    limit: u64,
    published: u64,
    backpressured: u64,
    /// Where the last refused reservation would have ended: room has appeared once the
    /// limit reaches it.
    wanted: u64,
    /// Fanout: the overwrite frontier last published for lossy subscribers
    /// (`protocol::advance_frontier`); at least `limit`.
    frontier: u64,
}

impl<T: Payload, M: Mode, K: Topology> Publisher<T, M, K> {
    /// The frames this publisher writes: a constant for a message type and for FIFO; a raw
    /// publisher's Ordered frames depend on whether the channel is typed (`Frame::in_channel`).
    #[inline(always)]
    pub(super) fn shape(&self) -> Shape {
        Frame::<T, M>::known_or(self.raw_shape)
    }

    pub(crate) fn new(shared: Arc<Shared>) -> Result<Self> {
        shared.check_health()?;
        let recheck = K::FANOUT.then_some(crate::readiness::FANOUT_ROOM_RECHECK);
        let readiness = Readiness::new(Line::Room, recheck, &shared.name)?;
        let slot = shared.claim_slot(
            Role::Publisher,
            (0..shared.publishers as usize).map(|p| &*shared.publisher_slot(p).holder),
        )?;
        let barrier_reaches_us = crate::platform::register_fast_side();
        let release_slot = |shared: &Shared| protocol::release_slot(&shared.publisher_slot(slot).holder.token);
        let raw_shape = Frame::<T, M>::in_channel(shared.fixed_len);
        let tail = match shared.recover_tail(slot, raw_shape) {
            Ok(tail) => tail,
            Err(e) => {
                release_slot(&shared);
                return Err(e);
            }
        };
        // This process writes the ring of the slot it now holds, and no other.
        if let Err(e) = shared.ring(slot).make_writable(&shared.name) {
            release_slot(&shared);
            return Err(e);
        }
        // SAFETY: the four words live in the control mapping, which `shared` keeps
        // alive as long as the publisher holding these pointers.
        let progress = unsafe { ShmPtr::new(&*shared.publisher_slot(slot).progress) };
        // SAFETY: as for `progress`.
        let wake = unsafe { ShmPtr::new(&*shared.hot().wake) };
        // SAFETY: as for `progress`.
        let room = unsafe { ShmPtr::new(&*shared.hot().room) };
        // SAFETY: as for `progress`.
        let sequence = unsafe { ShmPtr::new(&shared.hot().sequence.next) };
        // SAFETY: as for `progress`.
        let sole_taker = unsafe { ShmPtr::new(&shared.hot().sequence.sole_taker) };
        // SAFETY: the view is kept in this publisher next to its `Arc<Shared>`, which owns
        // the ring's mapping and so outlives every use of the view.
        let view = unsafe { shared.ring(slot).view() };
        // SAFETY: the ring's mapping was just made writable and stays so until `drop`, and
        // this publisher holds its slot: it is the one writer.
        let ring = unsafe { view.writable() };
        let mut publisher = Publisher {
            ring,
            hot: CachePadded::new(WriteState {
                tail,
                limit: 0,
                published: 0,
                backpressured: 0,
                wanted: 0,
                frontier: shared.publisher_slot(slot).overwrite.frontier.load(Ordering::Relaxed),
            }),
            window: shared.window as u64,
            frontier_step: shared.frontier_step(),
            max_len: shared.max_message_len,
            raw_shape,
            progress,
            wake,
            room,
            readiness,
            barrier_reaches_us,
            sequence,
            sole_taker,
            taking: protocol::Taking::Shared,
            last_reap: None,
            held: None,
            slot,
            health: shared.health(),
            shared,
            expects_subscriber: false,
            strategy: Some(Box::new(Adaptive::default())),
            fault: FaultRecord::default(),
            _marker: KindMarker::default(),
            #[cfg(feature = "tokio")]
            reactor: Default::default(),
            _single_writer: SingleUser::default(),
        };
        let progress = publisher.progress.get();
        // A previous holder that died may have left numbers pending; they are lost, and
        // this holder takes only fresh ones.
        protocol::clear_pending(&progress.pending);
        if M::ORDERED {
            // On failure `publisher` drops, which frees the slot.
            publisher.taking = publisher.join_takers()?;
        }
        protocol::report_tail(&progress.tail, tail);
        publisher.hot.published = progress.published.load(Ordering::Relaxed);
        publisher.hot.backpressured = progress.backpressured.load(Ordering::Relaxed);
        // On failure `publisher` drops, which frees the slot.
        if let Err(small) = publisher.refresh_limit() {
            return Err(publisher.fault.full(small));
        }
        // The first limit is no sign of a subscriber; one holding the slot now is.
        publisher.expects_subscriber = !K::FANOUT && publisher.subscribers().tethered > 0;
        Ok(publisher)
    }

    /// Ordered mode: joins the publishers that take sequence numbers
    /// (`protocol::join_takers`). This one takes them alone if it is the only one and
    /// joiners' barriers reach its process (the Linux layer's membarrier); otherwise it
    /// shares them, after waiting out a sole taker caught mid-take.
    #[cold]
    fn join_takers(&self) -> Result<protocol::Taking> {
        let shared = &*self.shared;
        let may_take_alone = cfg!(all(target_os = "linux", not(salias_portable))) && self.barrier_reaches_us;
        let barrier = || crate::platform::heavy_barrier() == crate::platform::Barrier::Done;
        // The former sole taker (its tag is its slot + 1) is mid-take: TAKING, and alive.
        let busy = |tag: u64| {
            let Some(slot) = (tag as usize)
                .checked_sub(1)
                .filter(|&slot| slot < shared.publishers as usize)
            else {
                return false; // not a slot: a hostile value, nobody to wait for
            };
            let slot = shared.publisher_slot(slot);
            let token = slot.holder.token.load(Ordering::Acquire);
            slot.progress.pending.load(Ordering::Acquire) == crate::wire::layout::PENDING_TAKING
                && token != crate::wire::layout::SLOT_FREE
                && crate::platform::holder_alive(token)
        };
        let tag = self.slot as u64 + 1;
        protocol::join_takers(self.sole_taker.get(), tag, may_take_alone, barrier, busy).map_err(|_| Error::Platform {
            call: "membarrier",
            object: shared.name.clone(),
            errno: None,
            hint: "another publisher of this Ordered channel takes sequence numbers alone, and to share them this \
                       process must run an expedited global membarrier, which it could not (a seccomp filter?): \
                       allow membarrier(2) for it"
                .into(),
        })
    }

    /// The publisher slot (and ring) this publisher owns.
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// Messages this slot has published, including by earlier holders.
    pub fn published(&self) -> u64 {
        self.hot.published
    }

    /// The subscribers connected now: slots held by a live process, by kind (on an Mpsc
    /// channel, its one subscriber counts as tethered). Checks each holder (system calls):
    /// for deciding whether to publish at all, not for every message.
    ///
    /// ```
    /// # let name = format!("doc-publisher-subscribers-{}", std::process::id());
    /// let channel = salias::RawFifoFanout::create(&salias::Config::new(&name))?;
    /// let publisher = channel.publisher()?;
    /// assert_eq!(publisher.subscribers(), salias::status::SubscriberCount { tethered: 0, lossy: 0 });
    /// let (_tethered, _lossy) = (channel.subscriber()?, channel.lossy_subscriber()?);
    /// assert_eq!(publisher.subscribers(), salias::status::SubscriberCount { tethered: 1, lossy: 1 });
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn subscribers(&self) -> crate::status::SubscriberCount {
        let shared = &*self.shared;
        let mut count = crate::status::SubscriberCount::default();
        for s in 0..shared.subscribers as usize {
            let slot = shared.subscriber_slot(s);
            if shared.live_holders(std::iter::once(&*slot.holder)) == 0 {
                continue;
            }
            if K::FANOUT && slot.flow.kind.load(Ordering::Relaxed) != crate::wire::layout::SUBSCRIBER_TETHERED {
                count.lossy += 1;
            } else {
                count.tethered += 1;
            }
        }
        count
    }

    /// Offers this slot has had refused for lack of room.
    pub fn backpressured(&self) -> u64 {
        self.hot.backpressured
    }

    /// Whether the channel's name still leads to this handle's channel, or the channel was
    /// removed or replaced since (see [`NameState`](crate::region::NameState)). A few system
    /// calls; for cold paths.
    pub fn name_state(&self) -> Result<crate::region::NameState> {
        self.shared.name_state()
    }

    /// The full error behind the last [`PublishError::Corrupt`], [`Truncated`] or
    /// [`Inherited`] this publisher returned: what was found, and where. Built only when
    /// such a failure happens; `None` if none has.
    ///
    /// [`Truncated`]: PublishError::Truncated
    /// [`Inherited`]: PublishError::Inherited
    pub fn fault(&self) -> Option<Error> {
        self.fault.get()
    }

    /// Replaces the strategy blocking sends wait with (default [`Adaptive`]).
    pub fn set_wait_strategy(&mut self, strategy: impl WaitStrategy + 'static) {
        self.strategy = Some(Box::new(strategy));
    }

    /// Retries `attempt` while it is backpressured, waiting with the wait strategy.
    #[inline(always)]
    fn block<R>(
        &mut self,
        timeout: Option<Duration>,
        mut attempt: impl FnMut(&mut Self) -> Result<R, PublishError>,
    ) -> Result<R, PublishError> {
        // The first attempt mostly succeeds: it pays for no strategy or deadline, which a
        // ping-pong's echo would otherwise carry on its critical path every message.
        match attempt(self) {
            Err(PublishError::Backpressured) => self.block_slow(timeout, attempt),
            done => done,
        }
    }

    /// `block` once the first attempt was backpressured.
    #[cold]
    #[inline(never)]
    fn block_slow<R>(
        &mut self,
        timeout: Option<Duration>,
        mut attempt: impl FnMut(&mut Self) -> Result<R, PublishError>,
    ) -> Result<R, PublishError> {
        let mut strategy = self.strategy.take().unwrap_or_else(|| Box::new(Adaptive::default()));
        let mut waiter = Waiter::new(timeout);
        let outcome = loop {
            match attempt(self) {
                Err(PublishError::Backpressured) => {}
                done => break done,
            }
            // Parked on the room line: a subscriber's release wakes it.
            let this = &*self;
            if !waiter.wait(&mut *strategy, Some(this.room.get()), &mut || this.room_appeared()) {
                break Err(PublishError::TimedOut);
            }
        };
        self.strategy = Some(strategy);
        outcome
    }
}

impl<T: Payload, M: Mode, K: Topology> Drop for Publisher<T, M, K> {
    fn drop(&mut self) {
        // Out of tokio's epoll set while the descriptor is still open.
        #[cfg(feature = "tokio")]
        self.reactor.release();
        if !self.shared.is_ours() {
            // Inherited across fork(): the slot is the parent's, and so are its frames.
            self.shared.ring(self.slot).make_read_only();
            return;
        }
        // The tail is reported before the slot is freed, so a successor starts after it.
        self.publish_progress();
        // Read-only before the slot is free: once another process holds it, this one
        // cannot write its frames.
        self.shared.ring(self.slot).make_read_only();
        // Every number it took is committed: the next publisher may take them alone.
        protocol::leave_takers(self.sole_taker.get(), self.taking);
        protocol::release_slot(&self.shared.publisher_slot(self.slot).holder.token);
        // Subscribers waiting for messages look again: this may have been the last publisher.
        crate::wait::wake_everyone(self.wake.get());
    }
}

impl<T: Payload, M: Mode, K: Topology> std::fmt::Debug for Publisher<T, M, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher")
            .field("channel", &self.shared.name)
            .field("slot", &self.slot)
            .field("position", &self.hot.tail)
            .field("published", &self.hot.published)
            .field("backpressured", &self.hot.backpressured)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Side by side in a `Vec`, no two publishers' hot state shares a cache line pair:
    /// each handle starts and ends on a boundary of its padding.
    #[test]
    fn publishers_side_by_side_share_no_hot_line() {
        type P = Publisher<crate::Bytes>;
        // 128 bytes on x86-64 and AArch64 (adjacent-line prefetch), at least a line elsewhere.
        assert!(align_of::<CachePadded<WriteState>>() >= 64);
        assert_eq!(align_of::<P>(), align_of::<CachePadded<WriteState>>());
    }
}
