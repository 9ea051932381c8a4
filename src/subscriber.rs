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

use std::cell::Cell;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, Role};
use crate::kind::{Fifo, GlobalOrder, KindMarker, Mode, Mpsc, Topology};
use crate::message::{Bytes, Message, Payload};
use crate::platform::{self, HEALTHY};
use crate::protocol::{self, Head};
use crate::region::Shared;
use crate::wait::{Adaptive, WaitStrategy, Waiter};
use crate::wire::frame::{self, Frame};
use crate::wire::layout::{MAX_POSITION, SLOT_FREE, ShmPtr, WakeWord};

/// FIFO mode: frames taken from one ring in a row before looking at the next, so one busy
/// publisher cannot starve the others while bursts stay cheap.
const BURST: u32 = 64;

/// Consecutive empty polls before the subscriber starts checking, at most every
/// `HEALTH_INTERVAL`, whether it is stuck on a dead publisher or a corrupt ring.
const HEALTH_AFTER_MISSES: u32 = 2048;
const HEALTH_INTERVAL: Duration = Duration::from_millis(1);

/// Ordered mode: most frames passed over in one search, so a peer flooding the rings with
/// stale numbers cannot keep a receive call busy forever.
const MAX_SKIPS_PER_SEARCH: u32 = 4096;

