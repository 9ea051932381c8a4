//! The receiving end: a [`Subscriber`] reads every publisher ring in place and hands out
//! borrowed views of the messages.
//!
//! A message stays in the ring while its view ([`Received`]) lives; releasing it only moves
//! a local position. The subscriber tells publishers about freed room in batches (every
//! quarter window, and whenever it runs out of messages), so receiving costs no shared
//! write per message.
//!
//! In FIFO mode the rings are drained in bursts, round robin. In Ordered mode the
//! subscriber delivers strictly by global sequence: the message numbered `next` is at the
//! head of exactly one ring, because each publisher's numbers increase along its ring.
//!
//! By job: `reader` reads one ring in place and releases room, `select` picks the next
//! message (FIFO or Ordered), `health` notices what has gone wrong, `recv` is the receive
//! API, `received` what it hands out, and `readiness` the descriptor a poll loop watches
//! and the waking of publishers that wait for room.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::error::{Error, Result, Role};
use crate::fault::FaultRecord;
use crate::kind::{Fifo, GlobalOrder, KindMarker, Mode, Mpsc, Topology};
use crate::message::{Frame, Payload};
use crate::protocol::{self};
use crate::readiness::{Line, Readiness};
use crate::region::Shared;
use crate::wait::{Adaptive, WaitStrategy};
use crate::wire::frame::Shape;
use crate::wire::layout::{CURSOR_UNTETHERED, MAX_POSITION, SUBSCRIBER_LOSSY, SUBSCRIBER_TETHERED, ShmPtr, WakeWord};
use crate::wire::ring::{FrameAt, ReadOnly, Ring};

mod health;
mod history;
mod lossy;
mod overrun;
mod presence;
mod reader;
mod readiness;
mod received;
mod recv;
mod select;

pub use history::Start;
pub(crate) use history::frame_before;
pub use lossy::{Copied, Loss, Losses, LossySubscriber};
pub use received::{MessageInfo, Received, ReceivedBytes};

/// This subscriber's state for one publisher ring.
struct Reader {
    /// The ring, as this process maps every ring it does not write: read-only.
    ring: Ring<ReadOnly>,
    /// Position of the next frame to read.
    head: u64,
    /// Position last stored to the shared cursor.
    released: u64,
    cursor: ShmPtr<AtomicU64>,
    /// `CURSOR_UNTETHERED` once this subscriber is lossy (stored with every release, so no
    /// publisher waits for it), 0 while tethered.
    untethered: u64,
}

/// FIFO fanout: what a ring's messages are counted from, so a lossy subscriber knows
/// exactly how many it missed. Kept apart from `Reader`, which every receive touches.
#[derive(Clone, Copy, Default)]
struct RingCount {
    /// Once known: a position the reader passed and how many messages lie before it.
    mark: Option<(u64, u64)>,
    /// Raw frames moved past since `mark` (typed frames count by position).
    frames: u64,
}

/// A subscriber's process-local state that every receive writes. Padded to its own cache
/// lines: several subscribers of one process, kept side by side (a `Vec` of them, one per
/// thread), would otherwise false-share it on every message.
struct ReadState {
    /// The ring FIFO selection drains now, and how many messages it took from it in a row.
    current: Cell<usize>,
    burst: Cell<u32>,
    received: u64,
    /// `received` when a receive last found nothing left to take: how many messages were
    /// taken since says whether the subscriber is behind its publishers (`run` reads
    /// ahead).
    caught_up_at: u64,
    /// Consecutive searches that found nothing.
    misses: u32,
}

/// Where the next message is: its ring, payload length, and global sequence (Ordered).
#[derive(Clone, Copy)]
pub(crate) struct Next {
    ring: usize,
    /// The frame at that ring's head, its address computed once by the search.
    frame: FrameAt<ReadOnly>,
    len: usize,
    sequence: u64,
    /// Ordered mode: numbers lost right before this message (their publisher died).
    gap_before: u64,
}

/// Sequence numbers an ordered subscriber found missing: each was taken by a publisher
/// that died before committing it, or declared lost by a live one
/// ([`Publisher::publish_gap`](crate::Publisher::publish_gap), as the zenoh bridge does
/// for numbers lost on the way). Never a silent hole: the first message after a gap also
/// reports it (`gap_before`). A declared gap counts as one event; a run of numbers that
/// dead publishers held, as one.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-gaps-{}", std::process::id());
/// let channel = salias::OrderedMpsc::<Tick>::create(&Config::new(&name))?;
/// let subscriber = channel.subscriber()?;
/// // No publisher has died holding a number: nothing is missing.
/// assert_eq!(subscriber.gaps(), &salias::receive::Gaps::default());
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gaps {
    /// How many separate gaps were found.
    pub events: u64,
    /// How many sequence numbers were missing in all.
    pub missing: u64,
    /// The most recent gap: its first and one-past-last missing number.
    pub last: Option<std::ops::Range<u64>>,
}

