//! Ordered mode: taking global sequence numbers, the subscriber's merge by sequence, and
//! the decision that a number is lost because the publisher holding it died.

use std::sync::atomic::Ordering;

use super::Word;
use crate::wire::layout::{MAX_POSITION, PENDING_NONE, PENDING_TAKING, SOLE_NOBODY, SOLE_SHARED};

/// A publisher's ordered-mode words.
#[derive(Debug)]
pub struct SequenceWords<'w, W> {
    /// The channel's next global sequence number.
    pub sequence: &'w W,
    /// Which publisher may take numbers alone ([`join_takers`]).
    pub sole_taker: &'w W,
    /// The first number this publisher took and has not committed, `PENDING_NONE`, or
    /// `PENDING_TAKING` while it takes some.
    pub pending: &'w W,
    /// How many numbers from `pending` on it took.
    pub pending_count: &'w W,
}

/// Publisher: takes `count` consecutive global sequence numbers, returning the first, and
/// marks them pending until `clear_pending`. `alone` is the tag [`join_takers`] gave this
/// publisher (`SOLE_NOBODY` if it shares): while `sole_taker` still holds it, no other
/// publisher takes numbers, so a plain load and store take them. A locked add would wait
/// for every store still in flight (the last frame's commit, on a line the subscriber is
/// polling) and cost about two thirds of an ordered offer (doc/performance-notes.md).
#[inline(always)]
pub fn take_sequence<W: Word>(words: &SequenceWords<'_, W>, count: u64, alone: u64) -> u64 {
    // SYNC POINT sequence-taken (publisher side): TAKING is stored before the number is
    // taken, which is Release, so a subscriber that sees the advanced counter (Acquire, in
    // `find_gap`) also sees that this publisher holds or is taking numbers.
    words.pending.store(PENDING_TAKING, Ordering::Relaxed);
    // SYNC POINT sole-taker (taker side): TAKING is stored before the look at
    // `sole_taker`. A joiner marks the numbers shared, runs the process-wide barrier, then
    // reads this publisher's `pending` (`join_takers`): the barrier is the hardware fence
    // here, so either this look sees the mark or the joiner sees TAKING and waits.
    W::taker_fence();
    let first = if alone != SOLE_NOBODY && words.sole_taker.load(Ordering::Relaxed) == alone {
        let first = words.sequence.load(Ordering::Acquire);
        words.sequence.store(first.wrapping_add(count), Ordering::Release);
        first
    } else {
        words.sequence.fetch_add(count, Ordering::AcqRel)
    };
    words.pending_count.store(count, Ordering::Relaxed);
    // SYNC POINT pending (Release side): the count is visible with the marker, and the
    // number taken alone before both.
    words.pending.store(first, Ordering::Release);
    first
}

/// How a publisher joining an Ordered channel takes its numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taking {
    /// Alone, with this tag for [`take_sequence`], until another publisher joins.
    Alone(u64),
    /// With a locked add, as every other publisher does from now on.
    Shared,
}

/// What stands in the way of [`join_takers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinError {
    /// Another publisher took numbers alone, and the barrier that would make it stop
    /// could not run in this process.
    NoBarrier,
}