/// Asks for the cache line after the one holding the commit word at `at`, where most of a
/// frame's payload lies, so that when the commit arrives both lines are already in flight
/// instead of one after the other. Elsewhere than x86-64 and AArch64 it does nothing.
#[inline(always)]
fn prefetch_payload_line(at: *const u8) {
    let next_line = at.wrapping_add(64 - (at as usize & 63));
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching has no preconditions and never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(next_line.cast());
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: PRFM is a hint: it never faults, whatever the address, reads no memory the
    // program can observe and changes no register or flag.
    unsafe {
        std::arch::asm!("prfm pldl1keep, [{line}]", line = in(reg) next_line, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = next_line;
}

/// This subscriber's state for one publisher ring.
struct Reader {
    base: ShmPtr<u8>,
    /// Position of the next frame to read.
    head: u64,
    /// Position last stored to the shared cursor.
    released: u64,
    cursor: ShmPtr<AtomicU64>,
}

/// Where the next message is: its ring, payload length, and global sequence (Ordered).
#[derive(Clone, Copy)]
struct Next {
    ring: usize,
    len: usize,
    sequence: u64,
    /// Ordered mode: numbers lost right before this message (their publisher died).
    gap_before: u64,
}

/// Sequence numbers an ordered subscriber found missing: each was taken by a publisher
/// that died before committing it. Never a silent hole: the first message after a gap
/// also reports it (`gap_before`).
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-gaps-{}", std::process::id());
/// let channel = salias::OrderedMpsc::<Tick>::create(&Config::new(&name))?;
/// let subscriber = channel.subscriber()?;
/// // No publisher has died holding a number: nothing is missing.
/// assert_eq!(subscriber.gaps(), &salias::Gaps::default());
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
/// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
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
    mask: u64,
    max_len: usize,
    fixed_len: Option<usize>,
    release_every: u64,
    current: Cell<usize>,
    burst: Cell<u32>,
    /// Ordered mode: the sequence number to deliver next.
    next_sequence: u64,
    received: u64,
    /// Ordered mode: frames passed over because they were numbered before this subscriber
    /// joined.
    skipped: u64,
    /// Ordered mode: numbers lost right before the next message to deliver.
    gap_before: u64,
    gaps: Gaps,
    /// Consecutive searches that found nothing, and when health was last checked.
    misses: u32,
    last_health_check: Option<Instant>,
    wake: ShmPtr<WakeWord>,
    /// This slot's saved resume sequence (ordered Mpsc).
    resume: ShmPtr<AtomicU64>,
    /// Taken out while a blocking call runs, so waiting never allocates.
    strategy: Option<Box<dyn WaitStrategy>>,
    /// The channel's health cell (`platform::guard`), checked on every call.
    health: &'static AtomicU32,
    _marker: KindMarker<T, M, K>,
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// Claims subscriber slot `slot`, or any free one. A fanout subscriber joins at the
    /// current end of every ring; an Mpsc subscriber resumes where the last one stopped.
    pub(crate) fn new(shared: Arc<Shared>, slot: Option<usize>) -> Result<Self> {
        shared.check_health()?;
        let slot = match slot {
            Some(index) => shared.claim_subscriber_slot_at(index)?,
            None => shared.claim_slot(
                Role::Subscriber,
                (0..shared.subscribers as usize).map(|s| &*shared.subscriber_slot(s).holder),
            )?,
        };
        // SAFETY: the wake word and this slot's resume word live in the control mapping,
        // which `shared` keeps alive as long as this subscriber.
        let (wake, resume) = unsafe {
            (
                ShmPtr::new(&*shared.hot().wake),
                ShmPtr::new(&*shared.subscriber_slot(slot).next_sequence),
            )
        };
        let mut subscriber = Subscriber {
            slot,
            readers: Box::default(),
            mask: shared.capacity as u64 - 1,
            max_len: shared.max_message_len,
            fixed_len: shared.fixed_len,
            release_every: (shared.window as u64 / 4).max(1),
            current: Cell::new(0),
            burst: Cell::new(0),
            next_sequence: 0,
            received: 0,
            skipped: 0,
            gap_before: 0,
            gaps: Gaps::default(),
            misses: 0,
            last_health_check: None,
            wake,
            resume,
            strategy: Some(Box::new(Adaptive::default())),
            health: shared.health(),
            _marker: KindMarker::default(),
            shared,
        };
        // On failure `subscriber` drops, which frees the slot.
        subscriber.attach()?;
        Ok(subscriber)
    }

    /// Sets up the per-ring readers at this slot's starting positions.
    fn attach(&mut self) -> Result<()> {
        let shared = &*self.shared;
        let rings = shared.producers as usize;
        let mut heads = Vec::with_capacity(rings);
        if K::FANOUT {
            protocol::join(
                rings,
                |ring| &shared.producer_slot(ring).progress.tail,
                |ring| &**shared.cursor(self.slot, ring),
                |_, head| heads.push(head),
            );
            // Every message numbered from here on lies past the heads just chosen (its
            // publisher had not reported it yet); lower numbers still in the rings were
            // sent before we joined and are passed over.
            self.next_sequence = shared.hot().sequence.load(Ordering::Acquire);
        } else {
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
        for (ring, head) in heads.into_iter().enumerate() {
            if !head.is_multiple_of(shared.frame_align as u64) || head >= MAX_POSITION {
                return Err(shared.corrupt(format!(
                    "subscriber {}'s cursor in ring {ring} is {head}, which is not a frame-aligned position",
                    self.slot
                )));
            }
            readers.push(Reader {
                // SAFETY: the ring and control mappings live as long as `shared`, which
                // this subscriber holds.
                base: unsafe { ShmPtr::from_raw(shared.ring(ring).base()) },
                head,
                released: head,
                // SAFETY: as above.
                cursor: unsafe { ShmPtr::new(&**shared.cursor(self.slot, ring)) },
            });
        }
        self.readers = readers.into_boxed_slice();
        Ok(())
    }

    /// The subscriber slot this handle holds.
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// Messages this handle has received.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Replaces the strategy blocking receives wait with (default [`Adaptive`]).
    pub fn set_wait_strategy(&mut self, strategy: impl WaitStrategy + 'static) {
        self.strategy = Some(Box::new(strategy));
    }

    /// The committed frame at the head of ring `ring`, if any.
    #[inline(always)]
    fn peek(&self, ring: usize) -> Result<Option<Head>> {
        let reader = &self.readers[ring];
        // SAFETY: `head & mask` < capacity and frames are 8-aligned, so the commit word is
        // inside the first view and aligned for AtomicU64.
        let at = unsafe { reader.base.as_ptr().add((reader.head & self.mask) as usize) };
        prefetch_payload_line(at);
        // SAFETY: see above.
        if !protocol::is_committed(unsafe { frame::commit_word_at(at) }, reader.head) {
            return Ok(None);
        }
        // SAFETY: a committed frame inside the double view; the commit made its header
        // visible.
        let (len, sequence) = unsafe { frame::read_header::<M>(at) };
        let valid = match self.fixed_len {
            Some(fixed) => len == fixed,
            None => len <= self.max_len,
        };
        if !valid {
            return Err(self.shared.corrupt(
                format!(
                    "ring {ring} has a frame at position {} declaring {len} bytes, but this channel's messages are {} bytes",
                    reader.head,
                    match self.fixed_len {
                        Some(fixed) => format!("exactly {fixed}"),
                        None => format!("at most {}", self.max_len),
                    }
                ),
            ));
        }
        Ok(Some(Head { len, sequence }))
    }

    /// FIFO: keep draining the current ring for up to `BURST` frames, then go round.
    // Always inlined: returned through memory, the large `Result` cost `try_recv` a
    // store-forwarding stall per message (19 ns against 6 ns inlined, benches/paths.rs).
    #[inline(always)]
    fn find_fifo(&self) -> Result<Option<Next>> {
        let current = self.current.get();
        if self.burst.get() < BURST
            && let Some(Head { len, .. }) = self.peek(current)?
        {
            self.burst.set(self.burst.get() + 1);
            return Ok(Some(Next {
                ring: current,
                len,
                sequence: 0,
                gap_before: 0,
            }));
        }
        let rings = self.readers.len();
        // The current ring was just found empty unless its burst ran out: look at it last,
        // and only then.
        let last = if self.burst.get() < BURST { rings - 1 } else { rings };
        for step in 1..=last {
            let ring = (current + step) % rings;
            if let Some(Head { len, .. }) = self.peek(ring)? {
                self.current.set(ring);
                self.burst.set(1);
                return Ok(Some(Next {
                    ring,
                    len,
                    sequence: 0,
                    gap_before: 0,
                }));
            }
        }
        Ok(None)
    }

    /// Ordered: the frame numbered `next_sequence`, looking first at the ring that
    /// delivered last.
    // Always inlined, as `find_fifo`.
    #[inline(always)]
    fn find_ordered(&mut self) -> Result<Option<Next>> {
        let (rings, current, wanted) = (self.readers.len(), self.current.get(), self.next_sequence);
        let Some((ring, head)) = protocol::next_in_order(self, rings, current, wanted, MAX_SKIPS_PER_SEARCH)? else {
            return Ok(None);
        };
        self.current.set(ring);
        Ok(Some(Next {
            ring,
            len: head.len,
            sequence: head.sequence,
            gap_before: self.gap_before,
        }))
    }

    /// Called while nothing arrives: in Ordered mode, declares lost the numbers that
    /// publishers took with them when they died; in every mode, reports a ring whose
    /// publisher says it has committed past a frame that is not there. Returns whether a
    /// gap was skipped (so a search may now succeed).
    #[cold]
    fn check_health(&mut self) -> Result<bool> {
        let shared = &*self.shared;
        // Waiting on a frame that will never come may mean the memory was truncated.
        shared.check_objects()?;
        for (ring, reader) in self.readers.iter().enumerate() {
            let reported = protocol::reported_tail(&shared.producer_slot(ring).progress.tail);
            if reported > reader.head && self.peek(ring)?.is_none() {
                // The publisher reports progress only after committing: a frame missing
                // below it was overwritten or never properly written.
                return Err(shared.corrupt(
                    format!(
                        "ring {ring}'s publisher reports frames up to position {reported}, but the frame at {} is not committed",
                        reader.head
                    ),
                ));
            }
        }
        if !M::ORDERED {
            return Ok(false);
        }
        let wanted = self.next_sequence;
        let publisher = |ring| {
            let slot = shared.producer_slot(ring);
            let token = slot.holder.token.load(Ordering::Acquire);
            protocol::PublisherView {
                alive: token != SLOT_FREE && platform::token_alive(token),
                pending: &slot.progress.pending,
                pending_count: &slot.progress.pending_count,
            }
        };
        let sequence = &*shared.hot().sequence;
        let Some(end) = protocol::find_gap(&shared.name, wanted, sequence, self, self.readers.len(), publisher)? else {
            return Ok(false);
        };
        self.gaps.events += 1;
        self.gaps.missing = self.gaps.missing.saturating_add(end - wanted);
        self.gaps.last = Some(wanted..end);
        self.gap_before = self.gap_before.saturating_add(end - wanted);
        self.next_sequence = end;
        Ok(true)
    }

    #[inline(always)]
    fn find(&mut self) -> Result<Option<Next>> {
        if M::ORDERED {
            self.find_ordered()
        } else {
            self.find_fifo()
        }
    }

    /// Whether waiting should not sleep: a frame is committed somewhere, or (Ordered) a
    /// number this subscriber has not delivered was taken — if its publisher died, the
    /// health check must get to run soon rather than after a long sleep.
    fn any_ready(&self) -> bool {
        (M::ORDERED && self.shared.hot().sequence.load(Ordering::Relaxed) > self.next_sequence)
            || (0..self.readers.len()).any(|ring| !matches!(self.peek(ring), Ok(None)))
    }

    /// Moves past a frame without delivering it.
    fn skip(&mut self, ring: usize, len: usize) {
        self.skipped += 1;
        self.move_head(ring, len);
    }

    /// Moves past the delivered frame at the head of `ring`.
    #[inline(always)]
    fn advance(&mut self, next: Next) {
        self.received += 1;
        if M::ORDERED {
            self.next_sequence = next.sequence + 1;
            self.gap_before = 0;
            if !K::FANOUT {
                // Per message, to a line only a successor reads: if this process dies, the
                // next subscriber passes over everything handled so far, even though the
                // cursors are saved only now and then.
                self.resume_point().store(self.next_sequence, Ordering::Relaxed);
            }
        }
        self.move_head(next.ring, next.len);
    }

    #[inline(always)]
    fn move_head(&mut self, ring: usize, len: usize) {
        let reader = &mut self.readers[ring];
        reader.head += Frame::<T, M>::len(len) as u64;
        if reader.head - reader.released >= self.release_every {
            self.save_resume_point();
            Self::store_cursor(&mut self.readers[ring]);
        }
    }

    /// Ordered Mpsc: saves the next sequence number before any cursor moves past what it
    /// covers, so a successor of a subscriber that crashed passes over exactly the
    /// messages already delivered (they are numbered below it) and loses none.
    #[inline(always)]
    fn save_resume_point(&self) {
        if M::ORDERED && !K::FANOUT {
            self.resume_point().store(self.next_sequence, Ordering::Release);
        }
    }

    #[inline(always)]
    fn resume_point(&self) -> &AtomicU64 {
        self.resume.get()
    }

    #[inline(always)]
    fn store_cursor(reader: &mut Reader) {
        protocol::release(reader.cursor.get(), reader.head);
        reader.released = reader.head;
    }

    /// Tells publishers about all room released so far (done automatically whenever the
    /// subscriber runs out of messages).
    pub fn release_all(&mut self) {
        if self.readers.iter().any(|r| r.head != r.released) {
            self.save_resume_point();
        }
        for reader in self.readers.iter_mut() {
            if reader.head != reader.released {
                Self::store_cursor(reader);
            }
        }
    }

    #[inline(always)]
    fn payload(&self, ring: usize) -> *const u8 {
        let reader = &self.readers[ring];
        // SAFETY: the committed frame at `head` lies inside the double view (its length
        // was validated against the maximum, which fits the window ≤ capacity).
        unsafe {
            reader
                .base
                .as_ptr()
                .add((reader.head & self.mask) as usize + Frame::<T, M>::HEADER)
        }
    }

    /// Finds the next message, releasing room to publishers when there is none.
    /// Fails once the channel's memory was truncated under it, or in a `fork()` child.
    #[inline(always)]
    fn check_usable(&self) -> Result<()> {
        match platform::state_of(self.health) {
            HEALTHY => Ok(()),
            state => Err(platform::unhealthy(&self.shared.name, state)),
        }
    }

    fn next(&mut self) -> Result<Option<Next>> {
        self.check_usable()?;
        if let Some(next) = self.find()? {
            self.misses = 0;
            return Ok(Some(next));
        }
        // Nothing found may mean the ring turned to zero pages under the search.
        self.check_usable()?;
        self.release_all();
        self.misses = self.misses.saturating_add(1);
        if self.misses >= HEALTH_AFTER_MISSES {
            let now = Instant::now();
            if self.last_health_check.is_none_or(|last| now - last >= HEALTH_INTERVAL) {
                self.last_health_check = Some(now);
                if self.check_health()? {
                    return self.find();
                }
            }
        }
        Ok(None)
    }

    fn wait_next(&mut self, timeout: Option<Duration>) -> Result<Next> {
        if let Some(next) = self.next()? {
            return Ok(next);
        }
        let mut strategy = self.strategy.take().unwrap_or_else(|| Box::new(Adaptive::default()));
        let mut waiter = Waiter::new(timeout);
        let outcome = loop {
            match self.next() {
                Ok(None) => {}
                Ok(Some(next)) => break Ok(next),
                Err(e) => break Err(e),
            }
            let this = &*self;
            if !waiter.wait(&mut *strategy, Some(this.wake.get()), &mut || this.any_ready()) {
                break Err(Error::TimedOut);
            }
        };
        self.strategy = Some(strategy);
        outcome
    }

    fn info(next: Next) -> MessageInfo<M> {
        MessageInfo {
            slot: next.ring,
            seq: next.sequence,
            gap: next.gap_before,
            _mode: KindMarker::default(),
        }
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

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// The next message, if one is committed, as a view into the ring; `Ok(None)` when
    /// there is none. The message is released when the view is dropped.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-try-recv-{}", std::process::id());
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut subscriber = channel.subscriber()?;
    /// assert!(subscriber.try_recv()?.is_none()); // nothing yet; never waits
    /// channel.publisher()?.offer(&Tick { seq: 3 })?;
    /// if let Some(tick) = subscriber.try_recv()? {
    ///     assert_eq!(tick.seq, 3);
    /// }
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn try_recv(&mut self) -> Result<Option<Received<'_, T, M, K>>> {
        Ok(self.next()?.map(|next| Received::new(self, next)))
    }

    /// Waits for the next message using the wait strategy.
    pub fn recv(&mut self) -> Result<Received<'_, T, M, K>> {
        let next = self.wait_next(None)?;
        Ok(Received::new(self, next))
    }

    /// Like [`recv`](Self::recv), giving up with [`Error::TimedOut`] after `timeout`.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-recv-timeout-{}", std::process::id());
    /// use std::time::Duration;
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut subscriber = channel.subscriber()?;
    /// let nothing = subscriber.recv_timeout(Duration::from_millis(1)).map(|t| t.seq);
    /// assert_eq!(nothing, Err(salias::Error::TimedOut));
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Received<'_, T, M, K>> {
        let next = self.wait_next(Some(timeout))?;
        Ok(Received::new(self, next))
    }
}