/// Receives messages of type `T` from every publisher of a channel.
///
/// `Send` but not `Sync`. Dropping it releases everything it read and frees its slot. On
/// an `Mpsc` channel the next subscriber continues exactly where this one stopped; on a
/// `Fanout` channel the slot stops holding publishers back.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-subscriber-type-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut publisher = channel.publisher()?;
/// let mut subscriber = channel.subscriber()?;
/// publisher.offer(&Tick { seq: 1 })?;
/// let tick = subscriber.recv()?; // a view into the ring, released when dropped
/// assert_eq!((tick.seq, tick.publisher_slot()), (1, 0));
/// # Ok::<(), salias::Error>(())
/// ```
pub struct Subscriber<T: Payload, M: Mode = Fifo, K: Topology = Mpsc> {
    shared: Arc<Shared>,
    slot: usize,
    readers: Box<[Reader]>,
    /// FIFO fanout: one per reader (`RingCount`).
    counts: Box<[RingCount]>,
    /// Bytes in one view of each ring.
    capacity: u64,
    max_len: usize,
    fixed_len: Option<usize>,
    /// The frames of a raw subscriber (`Frame::in_channel`); a typed one uses its type's,
    /// known at compile time (`shape`).
    raw_shape: Shape,
    release_every: u64,
    /// What every receive writes, on cache lines of its own (see `ReadState`).
    hot: CachePadded<ReadState>,
    /// Ordered mode: the sequence number to deliver next.
    next_sequence: u64,
    /// Ordered mode: frames passed over because they were numbered before this subscriber
    /// joined.
    skipped: u64,
    /// Ordered mode: numbers lost right before the next message to deliver.
    gap_before: u64,
    gaps: Gaps,
    /// When health was last checked.
    last_health_check: Option<Instant>,
    wake: ShmPtr<WakeWord>,
    /// The line publishers waiting for room sleep on; releasing room wakes them.
    room: ShmPtr<WakeWord>,
    /// Whether sleepers' barriers reach this process; if not, it fences before looking
    /// for publishers waiting for room.
    barrier_reaches_us: bool,
    /// The descriptor a poll loop watches (`as_fd`).
    readiness: Readiness,
    /// This slot's saved resume sequence (ordered Mpsc).
    resume: ShmPtr<AtomicU64>,
    /// Taken out while a blocking call runs, so waiting never allocates.
    strategy: Option<Box<dyn WaitStrategy>>,
    /// The channel's health cell (`platform::guard`), checked on every call.
    health: &'static AtomicU32,
    /// The full error behind the last broken-channel failure returned.
    fault: FaultRecord,
    /// The readiness descriptor's registration with a tokio runtime (`recv_async`).
    #[cfg(feature = "tokio")]
    pub(crate) reactor: crate::readiness::Reactor,
    /// Fanout: reads as a lossy subscriber (copies, validated against overwrites).
    lossy: bool,
    /// Fanout, joined tethered on a channel with a tether timeout: a publisher may demote
    /// it, so every receive looks whether one did (stays set once demoted).
    tether: bool,
    /// A publisher demoted it: borrowing receives refuse (`ReceiveError::Demoted`).
    demoted: bool,
    /// Whether it expects publishers, to report when every one is gone (`presence`).
    presence: presence::Presence,
    /// FIFO, joined with `Start::Last(n)`: per ring, the messages of the last `n` the ring
    /// no longer held, which the lossy subscriber reports before that ring's first.
    history_missed: Box<[u64]>,
    _marker: KindMarker<T, M, K>,
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// The frames this subscriber reads: a constant for a message type and for FIFO; a raw
    /// subscriber's Ordered frames depend on whether the channel is typed (`Frame::in_channel`).
    #[inline(always)]
    pub(super) fn shape(&self) -> Shape {
        Frame::<T, M>::known_or(self.raw_shape)
    }

