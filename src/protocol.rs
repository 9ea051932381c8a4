//! The synchronisation protocol between publishers and subscribers, written once.
//!
//! Every step that orders memory between processes lives here, generic over the atomic
//! [`Word`]. Channels run these steps on shared memory with `std` atomics; the loom models
//! in `tests/loom.rs` (built with `--cfg loom`) run the very same functions on a
//! heap-backed ring with loom's atomics, which explore their interleavings and weak-memory
//! outcomes within a preemption bound. Each `SYNC POINT` names both ends of an ordering
//! pair. The one sequence kept elsewhere is a sleeper's (announce, barrier, last look,
//! futex wait: `wait::Park::park`), which the sleep model in `tests/loom.rs` follows.

use std::sync::atomic::Ordering;

use crate::error::{Error, Result};
use crate::layout::{COMMIT_KEY, CURSOR_IDLE, MAX_POSITION, PENDING_NONE, PENDING_TAKING};

/// A 64-bit atomic word and the fence of the same memory model.
pub trait Word {
    /// Atomic load.
    fn load(&self, order: Ordering) -> u64;
    /// Atomic store.
    fn store(&self, value: u64, order: Ordering);
    /// Atomic add, returning the previous value.
    fn fetch_add(&self, value: u64, order: Ordering) -> u64;
    /// A memory fence that orders accesses to words of this kind.
    fn fence(order: Ordering);
}

impl Word for std::sync::atomic::AtomicU64 {
    #[inline(always)]
    fn load(&self, order: Ordering) -> u64 {
        self.load(order)
    }
    #[inline(always)]
    fn store(&self, value: u64, order: Ordering) {
        self.store(value, order)
    }
    #[inline(always)]
    fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
        self.fetch_add(value, order)
    }
    #[inline(always)]
    fn fence(order: Ordering) {
        std::sync::atomic::fence(order)
    }
}

#[cfg(loom)]
impl Word for loom::sync::atomic::AtomicU64 {
    fn load(&self, order: Ordering) -> u64 {
        self.load(order)
    }
    fn store(&self, value: u64, order: Ordering) {
        self.store(value, order)
    }
    fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
        self.fetch_add(value, order)
    }
    fn fence(order: Ordering) {
        loom::sync::atomic::fence(order)
    }
}

// ---------------------------------------------------------------------------------------
// Frames

/// Publisher: makes the frame at `pos` visible. Its header and payload must be written.
#[inline(always)]
pub fn commit_frame<W: Word>(commit: &W, pos: u64) {
    // SYNC POINT frame-commit (Release side): header and payload become visible to a
    // subscriber that loads this word with Acquire (`is_committed`) and finds its key.
    commit.store(pos ^ COMMIT_KEY, Ordering::Release);
}

/// Subscriber: whether the frame at `pos` is committed; if so, its header and payload
/// may be read.
#[inline(always)]
pub fn is_committed<W: Word>(commit: &W, pos: u64) -> bool {
    // SYNC POINT frame-commit (Acquire side): pairs with `commit_frame`. A stale word from
    // an earlier lap holds a different position's key, so it never matches.
    commit.load(Ordering::Acquire) == pos ^ COMMIT_KEY
}

/// Publisher: reports every frame before `tail` committed, for monitors, joining
/// subscribers and the stuck-ring check.
#[inline(always)]
pub fn report_tail<W: Word>(tail_word: &W, tail: u64) {
    // SYNC POINT progress (Release side): the frames' commits come first, so whoever
    // reads `tail` with Acquire (`reported_tail`) sees every frame before it committed.
    tail_word.store(tail, Ordering::Release);
}

/// Reads a publisher's reported tail.
#[inline(always)]
pub fn reported_tail<W: Word>(tail_word: &W) -> u64 {
    // SYNC POINT progress (Acquire side): pairs with `report_tail`.
    tail_word.load(Ordering::Acquire)
}

// ---------------------------------------------------------------------------------------
// Room: cursors and the publisher's write limit

/// Subscriber: gives back everything before `head` to the ring's publisher.
#[inline(always)]
pub fn release<W: Word>(cursor: &W, head: u64) {
    // SYNC POINT ring-release (Release side): our reads of everything before `head`
    // happen before a publisher that loads this cursor (`write_limit`) overwrites it.
    cursor.store(head, Ordering::Release);
}

/// Fanout subscriber leaving: publishers stop waiting for this slot.
#[inline(always)]
pub fn leave<W: Word>(cursor: &W) {
    // SYNC POINT ring-release (Release side): as in `release`, for everything.
    cursor.store(CURSOR_IDLE, Ordering::Release);
}