impl<T: Message, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// Hands up to `max` committed messages to `handle`, with where each came from, and
    /// releases them; returns how many. Never waits.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-poll-{}", std::process::id());
    /// let channel = salias::OrderedMpsc::<Tick>::create(&Config::new(&name).producers(2))?;
    /// let (mut a, mut b) = (channel.publisher()?, channel.publisher()?);
    /// a.offer(&Tick { seq: 10 })?;
    /// b.offer(&Tick { seq: 20 })?;
    /// let mut subscriber = channel.subscriber()?;
    /// let mut seen = Vec::new();
    /// let handled = subscriber.poll(16, |info, tick| seen.push((info.sequence(), tick.seq)))?;
    /// // One global order across publishers: the sequence numbers say which came first.
    /// assert_eq!((handled, seen), (2, vec![(0, 10), (1, 20)]));
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn poll(&mut self, max: usize, mut handle: impl FnMut(MessageInfo<M>, &T)) -> Result<usize> {
        self.check_usable()?;
        let mut count = 0;
        while count < max {
            let Some(next) = self.find()? else { break };
            // SAFETY: the payload is a committed, validated frame of exactly
            // `size_of::<T>()` bytes, aligned for `T`; `T` accepts any bit pattern.
            handle(Self::info(next), unsafe { &*self.payload(next.ring).cast::<T>() });
            self.advance(next);
            count += 1;
        }
        self.check_usable()?;
        self.release_all();
        Ok(count)
    }
}