    /// Claims subscriber slot `slot`, or any free one. A fanout subscriber joins at the
    /// current end of every ring; an Mpsc subscriber resumes where the last one stopped.
    ///
    /// A `lossy` one (fanout only) is one publishers never wait for. A fanout one starts
    /// where `start` says.
    pub(crate) fn new(shared: Arc<Shared>, slot: Option<usize>, lossy: bool, start: Start) -> Result<Self> {
        shared.check_health()?;
        let readiness = Readiness::new(Line::Messages, None, &shared.name)?;
        // Registered before the claim: a process's first registration waits for every CPU
        // (milliseconds), and a claimed slot shows as held in `channel_status` before this
        // subscriber picks its starting positions; messages published meanwhile lie before
        // where it starts, which surprises whoever took the held slot for a joined one.
        let barrier_reaches_us = crate::platform::register_fast_side();
        let slot = match slot {
            Some(index) => shared.claim_subscriber_slot_at(index)?,
            None => shared.claim_slot(
                Role::Subscriber,
                (0..shared.subscribers as usize).map(|s| &*shared.subscriber_slot(s).holder),
            )?,
        };
        // SAFETY: the wake words and this slot's resume word live in the
        // control mapping, which `shared` keeps alive as long as this subscriber.
        let wake = unsafe { ShmPtr::new(&*shared.hot().wake) };
        // SAFETY: as for `wake`.
        let room = unsafe { ShmPtr::new(&*shared.hot().room) };
        // SAFETY: as for `wake`.
        let resume = unsafe { ShmPtr::new(&*shared.subscriber_slot(slot).next_sequence) };
        let mut subscriber = Subscriber {
            slot,
            readers: Box::default(),
            counts: Box::default(),
            capacity: shared.capacity as u64,
            max_len: shared.max_message_len,
            fixed_len: shared.fixed_len,
            raw_shape: Frame::<T, M>::in_channel(shared.fixed_len),
            release_every: (shared.window as u64 / 4).max(1),
            hot: CachePadded::new(ReadState {
                current: Cell::new(0),
                burst: Cell::new(0),
                received: 0,
                caught_up_at: 0,
                misses: 0,
            }),
            next_sequence: 0,
            skipped: 0,
            gap_before: 0,
            gaps: Gaps::default(),
            last_health_check: None,
            wake,
            room,
            barrier_reaches_us,
            readiness,
            resume,
            strategy: Some(Box::new(Adaptive::default())),
            health: shared.health(),
            fault: FaultRecord::default(),
            #[cfg(feature = "tokio")]
            reactor: Default::default(),
            lossy: K::FANOUT && lossy,
            tether: K::FANOUT && !lossy && shared.tether_timeout.is_some(),
            demoted: false,
            presence: presence::Presence::new(),
            history_missed: Box::default(),
            _marker: KindMarker::default(),
            shared,
        };
        // On failure `subscriber` drops, which frees the slot.
        subscriber.attach(start)?;
        subscriber.note_publishers_at_join();
        // Publishers refused for want of a subscriber (`NoSubscriber`) and armed look again.
        crate::wait::wake_everyone(subscriber.room.get());
        Ok(subscriber)
    }