/// Publisher, once, as it connects: decides how it takes numbers. `tag` is its slot + 1;
/// it may take numbers alone only if `may_take_alone` (the joiners' barrier reaches its
/// process). The first publisher takes them alone; the next one marks them shared for
/// good, runs `barrier` (a full fence in every registered process: the sole taker's
/// next look at `sole_taker` sees the mark), and waits while the sole taker is caught
/// mid-take (`busy(former tag)`: its `pending` is TAKING and it lives), so that no number
/// it takes alone can equal one taken with an add. A slot's new holder inherits the tag
/// its dead predecessor left, since nobody else took numbers since.
pub fn join_takers<W: Word>(
    sole_taker: &W,
    tag: u64,
    may_take_alone: bool,
    barrier: impl FnOnce() -> bool,
    busy: impl Fn(u64) -> bool,
) -> Result<Taking, JoinError> {
    loop {
        let current = sole_taker.load(Ordering::Acquire);
        if may_take_alone && (current == SOLE_NOBODY || current == tag) {
            // SYNC POINT sole-taker handover (Acquire side): the last sole taker's numbers
            // (`leave_takers`, Release) are in the counter this one goes on from.
            if current == tag
                || sole_taker
                    .compare_exchange(SOLE_NOBODY, tag, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            {
                return Ok(Taking::Alone(tag));
            }
            continue;
        }
        // Any value but a slot's tag (and so anything a hostile peer wrote) is shared.
        let former = if current & SOLE_SHARED != 0 {
            current & !SOLE_SHARED
        } else {
            current
        };
        let shared = SOLE_SHARED | former;
        if current != shared
            && sole_taker
                .compare_exchange(current, shared, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            continue;
        }
        if former == SOLE_NOBODY || former == tag {
            // Nobody, or this slot's dead predecessor, took numbers alone.
            return Ok(Taking::Shared);
        }
        // SYNC POINT sole-taker (joiner side): the mark, then the barrier, then the look at
        // the former sole taker's `pending`. Every joiner waits out the former sole
        // taker, not only the one that marked: that one may have died before waiting.
        if !barrier() {
            return Err(JoinError::NoBarrier);
        }
        while busy(former) {
            std::hint::spin_loop();
            #[cfg(not(loom))]
            std::thread::yield_now();
            #[cfg(loom)]
            loom::thread::yield_now();
        }
        return Ok(Taking::Shared);
    }
}

/// Publisher, as it disconnects: a sole taker gives the role up, so the next publisher to
/// join may take numbers alone. Shared numbers stay shared.
pub fn leave_takers<W: Word>(sole_taker: &W, taking: Taking) {
    if let Taking::Alone(tag) = taking {
        // SYNC POINT sole-taker handover (Release side): every number this publisher took
        // is in the counter before another may take numbers alone.
        let _ = sole_taker.compare_exchange(tag, SOLE_NOBODY, Ordering::Release, Ordering::Relaxed);
    }
}

/// Publisher: every number it took is committed.
#[inline(always)]
pub fn clear_pending<W: Word>(pending: &W) {
    // SYNC POINT pending-cleared (Release side): the frames' commits come first, so a
    // subscriber that reads NONE (Acquire, in `find_gap`) then finds them at the heads.
    pending.store(PENDING_NONE, Ordering::Release);
}

/// What a subscriber sees of one publisher while checking for a gap.
#[derive(Debug)]
pub struct PublisherView<'w, W> {
    /// Whether the slot's holder is a live process.
    pub alive: bool,
    /// Its `pending` and `pending_count` words.
    pub pending: &'w W,
    /// See `pending`.
    pub pending_count: &'w W,
}

/// The committed frame at the head of a ring, as the subscriber sees it: a message, or
/// (Ordered) a hole frame declaring numbers lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Payload length; for a hole frame, `Head::HOLE` plus the count it declares lost
    /// (see [`Head::hole`]). Folded into one word so that the search hands a head back in
    /// two registers, as before there were holes.
    pub len: usize,
    /// Global sequence number (Ordered mode).
    pub sequence: u64,
}

impl Head {
    /// Marks `len` as a hole frame's: a message's length is a 32-bit field, so no message
    /// has this bit.
    pub const HOLE: usize = 1 << 63;

    /// The head of a hole frame declaring the `lost` numbers from `sequence` on lost
    /// (`lost` at most `u32::MAX`).
    pub fn hole(sequence: u64, lost: u32) -> Head {
        Head {
            len: Self::HOLE | lost as usize,
            sequence,
        }
    }

    /// Whether this is a hole frame's head.
    #[inline(always)]
    pub fn is_hole(&self) -> bool {
        self.len & Self::HOLE != 0
    }

    /// How many numbers from `sequence` on this hole frame declares lost; 0 for a message.
    #[inline(always)]
    pub fn lost(&self) -> u64 {
        if self.is_hole() {
            (self.len & !Self::HOLE) as u64
        } else {
            0
        }
    }
}

/// The head of each ring a subscriber reads, and a way past a frame.
pub trait RingHeads {
    /// What reading a corrupt head returns.
    type Error;
    /// Where a head frame lies, as the caller goes on to read it (a subscriber's frame
    /// address), handed back with the frame [`next_in_order`] finds; `()` if unneeded.
    type At: Copy;
    /// The committed frame at the head of `ring`, if any, and where it lies; an error if
    /// it is corrupt.
    fn head_at(&self, ring: usize) -> Result<Option<(Head, Self::At)>, Self::Error>;
    /// The committed frame at the head of `ring`, if any; an error if it is corrupt.
    #[inline(always)]
    fn head(&self, ring: usize) -> Result<Option<Head>, Self::Error> {
        Ok(self.head_at(ring)?.map(|(head, _)| head))
    }
    /// Moves past the stale frame `head` at the head of `ring` without delivering it.
    fn pass_over(&mut self, ring: usize, head: Head);
    /// Moves past the hole frame `head` at the head of `ring`, numbered as wanted: its
    /// numbers are lost, a gap to report.
    fn pass_hole(&mut self, ring: usize, head: Head);
}

/// The message [`next_in_order`] found: its ring, its header, and where it lies.
#[derive(Clone, Copy, Debug)]
pub struct Found<At> {
    /// The ring whose head it is.
    pub ring: usize,
    /// Its header.
    pub head: Head,
    /// Where it lies ([`RingHeads::At`]).
    pub at: At,
}