impl<M: Mode, K: Topology> Subscriber<Bytes, M, K> {
    /// Hands up to `max` committed messages to `handle`, with where each came from, and
    /// releases them; returns how many. Never waits.
    ///
    /// ```
    /// # let name = format!("doc-raw-poll-{}", std::process::id());
    /// let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name))?;
    /// channel.publisher()?.offer_batch(&[&b"one"[..], b"two"])?;
    /// let mut subscriber = channel.subscriber()?;
    /// let mut total = 0;
    /// subscriber.poll(16, |_, bytes| total += bytes.len())?;
    /// assert_eq!(total, 6);
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn poll(&mut self, max: usize, mut handle: impl FnMut(MessageInfo<M>, &[u8])) -> Result<usize> {
        self.check_usable()?;
        let mut count = 0;
        while count < max {
            let Some(next) = self.find()? else { break };
            // SAFETY: the payload is a committed frame whose validated length lies inside
            // the double view.
            handle(Self::info(next), unsafe {
                std::slice::from_raw_parts(self.payload(next.ring), next.len)
            });
            self.advance(next);
            count += 1;
        }
        self.check_usable()?;
        self.release_all();
        Ok(count)
    }
}

impl<T: Payload, M: Mode, K: Topology> protocol::RingHeads for Subscriber<T, M, K> {
    #[inline(always)]
    fn head(&self, ring: usize) -> Result<Option<Head>> {
        self.peek(ring)
    }