    /// Sets up the per-ring readers at this slot's starting positions.
    pub(super) fn attach(&mut self, start: Start) -> Result<()> {
        let shared = &*self.shared;
        let rings = shared.publishers as usize;
        let mut heads = Vec::with_capacity(rings);
        // Tethered: where each ring's cursor stands after the join (below its head when it
        // holds history), and from where a walk back may take frames.
        let mut floors = Vec::with_capacity(rings);
        if K::FANOUT {
            let kind = if self.lossy {
                SUBSCRIBER_LOSSY
            } else {
                SUBSCRIBER_TETHERED
            };
            let flow = &shared.subscriber_slot(self.slot).flow;
            flow.kind.store(kind, Ordering::Relaxed);
            flow.missed.store(0, Ordering::Relaxed);
        }
        if K::FANOUT && self.lossy {
            // Publishers never wait for a lossy subscriber, so it needs no join handshake:
            // what it reads is validated against overwrites. The cursor is for monitors.
            for ring in 0..rings {
                let head = protocol::reported_tail(&shared.publisher_slot(ring).progress.tail);
                protocol::release(&**shared.cursor(self.slot, ring), head | CURSOR_UNTETHERED);
                heads.push(head);
            }
            // As after a join: numbers taken from here on lie past the heads just read.
            self.next_sequence = shared.hot().sequence.next.load(Ordering::Acquire);
        } else if K::FANOUT {
            // With history, it holds as much of each ring as a publisher cannot yet be
            // overwriting: all but the step a publisher writes ahead of its tail.
            let behind = match start {
                Start::End => 0,
                _ => (shared.capacity as u64).saturating_sub(shared.frontier_step()),
            };
            protocol::join(
                rings,
                behind,
                |ring| &shared.publisher_slot(ring).progress.tail,
                |ring| &**shared.cursor(self.slot, ring),
                |_, head, floor| {
                    heads.push(head);
                    floors.push(floor);
                },
            );
            // Every message numbered from here on lies past the heads just chosen (its
            // publisher had not reported it yet); lower numbers still in the rings were
            // sent before we joined and are passed over.
            self.next_sequence = shared.hot().sequence.next.load(Ordering::Acquire);
        } else {
            // SYNC POINT mpsc-resume (successor side): after the slot's hand-off, the last
            // holder's cursors and resume point, each stored with Release
            // (`store_cursor`, `save_resume_point`), are where this subscriber starts.
            for ring in 0..rings {
                heads.push(shared.cursor(self.slot, ring).load(Ordering::Acquire));
            }
            self.next_sequence = shared.subscriber_slot(self.slot).next_sequence.load(Ordering::Acquire);
        }
        if self.next_sequence >= MAX_POSITION {
            return Err(shared.corrupt(format!(
                "the starting sequence number {} is out of range",
                self.next_sequence
            )));
        }
        let mut readers = Vec::with_capacity(rings);
        floors.resize(rings, 0);
        for (ring, (head, floor)) in heads.into_iter().zip(floors).enumerate() {
            if !head.is_multiple_of(shared.frame_align as u64) || head >= MAX_POSITION {
                return Err(shared.corrupt(format!(
                    "subscriber {}'s cursor in ring {ring} is {head}, which is not a frame-aligned position",
                    self.slot
                )));
            }
            readers.push(Reader {
                // SAFETY: the ring and control mappings live as long as `shared`, which
                // this subscriber holds.
                ring: unsafe { shared.ring(ring).view() },
                head,
                // Tethered, the cursor the join stored (a history join's below `head`);
                // the release that moves it on compares against it.
                released: if K::FANOUT && !self.lossy { floor } else { head },
                // SAFETY: as above.
                cursor: unsafe { ShmPtr::new(&**shared.cursor(self.slot, ring)) },
                untethered: if self.lossy { CURSOR_UNTETHERED } else { 0 },
            });
        }
        self.readers = readers.into_boxed_slice();
        self.counts = vec![RingCount::default(); rings].into_boxed_slice();
        let tails: Vec<u64> = self.readers.iter().map(|reader| reader.head).collect();
        // A lossy subscriber's reading protocol checks every frame against overwrites; a
        // tethered one holds, from its floor, everything it walks back to.
        let went_back = if K::FANOUT { self.rewind(start) } else { vec![0; rings] };
        if K::FANOUT && !self.lossy {
            // The cursor moves on from the floor to where reading starts.
            for ring in 0..rings {
                self.store_cursor(ring);
            }
        }
        let last = match start {
            Start::Last(n) if K::FANOUT && !M::ORDERED => Some(n),
            _ => None,
        };
        if !M::ORDERED && (self.lossy || self.tether || last.is_some()) {
            // What it may miss one day (and what it missed of the last n) is counted
            // from here.
            self.count_from_marks()?;
        }
        if let Some(n) = last {
            self.history_missed = self.history_shortfall(n, &went_back, &tails);
        }
        Ok(())
    }

    /// The subscriber slot this handle holds.
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// Messages this handle has received.
    pub fn received(&self) -> u64 {
        self.hot.received
    }

    /// Messages taken since a receive last found nothing left: `run` reads ahead from
    /// `READ_AHEAD_AFTER` on.
    #[inline(always)]
    pub(crate) fn taken_since_caught_up(&self) -> u64 {
        self.hot.received.wrapping_sub(self.hot.caught_up_at)
    }

    /// FIFO, joined with [`Start::Last(n)`](Start::Last): per publisher slot, how many of
    /// that publisher's last `n` messages its ring no longer held when this subscriber
    /// joined (its first message from that publisher comes after them). Empty otherwise.
    pub fn history_missed(&self) -> &[u64] {
        &self.history_missed
    }

    /// Whether the channel's name still leads to this handle's channel, or the channel was
    /// removed or replaced since (see [`NameState`](crate::region::NameState)). A few system
    /// calls; for cold paths.
    pub fn name_state(&self) -> Result<crate::region::NameState> {
        self.shared.name_state()
    }