/// A subscriber cursor no honest subscriber could have stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadCursor {
    /// The subscriber slot.
    pub subscriber: usize,
    /// The value found.
    pub cursor: u64,
}

/// Publisher at `tail`: how far it may write, given the cursors of the ring's
/// subscriber slots: `slowest + window`. In fanout mode, idle slots are skipped.
#[inline]
pub fn write_limit<'w, W: Word + 'w>(
    tail: u64,
    window: u64,
    capacity: u64,
    fanout: bool,
    cursors: impl IntoIterator<Item = &'w W>,
) -> std::result::Result<u64, BadCursor> {
    // SYNC POINT subscriber-join (publisher side): our last progress store is ordered
    // before the cursor loads below. A joining fanout subscriber stores its cursor,
    // fences, then reads our progress (`join`); so either we see its cursor here, or it
    // sees a position at or past everything this limit lets us overwrite.
    W::fence(Ordering::SeqCst);
    let mut slowest = tail;
    for (subscriber, cursor) in cursors.into_iter().enumerate() {
        // SYNC POINT ring-release (Acquire side): pairs with `release` and `leave`.
        let cursor = cursor.load(Ordering::Acquire);
        if fanout && cursor == CURSOR_IDLE {
            continue;
        }
        if cursor > tail || tail - cursor > capacity {
            return Err(BadCursor { subscriber, cursor });
        }
        slowest = slowest.min(cursor);
    }
    Ok(slowest + window)
}

/// Fanout subscriber joining: picks a starting position in each of `rings` rings and
/// publishes it as the slot's cursor, such that no publisher overwrites anything from
/// there on before this subscriber releases it. Returns the starting positions through
/// `start(ring, position)`.
pub fn join<'w, W: Word + 'w>(
    rings: usize,
    tail: impl Fn(usize) -> &'w W,
    cursor: impl Fn(usize) -> &'w W,
    mut start: impl FnMut(usize, u64),
) {
    // SYNC POINT subscriber-join (subscriber side): publish a starting cursor, fence,
    // then re-read each publisher's progress. A publisher whose limit refresh missed our
    // cursor refreshed before our fence, so the position we re-read is at or past
    // everything that refresh let it overwrite: starting there is safe.
    for ring in 0..rings {
        release(cursor(ring), reported_tail(tail(ring)));
    }
    W::fence(Ordering::SeqCst);
    for ring in 0..rings {
        let head = reported_tail(tail(ring));
        release(cursor(ring), head);
        start(ring, head);
    }
}

// ---------------------------------------------------------------------------------------
// Ordered mode: global sequence numbers

/// A publisher's ordered-mode words.
pub struct SequenceWords<'w, W> {
    /// The channel's next global sequence number.
    pub sequence: &'w W,
    /// The first number this publisher took and has not committed, `PENDING_NONE`, or
    /// `PENDING_TAKING` while it takes some.
    pub pending: &'w W,
    /// How many numbers from `pending` on it took.
    pub pending_count: &'w W,
}

/// Publisher: takes `count` consecutive global sequence numbers, returning the first, and
/// marks them pending until `clear_pending`.
#[inline(always)]
pub fn take_sequence<W: Word>(words: &SequenceWords<'_, W>, count: u64) -> u64 {
    // SYNC POINT sequence-taken (publisher side): TAKING is stored before the fetch_add,
    // which is Release, so a subscriber that sees the incremented counter (Acquire, in
    // `find_gap`) also sees that this publisher holds or is taking numbers.
    words.pending.store(PENDING_TAKING, Ordering::Relaxed);
    let first = words.sequence.fetch_add(count, Ordering::AcqRel);
    words.pending_count.store(count, Ordering::Relaxed);
    // SYNC POINT pending (Release side): the count is visible with the marker.
    words.pending.store(first, Ordering::Release);
    first
}

/// Publisher: every number it took is committed.
#[inline(always)]
pub fn clear_pending<W: Word>(pending: &W) {
    // SYNC POINT pending-cleared (Release side): the frames' commits come first, so a
    // subscriber that reads NONE (Acquire, in `find_gap`) then finds them at the heads.
    pending.store(PENDING_NONE, Ordering::Release);
}

/// What a subscriber sees of one publisher while checking for a gap.
pub struct PublisherView<'w, W> {
    /// Whether the slot's holder is a live process.
    pub alive: bool,
    /// Its `pending` and `pending_count` words.
    pub pending: &'w W,
    /// See `pending`.
    pub pending_count: &'w W,
}

/// The committed frame at the head of a ring, as the subscriber sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Payload length.
    pub len: usize,
    /// Global sequence number (Ordered mode).
    pub sequence: u64,
}