    fn pass_over(&mut self, ring: usize, len: usize) {
        self.skip(ring, len);
    }
}

impl<T: Payload, M: Mode, K: Topology> Drop for Subscriber<T, M, K> {
    fn drop(&mut self) {
        if !self.shared.is_ours() {
            // Inherited across fork(): the slot is the parent's.
            return;
        }
        if K::FANOUT {
            // Stop holding publishers back (every ring, even if joining failed midway).
            for ring in 0..self.shared.producers as usize {
                protocol::leave(&**self.shared.cursor(self.slot, ring));
            }
        } else {
            // Leave everything the next subscriber needs to resume exactly here.
            self.save_resume_point();
            self.release_all();
        }
        let slot = self.shared.subscriber_slot(self.slot);
        slot.holder.token.store(SLOT_FREE, Ordering::Release);
    }
}

impl<T: Payload, M: Mode, K: Topology> std::fmt::Debug for Subscriber<T, M, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriber")
            .field("channel", &self.shared.name)
            .field("slot", &self.slot)
            .field("received", &self.received)
            .finish()
    }
}

/// Where a message came from: the publisher slot, and in Ordered mode its global sequence.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-info-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).producers(2))?;
/// let _first = channel.publisher()?;
/// channel.publisher()?.offer(&Tick { seq: 1 })?;
/// let mut subscriber = channel.subscriber()?;
/// subscriber.poll(1, |info, _| assert_eq!(info.publisher_slot(), 1))?;
/// # Ok::<(), salias::Error>(())
/// ```
pub struct MessageInfo<M: Mode> {
    slot: usize,
    seq: u64,
    gap: u64,
    _mode: KindMarker<(), M, ()>,
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
    /// publishers holding them died; 0 almost always.
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
/// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
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
    fn new(subscriber: &'a mut Subscriber<T, M, K>, next: Next) -> Self {
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
    /// publishers holding them died; 0 almost always.
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
        // SAFETY: a committed, validated frame of exactly `size_of::<T>()` bytes, aligned
        // for `T`, which accepts any bit pattern; publishers do not overwrite it before we
        // release it.
        unsafe { &*self.subscriber.payload(self.next.ring).cast::<T>() }
    }
}

impl<T: Payload, M: Mode, K: Topology> Drop for Received<'_, T, M, K> {
    fn drop(&mut self) {
        self.subscriber.advance(self.next);
    }
}

/// A raw message borrowed from the ring. Dropping it (or [`release`](ReceivedBytes::release))
/// releases it.
pub type ReceivedBytes<'a, M, K> = Received<'a, Bytes, M, K>;

impl<M: Mode, K: Topology> Deref for Received<'_, Bytes, M, K> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: a committed frame whose validated length lies inside the double view;
        // publishers do not overwrite it before we release it.
        unsafe { std::slice::from_raw_parts(self.subscriber.payload(self.next.ring), self.next.len) }
    }
}