/// Ordered subscriber: finds the frame numbered `wanted`, looking at `first_ring` first.
/// Frames numbered lower were sent before this subscriber joined (or, after a crash,
/// delivered to its predecessor) and are passed over, at most `max_skips` per call so a
/// peer flooding the rings with stale numbers cannot keep it busy forever. The frame
/// numbered `wanted` is at the head of exactly one ring, since each publisher's numbers
/// increase along its ring. A hole frame numbered `wanted` is passed with
/// [`RingHeads::pass_hole`] (counted with the skips), and the search goes on for the
/// number after it: only a message is returned.
#[inline]
pub fn next_in_order<H: RingHeads>(
    heads: &mut H,
    rings: usize,
    mut first_ring: usize,
    mut wanted: u64,
    max_skips: u32,
) -> Result<Option<Found<H::At>>, H::Error> {
    let mut step = 0;
    let mut skips = 0;
    // `ring_after` needs the start in range; a caller's last ring always is.
    if first_ring >= rings {
        first_ring = 0;
    }
    while step < rings {
        let ring = super::ring_after(first_ring, step, rings);
        match heads.head_at(ring)? {
            Some((head, at)) if head.sequence == wanted && !head.is_hole() => {
                return Ok(Some(Found { ring, head, at }));
            }
            Some((head, _)) if head.sequence == wanted && skips < max_skips => {
                heads.pass_hole(ring, head);
                skips += 1;
                // The next number may be anywhere: search again, from this ring. No
                // overflow: a hole's end was validated against the numbers taken.
                wanted += head.lost();
                (first_ring, step) = (ring, 0);
            }
            Some((head, _)) if head.sequence < wanted && skips < max_skips => {
                heads.pass_over(ring, head);
                skips += 1;
                // Look at this ring's next frame before moving on.
            }
            _ => step += 1,
        }
    }
    Ok(None)
}

/// Shared memory that [`find_gap`] found breaking the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapError<E> {
    /// Reading a ring's head failed.
    Head(E),
    /// The global sequence counter is out of range.
    CounterOutOfRange {
        /// Its value.
        taken: u64,
    },
    /// A ring's frame carries a number nobody ever took.
    NeverTaken {
        /// The ring.
        ring: usize,
        /// The frame's number.
        sequence: u64,
        /// How many numbers had been taken.
        taken: u64,
    },
}

/// Ordered subscriber waiting for `wanted`, which nothing delivers: decides whether
/// `wanted` can still arrive. Returns the end of the run of numbers that never can (each
/// was taken by a publisher that died before committing it), or `None` when `wanted` may
/// still come: nobody took it yet, or a live publisher holds it or may be taking it.
pub fn find_gap<'w, W: Word + 'w, H: RingHeads>(
    wanted: u64,
    sequence: &W,
    heads: &H,
    rings: usize,
    publisher: impl Fn(usize) -> PublisherView<'w, W>,
) -> Result<Option<u64>, GapError<H::Error>> {
    // SYNC POINT sequence-taken (subscriber side): pairs with `take_sequence`; every
    // publisher that took a number below `taken` has its marker set as we look below.
    let taken = sequence.load(Ordering::Acquire);
    if taken <= wanted {
        return Ok(None); // nobody has taken `wanted` yet: idle, not stuck
    }
    if taken >= MAX_POSITION {
        return Err(GapError::CounterOutOfRange { taken });
    }
    // The gap ends at the first number that still exists somewhere: at a ring head,
    // pending in a live publisher, or not taken yet.
    let mut end = taken;
    for ring in 0..rings {
        let view = publisher(ring);
        // The pending marker first, the ring head after. SYNC POINT pending and
        // pending-cleared (Acquire side): a number committed before its publisher cleared
        // or replaced the marker we read is visible at its head below.
        let pending = view.pending.load(Ordering::Acquire);
        let count = view.pending_count.load(Ordering::Acquire);
        if view.alive {
            match pending {
                PENDING_NONE => {}
                // Mid-fetch_add: it may be taking `wanted` right now. Look again later.
                PENDING_TAKING => return Ok(None),
                first if first <= wanted && wanted < first.saturating_add(count) => return Ok(None),
                first if first > wanted => end = end.min(first),
                _ => {}
            }
        }
        // A dead or departed publisher commits nothing more; what it committed counts.
        if let Some(head) = heads.head(ring).map_err(GapError::Head)? {
            // Re-read the counter: a number committed after our first read was taken
            // before its commit, so the fresh value covers every honest frame.
            let taken_now = sequence.load(Ordering::Acquire);
            if head.sequence >= taken_now {
                return Err(GapError::NeverTaken {
                    ring,
                    sequence: head.sequence,
                    taken: taken_now,
                });
            }
            end = end.min(head.sequence);
        }
    }
    Ok((end > wanted).then_some(end))
}