/// The head of each ring a subscriber reads, and a way past a frame.
pub trait RingHeads {
    /// The committed frame at the head of `ring`, if any; an error if it is corrupt.
    fn head(&self, ring: usize) -> Result<Option<Head>>;
    /// Moves past the frame at the head of `ring` without delivering it.
    fn pass_over(&mut self, ring: usize, len: usize);
}

/// Ordered subscriber: finds the frame numbered `wanted`, looking at `first_ring` first.
/// Frames numbered lower were sent before this subscriber joined (or, after a crash,
/// delivered to its predecessor) and are passed over, at most `max_skips` per call so a
/// peer flooding the rings with stale numbers cannot keep it busy forever. The frame
/// numbered `wanted` is at the head of exactly one ring, since each publisher's numbers
/// increase along its ring.
#[inline]
pub fn next_in_order(
    heads: &mut impl RingHeads,
    rings: usize,
    first_ring: usize,
    wanted: u64,
    max_skips: u32,
) -> Result<Option<(usize, Head)>> {
    let mut step = 0;
    let mut skips = 0;
    while step < rings {
        let ring = (first_ring + step) % rings;
        match heads.head(ring)? {
            Some(head) if head.sequence == wanted => return Ok(Some((ring, head))),
            Some(head) if head.sequence < wanted && skips < max_skips => {
                heads.pass_over(ring, head.len);
                skips += 1;
                // Look at this ring's next frame before moving on.
            }
            _ => step += 1,
        }
    }
    Ok(None)
}

/// Ordered subscriber waiting for `wanted`, which nothing delivers: decides whether
/// `wanted` can still arrive. Returns the end of the run of numbers that never can (each
/// was taken by a publisher that died before committing it), or `None` when `wanted` may
/// still come: nobody took it yet, or a live publisher holds it or may be taking it.
pub fn find_gap<'w, W: Word + 'w, H: RingHeads>(
    channel: &str,
    wanted: u64,
    sequence: &W,
    heads: &H,
    rings: usize,
    publisher: impl Fn(usize) -> PublisherView<'w, W>,
) -> Result<Option<u64>> {
    // SYNC POINT sequence-taken (subscriber side): pairs with `take_sequence`; every
    // publisher that took a number below `taken` has its marker set as we look below.
    let taken = sequence.load(Ordering::Acquire);
    if taken <= wanted {
        return Ok(None); // nobody has taken `wanted` yet: idle, not stuck
    }
    if taken >= MAX_POSITION {
        return Err(Error::corrupt(
            channel,
            format!("the global sequence counter reads {taken}, out of range"),
        ));
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
        if let Some(head) = heads.head(ring)? {
            // Re-read the counter: a number committed after our first read was taken
            // before its commit, so the fresh value covers every honest frame.
            let taken_now = sequence.load(Ordering::Acquire);
            if head.sequence >= taken_now {
                return Err(Error::corrupt(
                    channel,
                    format!(
                        "ring {ring} has a frame that carries sequence {} but only {taken_now} were ever taken",
                        head.sequence
                    ),
                ));
            }
            end = end.min(head.sequence);
        }
    }
    Ok((end > wanted).then_some(end))
}

// ---------------------------------------------------------------------------------------
// Sleeping subscribers and the publishers that wake them

/// A 32-bit atomic word (the futex width) and the fences a publisher may run before it
/// looks for sleepers.
pub trait Word32 {
    /// Atomic load.
    fn load(&self, order: Ordering) -> u32;
    /// Atomic swap, returning the previous value.
    fn swap(&self, value: u32, order: Ordering) -> u32;
    /// Atomic add, returning the previous value.
    fn fetch_add(&self, value: u32, order: Ordering) -> u32;
    /// Atomic subtract, returning the previous value.
    fn fetch_sub(&self, value: u32, order: Ordering) -> u32;
    /// Between a publisher's commits and its look for sleepers, in a process that
    /// sleepers' barriers reach. On shared memory only the compiler is fenced: a long
    /// sleeper's process-wide barrier (membarrier) supplies the hardware fence on the
    /// publisher's behalf. The loom models, which cannot express that barrier, put a
    /// SeqCst fence on both sides instead.
    fn publisher_fence();
    /// A full fence: what a publisher that sleepers' barriers do not reach runs instead.
    fn full_fence();
}