    /// The full error behind the last [`ReceiveError::Corrupt`], [`Truncated`] or
    /// [`Inherited`] this subscriber returned: what was found, and where. Built only when
    /// such a failure happens; `None` if none has.
    ///
    /// [`ReceiveError::Corrupt`]: crate::ReceiveError::Corrupt
    /// [`Truncated`]: crate::ReceiveError::Truncated
    /// [`Inherited`]: crate::ReceiveError::Inherited
    pub fn fault(&self) -> Option<Error> {
        self.fault.get()
    }

    /// Replaces the strategy blocking receives wait with (default [`Adaptive`]).
    pub fn set_wait_strategy(&mut self, strategy: impl WaitStrategy + 'static) {
        self.strategy = Some(Box::new(strategy));
    }
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// Writes one byte through this process's mapping of ring `ring`, for tests of the
    /// mappings' protection: the process faults (SIGSEGV) unless a publisher of this
    /// process holds that ring's slot. Not API.
    #[cfg(salias_testing)]
    #[doc(hidden)]
    pub fn write_through_ring_mapping(&self, ring: usize) {
        let last = self.shared.ring(ring).base().wrapping_add(self.shared.capacity - 1);
        // SAFETY: the last byte of the ring's first view, inside the mapping `shared` keeps;
        // no reference covers it and a test hook's write may only garble the test's own
        // channel. Whether the mapping lets it through is what the caller tests.
        unsafe { last.write_volatile(0xa5) };
    }

    /// Waits as a waiting `recv` does until a look finds a message, and leaves it for the
    /// next look, for tests of what finding a message twice changes. Not API.
    #[cfg(salias_testing)]
    #[doc(hidden)]
    pub fn wait_until_found(&mut self) -> Result<(), crate::handle_error::ReceiveError> {
        self.wait_ready(None)
    }
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// The global sequence number of the next message this subscriber will deliver.
    pub fn next_sequence(&self) -> u64
    where
        M: GlobalOrder,
    {
        self.next_sequence
    }

    /// Messages passed over because they were numbered before this subscriber joined
    /// (or, after a crash, were already delivered to the previous subscriber).
    pub fn skipped_before_join(&self) -> u64
    where
        M: GlobalOrder,
    {
        self.skipped
    }

    /// Sequence numbers found missing because their publishers died holding them.
    pub fn gaps(&self) -> &Gaps
    where
        M: GlobalOrder,
    {
        &self.gaps
    }
}

impl<T: Payload, M: Mode, K: Topology> Drop for Subscriber<T, M, K> {
    fn drop(&mut self) {
        // Out of tokio's epoll set while the descriptor is still open.
        #[cfg(feature = "tokio")]
        self.reactor.release();
        if !self.shared.is_ours() {
            // Inherited across fork(): the slot is the parent's.
            return;
        }
        if K::FANOUT {
            // Stop holding publishers back (every ring, even if joining failed midway).
            for ring in 0..self.shared.publishers as usize {
                protocol::leave(&**self.shared.cursor(self.slot, ring));
            }
            let flow = &self.shared.subscriber_slot(self.slot).flow;
            flow.kind.store(SUBSCRIBER_TETHERED, Ordering::Relaxed);
            self.wake_publishers();
        } else {
            // Leave everything the next subscriber needs to resume exactly here.
            self.save_resume_point();
            self.release_all();
        }
        let slot = self.shared.subscriber_slot(self.slot);
        protocol::release_slot(&slot.holder.token);
        // Publishers waiting for room look again: on an Mpsc channel nobody will release it.
        crate::wait::wake_everyone(self.room.get());
    }
}

impl<T: Payload, M: Mode, K: Topology> std::fmt::Debug for Subscriber<T, M, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriber")
            .field("channel", &self.shared.name)
            .field("slot", &self.slot)
            .field("received", &self.hot.received)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Side by side in a `Vec`, no two subscribers' hot state shares a cache line pair.
    #[test]
    fn subscribers_side_by_side_share_no_hot_line() {
        type S = Subscriber<crate::Bytes>;
        // 128 bytes on x86-64 and AArch64 (adjacent-line prefetch), at least a line elsewhere.
        assert!(align_of::<CachePadded<ReadState>>() >= 64);
        assert_eq!(align_of::<S>(), align_of::<CachePadded<ReadState>>());
    }
}