macro_rules! word32 {
    ($atomic:ty, $publisher_fence:expr, $full_fence:expr) => {
        impl Word32 for $atomic {
            #[inline(always)]
            fn load(&self, order: Ordering) -> u32 {
                self.load(order)
            }
            #[inline(always)]
            fn swap(&self, value: u32, order: Ordering) -> u32 {
                self.swap(value, order)
            }
            #[inline(always)]
            fn fetch_add(&self, value: u32, order: Ordering) -> u32 {
                self.fetch_add(value, order)
            }
            #[inline(always)]
            fn fetch_sub(&self, value: u32, order: Ordering) -> u32 {
                self.fetch_sub(value, order)
            }
            #[inline(always)]
            fn publisher_fence() {
                $publisher_fence
            }
            #[inline(always)]
            fn full_fence() {
                $full_fence
            }
        }
    };
}

word32!(
    std::sync::atomic::AtomicU32,
    std::sync::atomic::compiler_fence(Ordering::SeqCst),
    std::sync::atomic::fence(Ordering::SeqCst)
);
#[cfg(loom)]
word32!(
    loom::sync::atomic::AtomicU32,
    loom::sync::atomic::fence(Ordering::SeqCst),
    loom::sync::atomic::fence(Ordering::SeqCst)
);

/// The words a subscriber sleeps on and publishers wake it through.
#[repr(C)]
#[derive(Debug, Default)]
pub struct WakeWords<A> {
    /// Subscribers asleep or about to sleep.
    pub sleepers: A,
    /// The futex word: bumped by each publisher that wakes the sleepers.
    pub seq: A,
    /// Non-zero once a publisher has taken on waking everyone now asleep; each new sleeper
    /// clears it. Later publishers skip the wake (a system call) while it is set.
    pub woken: A,
}

/// Subscriber, before its last look for messages: announces it is about to sleep and
/// returns the futex value to sleep on. The caller then runs the sleeper's barrier (a
/// long sleep) or not (a short one, which may then miss a racing commit and sleep its
/// whole length), looks once more, and only if it finds nothing sleeps while `seq` still
/// holds that value (`wait::Park::park`).
pub fn announce_sleep<A: Word32>(wake: &WakeWords<A>) -> u32 {
    // SYNC POINT sleeper-registration (sleeper side): the increment must be visible to a
    // publisher before our last look for messages, or that publisher may commit, miss us,
    // and leave us asleep. Pairs with `sleepers_present` across the sleeper's barrier.
    wake.sleepers.fetch_add(1, Ordering::SeqCst);
    let seen = wake.seq.load(Ordering::Acquire);
    // SYNC POINT wake-claim (sleeper side): cleared after reading `seen`, with Release, so
    // a publisher whose claim reads this clear (`claim_wake`, Acquire) bumps `seq` past
    // `seen`. A swap, so later sleepers' clears continue this release sequence.
    wake.woken.swap(0, Ordering::AcqRel);
    seen
}

/// Subscriber, after sleeping or deciding not to.
pub fn leave_sleep<A: Word32>(wake: &WakeWords<A>) {
    wake.sleepers.fetch_sub(1, Ordering::Release);
}

/// Publisher, after its commits: whether a subscriber may be asleep. Costs one load of a
/// line that changes only when a subscriber goes to sleep or wakes. `reached` says
/// whether sleepers' barriers reach this process; if not, it fences for itself.
#[inline(always)]
pub fn sleepers_present<A: Word32>(wake: &WakeWords<A>, reached: bool) -> bool {
    // SYNC POINT sleeper-registration (publisher side): pairs with `announce_sleep`.
    if reached {
        A::publisher_fence();
    } else {
        A::full_fence();
    }
    wake.sleepers.load(Ordering::Relaxed) != 0
}

/// Publisher that found sleepers: whether it is the one to wake them. If so it must call
/// [`bump_wake`] and then wake every futex waiter on `seq`; if not, another publisher
/// claimed after the last clear and wakes every sleeper that took its barrier before
/// that claim. Should that publisher die or stall between its claim and its wake, those
/// sleepers sleep until it runs again or their sleep ends (100 ms for `Adaptive`), while
/// later commits skip the wake: a bounded delay, never a lost message.
pub fn claim_wake<A: Word32>(wake: &WakeWords<A>) -> bool {
    // SYNC POINT wake-claim (publisher side): pairs with the clear in `announce_sleep`.
    // The plain load first keeps publishers from fighting over the line while the flag
    // is set.
    wake.woken.load(Ordering::Relaxed) == 0 && wake.woken.swap(1, Ordering::Acquire) == 0
}

/// Publisher that claimed the wake: moves the futex word past the `seen` of every sleeper
/// that cleared the claim before it was taken.
pub fn bump_wake<A: Word32>(wake: &WakeWords<A>) {
    wake.seq.fetch_add(1, Ordering::Release);
}
