//! The publishing end: one [`Publisher`] owns one producer slot and its ring.
//!
//! The hot path writes the frame into the ring, then stores the frame's commit word with
//! Release. In FIFO mode it performs no read-modify-write on shared memory; in Ordered
//! mode it takes its global sequence number with one `fetch_add` per message (one per
//! batch with `offer_batch`). It makes no system call and no heap allocation, and reads
//! subscriber cursors only when its cached limit runs out.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often a backpressured fanout publisher checks whether a dead subscriber holds it.
const REAP_INTERVAL: Duration = Duration::from_millis(1);

use crate::error::{Error, Result, Role};
use crate::kind::{Fifo, KindMarker, Mode, Mpsc, Topology};
use crate::message::{Bytes, Message, Payload};
use crate::platform::{self, HEALTHY};
use crate::protocol;
use crate::region::Shared;
use crate::wait::{self, Adaptive, WaitStrategy, Waiter};
use crate::wire::frame::{self, Frame};
use crate::wire::layout::{Progress, SLOT_FREE, ShmPtr, SingleUser, WakeWord};

/// Publishes messages of type `T` into its own ring of a channel.
///
/// `Send` but not `Sync`: every method takes `&mut self`, so the compiler guarantees one
/// writer per ring. Dropping it frees the slot for another publisher.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
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
    ring: ShmPtr<u8>,
    mask: u64,
    /// Position of the next frame.
    tail: u64,
    /// Cached `slowest cursor + window`: frames may be written up to here without looking
    /// at subscriber cursors again.
    limit: u64,
    window: u64,
    max_len: usize,
    progress: ShmPtr<Progress>,
    wake: ShmPtr<WakeWord>,
    /// Whether sleepers' barriers reach this process; if not, it fences before looking
    /// for sleepers.
    barrier_reaches_us: bool,
    /// The channel's global sequence (used in Ordered mode only).
    sequence: ShmPtr<AtomicU64>,
    published: u64,
    backpressured: u64,
    last_reap: Option<Instant>,
    /// Taken out while a blocking call runs, so waiting never allocates.
    strategy: Option<Box<dyn WaitStrategy>>,
    /// The channel's health cell (`platform::guard`), checked on every call.
    health: &'static AtomicU32,
    _marker: KindMarker<T, M, K>,
    _single_writer: SingleUser,
}

impl<T: Payload, M: Mode, K: Topology> Publisher<T, M, K> {
    pub(crate) fn new(shared: Arc<Shared>) -> Result<Self> {
        shared.check_health()?;
        let slot = shared.claim_slot(
            Role::Publisher,
            (0..shared.producers as usize).map(|p| &*shared.producer_slot(p).holder),
        )?;
        let barrier_reaches_us = crate::platform::register_fast_side();
        let release_slot = |shared: &Shared| {
            shared
                .producer_slot(slot)
                .holder
                .token
                .store(SLOT_FREE, Ordering::Release)
        };
        let tail = match shared.recover_tail(slot) {
            Ok(tail) => tail,
            Err(e) => {
                release_slot(&shared);
                return Err(e);
            }
        };
        // SAFETY: all three live in the control mapping, and the ring in the ring mapping;
        // `shared` keeps both alive as long as the publisher holding these pointers.
        let (progress, wake, sequence, ring) = unsafe {
            (
                ShmPtr::new(&*shared.producer_slot(slot).progress),
                ShmPtr::new(&*shared.hot().wake),
                ShmPtr::new(&*shared.hot().sequence),
                ShmPtr::from_raw(shared.ring(slot).base()),
            )
        };
        let mut publisher = Publisher {
            ring,
            mask: shared.capacity as u64 - 1,
            tail,
            limit: 0,
            window: shared.window as u64,
            max_len: shared.max_message_len,
            progress,
            wake,
            barrier_reaches_us,
            sequence,
            published: 0,
            backpressured: 0,
            last_reap: None,
            slot,
            health: shared.health(),
            shared,
            strategy: Some(Box::new(Adaptive::default())),
            _marker: KindMarker::default(),
            _single_writer: SingleUser::default(),
        };
        let progress = publisher.progress.get();
        // A previous holder that died may have left numbers pending; they are lost, and
        // this holder takes only fresh ones.
        protocol::clear_pending(&progress.pending);
        protocol::report_tail(&progress.tail, tail);
        publisher.published = progress.published.load(Ordering::Relaxed);
        publisher.backpressured = progress.backpressured.load(Ordering::Relaxed);
        // On failure `publisher` drops, which frees the slot.
        publisher.refresh_limit()?;
        Ok(publisher)
    }

    /// The producer slot (and ring) this publisher owns.
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// Messages this slot has published, including by earlier holders.
    pub fn published(&self) -> u64 {
        self.published
    }

    /// Offers this slot has had refused for lack of room.
    pub fn backpressured(&self) -> u64 {
        self.backpressured
    }

    /// Replaces the strategy blocking sends wait with (default [`Adaptive`]).
    pub fn set_wait_strategy(&mut self, strategy: impl WaitStrategy + 'static) {
        self.strategy = Some(Box::new(strategy));
    }

    /// Recomputes the write limit from the subscribers' cursors: the slowest subscriber
    /// still holding a slot bounds how far this publisher may write.
    fn refresh_limit(&mut self) -> Result<()> {
        let shared = &*self.shared;
        let cursors = (0..shared.subscribers as usize).map(|subscriber| &**shared.cursor(subscriber, self.slot));
        self.limit = protocol::write_limit(self.tail, self.window, self.mask + 1, K::FANOUT, cursors).map_err(
            |protocol::BadCursor { subscriber, cursor }| {
                shared.corrupt(
                    format!(
                        "subscriber {subscriber}'s cursor in ring {} is {cursor}, outside the {} bytes before the publisher's position {}",
                        self.slot,
                        self.mask + 1,
                        self.tail
                    ),
                )
            },
        )?;
        Ok(())
    }

    /// Fails once the channel's memory was truncated under it, or in a `fork()` child.
    #[inline(always)]
    fn check_health(&self) -> Result<()> {
        match platform::state_of(self.health) {
            HEALTHY => Ok(()),
            state => Err(platform::unhealthy(&self.shared.name, state)),
        }
    }

    /// Finds room for `frames` bytes of frames, returning the first one's position.
    #[inline(always)]
    fn reserve(&mut self, frames: u64) -> Result<u64> {
        self.check_health()?;
        let pos = self.tail;
        if pos + frames > self.limit {
            self.refresh_limit()?;
            if pos + frames > self.limit {
                self.reap_dead_subscribers()?;
            }
            if pos + frames > self.limit {
                self.backpressured = self.backpressured.wrapping_add(1);
                self.progress
                    .get()
                    .backpressured
                    .store(self.backpressured, Ordering::Relaxed);
                return Err(Error::Backpressured);
            }
        }
        Ok(pos)
    }

    /// Backpressured: checks whether the channel's objects were truncated (a subscriber
    /// that stopped releasing may be one that lost its memory) and, if a dead fanout
    /// subscriber is what holds us back, frees its slot and recomputes the limit. At most
    /// every `REAP_INTERVAL`, since both make system calls.
    #[cold]
    fn reap_dead_subscribers(&mut self) -> Result<()> {
        let now = Instant::now();
        if self.last_reap.is_some_and(|last| now - last < REAP_INTERVAL) {
            return Ok(());
        }
        self.last_reap = Some(now);
        self.shared.check_objects()?;
        if !K::FANOUT {
            return Ok(()); // an Mpsc subscriber's place is kept for its successor
        }
        if self.shared.reap(true).1 > 0 {
            self.refresh_limit()?;
        }
        Ok(())
    }

    /// Address of the frame at `pos`.
    #[inline(always)]
    fn frame_at(&self, pos: u64) -> *mut u8 {
        // SAFETY: `pos & mask` < capacity, and the ring is mapped twice in a row, so the
        // frame (at most `window` ≤ capacity bytes) lies inside the double view.
        unsafe { self.ring.as_ptr().add((pos & self.mask) as usize) }
    }

    /// Takes `count` consecutive global sequence numbers (Ordered mode), returning the
    /// first. Taken only once the frames' room is reserved, so a refused offer never
    /// leaves a hole in the sequence.
    #[inline(always)]
    fn take_sequence(&self, count: u64) -> u64 {
        if !M::ORDERED {
            return 0;
        }
        let progress = self.progress.get();
        protocol::take_sequence(
            &protocol::SequenceWords {
                sequence: self.sequence.get(),
                pending: &progress.pending,
                pending_count: &progress.pending_count,
            },
            count,
        )
    }

    /// Commits the written frame at `at`, position `pos`.
    #[inline(always)]
    fn commit_at(at: *mut u8, pos: u64) {
        // SAFETY: `at` is the 8-aligned start of a frame this publisher reserved.
        protocol::commit_frame(unsafe { frame::commit_word_at(at) }, pos);
    }

    /// Writes the header of the frame at `pos` and commits it; the payload is already in
    /// place. Does not publish progress or wake anyone.
    #[inline(always)]
    fn commit_frame(&mut self, at: *mut u8, pos: u64, len: usize, sequence: u64) {
        // SAFETY: `at` is the start of the frame this publisher reserved at `pos`, not yet
        // committed, so no subscriber reads its header.
        unsafe { frame::write_header::<M>(at, len, sequence) };
        Self::commit_at(at, pos);
        self.tail = pos + Frame::<T, M>::len(len) as u64;
        // Statistics, seeded from shared memory: wrapping, never a panic.
        self.published = self.published.wrapping_add(1);
    }

    /// Reports progress for monitors and joining subscribers, and wakes sleeping ones.
    #[inline(always)]
    fn publish_progress(&self) {
        let progress = self.progress.get();
        if M::ORDERED {
            // Every number taken is committed: nothing pending any more.
            protocol::clear_pending(&progress.pending);
        }
        protocol::report_tail(&progress.tail, self.tail);
        progress.published.store(self.published, Ordering::Relaxed);
        wait::wake_subscribers(self.wake.get(), self.barrier_reaches_us);
    }

    /// Publishes frames of `len(i)` payload bytes written by `write(i, payload)`, for
    /// `i < count`, as one batch: one reservation, one sequence range, one progress update.
    #[inline(always)]
    fn publish(
        &mut self,
        count: usize,
        len: impl Fn(usize) -> usize,
        mut write: impl FnMut(usize, *mut u8),
    ) -> Result<()> {
        let frames: u64 = (0..count).map(|i| Frame::<T, M>::len(len(i)) as u64).sum();
        let start = self.reserve(frames)?;
        let first = self.take_sequence(count as u64);
        // Write every frame first and commit them all after, in order: the commits then
        // land back to back on lines this core already owns, so a subscriber polling the
        // next commit word does not pull lines away while they are still being written.
        let mut pos = start;
        for i in 0..count {
            let at = self.frame_at(pos);
            // SAFETY: the payload starts HEADER bytes into a frame inside the reservation.
            write(i, unsafe { at.add(Frame::<T, M>::HEADER) });
            // Wrapping: a hostile peer may have set the shared counter anywhere.
            // SAFETY: `at` starts a frame inside the reservation, committed only below.
            unsafe { frame::write_header::<M>(at, len(i), first.wrapping_add(i as u64)) };
            pos += Frame::<T, M>::len(len(i)) as u64;
        }
        let mut pos = start;
        for i in 0..count {
            Self::commit_at(self.frame_at(pos), pos);
            pos += Frame::<T, M>::len(len(i)) as u64;
        }
        self.tail = pos;
        self.published = self.published.wrapping_add(count as u64);
        self.publish_progress();
        // A truncation while the frames were written sent them nowhere: say so.
        self.check_health()
    }

    /// How many frames of `frame` bytes fit now, refreshing the limit if fewer than
    /// `wanted` do.
    fn room_for(&mut self, frame: u64, wanted: usize) -> Result<usize> {
        if self.tail + frame * wanted as u64 > self.limit {
            self.refresh_limit()?;
        }
        Ok(((self.limit.saturating_sub(self.tail)) / frame).min(wanted as u64) as usize)
    }

    /// Retries `attempt` while it is backpressured, waiting with the wait strategy.
    fn block<R>(&mut self, timeout: Option<Duration>, mut attempt: impl FnMut(&mut Self) -> Result<R>) -> Result<R> {
        let mut strategy = self.strategy.take().unwrap_or_else(|| Box::new(Adaptive::default()));
        let mut waiter = Waiter::new(timeout);
        let outcome = loop {
            match attempt(self) {
                Err(Error::Backpressured) => {}
                done => break done,
            }
            // Subscribers do not wake publishers: a parked publisher naps and re-checks.
            if !waiter.wait(&mut *strategy, None, &mut || false) {
                break Err(Error::TimedOut);
            }
        };
        self.strategy = Some(strategy);
        outcome
    }
}

impl<T: Message, M: Mode, K: Topology> Publisher<T, M, K> {
    /// Copies `message` into the ring and publishes it. Returns
    /// [`Error::Backpressured`] (and writes nothing) when the ring has no room.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-offer-{}", std::process::id());
    /// // One page of ring: it fills up while nobody reads.
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).capacity(4096))?;
    /// let mut publisher = channel.publisher()?;
    /// let mut seq = 0;
    /// loop {
    ///     match publisher.offer(&Tick { seq }) {
    ///         Ok(()) => seq += 1,
    ///         Err(salias::Error::Backpressured) => break, // full: retry later, or `send`
    ///         Err(other) => return Err(other),
    ///     }
    /// }
    /// assert!(seq > 0 && publisher.backpressured() == 1);
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn offer(&mut self, message: &T) -> Result<()> {
        self.publish(
            1,
            |_| size_of::<T>(),
            |_, payload| {
                // SAFETY: the payload area is `size_of::<T>()` bytes, aligned for `T`
                // (frames are aligned to at least `align_of::<T>()`), and `T` has no
                // padding, so every byte copied is initialised.
                unsafe { frame::write_payload::<T, M>((message as *const T).cast::<u8>(), payload, size_of::<T>()) }
            },
        )
    }

    /// Publishes as many of `messages` as fit, in order, with one reservation, one
    /// progress update and (Ordered) one `fetch_add` for the whole batch. Returns how many
    /// were published; the rest were not written. Returns [`Error::Backpressured`] only if
    /// none fit.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-offer-batch-{}", std::process::id());
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut publisher = channel.publisher()?;
    /// let batch: Vec<Tick> = (0..16).map(|seq| Tick { seq }).collect();
    /// assert_eq!(publisher.offer_batch(&batch)?, 16);
    /// let mut subscriber = channel.subscriber()?;
    /// assert_eq!(subscriber.poll(100, |_, _| {})?, 16);
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn offer_batch(&mut self, messages: &[T]) -> Result<usize> {
        if messages.is_empty() {
            return Ok(0);
        }
        // When none fit, publishing one reports the backpressure.
        let count = self
            .room_for(Frame::<T, M>::len(size_of::<T>()) as u64, messages.len())?
            .max(1);
        self.publish(
            count,
            |_| size_of::<T>(),
            |i, payload| {
                // SAFETY: as in `offer`, for message `i` of the batch.
                unsafe {
                    std::ptr::copy_nonoverlapping((&messages[i] as *const T).cast::<u8>(), payload, size_of::<T>())
                }
            },
        )?;
        Ok(count)
    }

    /// Reserves room for one message and lends it out to be written in place; publish it
    /// with [`Claim::commit`]. Dropping the claim instead abandons it: nothing is
    /// published and the room is reused. The slot holds the ring's previous bytes, so
    /// write every field.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-claim-{}", std::process::id());
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut publisher = channel.publisher()?;
    /// let mut claim = publisher.claim()?;
    /// claim.seq = 42; // written in place, in the ring
    /// claim.commit();
    /// assert_eq!(channel.subscriber()?.try_recv()?.map(|t| t.seq), Some(42));
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn claim(&mut self) -> Result<Claim<'_, T, M, K>> {
        let len = size_of::<T>();
        let pos = self.reserve(Frame::<T, M>::len(len) as u64)?;
        Ok(Claim {
            pos,
            len,
            publisher: self,
        })
    }

    /// Like [`offer`](Self::offer), but waits for room using the wait strategy.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-send-{}", std::process::id());
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut publisher = channel.publisher()?;
    /// publisher.set_wait_strategy(salias::SpinThenYield::default());
    /// publisher.send(&Tick { seq: 1 })?;
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn send(&mut self, message: &T) -> Result<()> {
        self.block(None, |p| p.offer(message))
    }

    /// Like [`send`](Self::send), giving up with [`Error::TimedOut`] after `timeout`.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-send-timeout-{}", std::process::id());
    /// use std::time::Duration;
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).capacity(4096))?;
    /// let mut publisher = channel.publisher()?;
    /// while publisher.offer(&Tick { seq: 0 }).is_ok() {}
    /// // Nobody reads, so no room comes.
    /// let full = publisher.send_timeout(&Tick { seq: 0 }, Duration::from_millis(1));
    /// assert_eq!(full, Err(salias::Error::TimedOut));
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn send_timeout(&mut self, message: &T, timeout: Duration) -> Result<()> {
        self.block(Some(timeout), |p| p.offer(message))
    }
}

impl<T: Payload, M: crate::kind::GlobalOrder, K: Topology> Publisher<T, M, K> {
    /// Fault injection for crash tests: reserves room for a frame (waiting out
    /// backpressure), takes the next global sequence number and writes half a header,
    /// exactly as a publish would up to that point, then kills this process with SIGKILL
    /// before committing. Not for production.
    #[doc(hidden)]
    pub fn __take_sequence_then_die(&mut self) -> ! {
        self.take_sequence_uncommitted();
        // SAFETY: raise has no memory-safety preconditions.
        unsafe { libc::raise(libc::SIGKILL) };
        unreachable!("SIGKILL cannot be caught")
    }

    /// Fault injection for tests: like [`__take_sequence_then_die`], but stops this
    /// process with SIGSTOP instead, so it stays alive holding the number (as a publisher
    /// descheduled mid-publish would) until it is killed. Not for production.
    ///
    /// [`__take_sequence_then_die`]: Self::__take_sequence_then_die
    #[doc(hidden)]
    pub fn __take_sequence_then_stop(&mut self) -> ! {
        self.take_sequence_uncommitted();
        loop {
            // SAFETY: raise has no memory-safety preconditions.
            unsafe { libc::raise(libc::SIGSTOP) };
            // Continued: keep holding the number, never commit it.
        }
    }

    /// Takes the next sequence number into a reserved frame and leaves it uncommitted.
    fn take_sequence_uncommitted(&mut self) {
        let frame = Frame::<T, M>::len(T::FIXED_LEN.unwrap_or(0)) as u64;
        // Wait out backpressure: holding no number would leave no gap to report.
        let pos = match self.block(None, |p| p.reserve(frame)) {
            Ok(pos) => pos,
            Err(e) => panic!("fault injection could not reserve a frame: {e}"),
        };
        self.take_sequence(1);
        // SAFETY: the frame just reserved, never committed.
        unsafe { frame::write_len(self.frame_at(pos), 0xdead) };
    }
}

impl<M: Mode, K: Topology> Publisher<Bytes, M, K> {
    fn check_len(&self, len: usize) -> Result<()> {
        if len > self.max_len {
            return Err(Error::MessageTooLarge { len, max: self.max_len });
        }
        if let Some(fixed) = self.shared.fixed_len
            && len != fixed
        {
            return Err(Error::WrongMessageSize { len, expected: fixed });
        }
        Ok(())
    }

    /// Copies `bytes` into the ring as one message. Returns [`Error::MessageTooLarge`]
    /// for more than the channel's maximum, [`Error::Backpressured`] when there is no room.
    ///
    /// ```
    /// # let name = format!("doc-raw-offer-{}", std::process::id());
    /// let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name).max_message_size(64))?;
    /// let mut publisher = channel.publisher()?;
    /// publisher.offer(b"hello")?;
    /// let too_big = publisher.offer(&[0u8; 65]);
    /// assert!(matches!(too_big, Err(salias::Error::MessageTooLarge { len: 65, max: 64 })));
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn offer(&mut self, bytes: &[u8]) -> Result<()> {
        self.check_len(bytes.len())?;
        self.publish(
            1,
            |_| bytes.len(),
            |_, payload| {
                // SAFETY: the reserved payload area holds `bytes.len()` bytes.
                unsafe { frame::write_payload::<Bytes, M>(bytes.as_ptr(), payload, bytes.len()) }
            },
        )
    }

    /// Publishes as many of `messages` as fit, in order, as one batch. Returns how many
    /// were published; the rest were not written. Returns [`Error::Backpressured`] only if
    /// none fit, and [`Error::MessageTooLarge`] (publishing nothing) if any is too large.
    pub fn offer_batch<B: AsRef<[u8]>>(&mut self, messages: &[B]) -> Result<usize> {
        if messages.is_empty() {
            return Ok(0);
        }
        for message in messages {
            self.check_len(message.as_ref().len())?;
        }
        let fitting = |room: u64| {
            let mut used = 0;
            messages
                .iter()
                .take_while(|m| {
                    used += Frame::<Bytes, M>::len(m.as_ref().len()) as u64;
                    used <= room
                })
                .count()
        };
        let mut count = fitting(self.limit.saturating_sub(self.tail));
        if count < messages.len() {
            self.refresh_limit()?;
            count = fitting(self.limit.saturating_sub(self.tail));
        }
        // When none fit, publishing one reports the backpressure.
        let count = count.max(1);
        self.publish(
            count,
            |i| messages[i].as_ref().len(),
            |i, payload| {
                let bytes = messages[i].as_ref();
                // SAFETY: the reserved payload area of frame `i` holds `bytes.len()` bytes.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), payload, bytes.len()) }
            },
        )?;
        Ok(count)
    }

    /// Reserves `len` bytes to be written in place; publish them with
    /// [`ClaimBytes::commit`] (or fewer with [`ClaimBytes::commit_len`]). Dropping the
    /// claim abandons it.
    ///
    /// ```
    /// # let name = format!("doc-raw-claim-{}", std::process::id());
    /// let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name))?;
    /// let mut publisher = channel.publisher()?;
    /// // Reserve the most the message may need, write, then commit what was written.
    /// let mut claim = publisher.claim(256)?;
    /// let text = b"order 7 buy 100";
    /// claim[..text.len()].copy_from_slice(text);
    /// claim.commit_len(text.len())?;
    /// let mut subscriber = channel.subscriber()?;
    /// assert_eq!(&*subscriber.try_recv()?.expect("one message"), text);
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn claim(&mut self, len: usize) -> Result<ClaimBytes<'_, M, K>> {
        if len > self.max_len {
            return Err(Error::MessageTooLarge { len, max: self.max_len });
        }
        let pos = self.reserve(Frame::<Bytes, M>::len(len) as u64)?;
        Ok(ClaimBytes {
            pos,
            len,
            publisher: self,
        })
    }

    /// Like [`offer`](Self::offer), but waits for room using the wait strategy.
    pub fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.block(None, |p| p.offer(bytes))
    }

    /// Like [`send`](Self::send), giving up with [`Error::TimedOut`] after `timeout`.
    pub fn send_timeout(&mut self, bytes: &[u8], timeout: Duration) -> Result<()> {
        self.block(Some(timeout), |p| p.offer(bytes))
    }
}

impl<T: Payload, M: Mode, K: Topology> Drop for Publisher<T, M, K> {
    fn drop(&mut self) {
        if !self.shared.is_ours() {
            // Inherited across fork(): the slot is the parent's.
            return;
        }
        self.publish_progress();
        self.shared
            .producer_slot(self.slot)
            .holder
            .token
            .store(SLOT_FREE, Ordering::Release);
    }
}

impl<T: Payload, M: Mode, K: Topology> std::fmt::Debug for Publisher<T, M, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher")
            .field("channel", &self.shared.name)
            .field("slot", &self.slot)
            .field("position", &self.tail)
            .field("published", &self.published)
            .field("backpressured", &self.backpressured)
            .finish()
    }
}

/// Room for one typed message, reserved in the ring. Write it through `DerefMut`, then
/// [`commit`](Claim::commit); dropping it abandons the message.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-claim-type-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut publisher = channel.publisher()?;
/// let claim = publisher.claim()?;
/// drop(claim); // abandoned: nothing is published
/// assert!(channel.subscriber()?.try_recv()?.is_none());
/// # Ok::<(), salias::Error>(())
/// ```
#[must_use = "a claim publishes nothing until it is committed"]
pub struct Claim<'a, T: Message, M: Mode, K: Topology> {
    publisher: &'a mut Publisher<T, M, K>,
    pos: u64,
    len: usize,
}

impl<T: Message, M: Mode, K: Topology> Claim<'_, T, M, K> {
    /// Publishes the message (taking its global sequence number now, in Ordered mode).
    pub fn commit(self) {
        let at = self.publisher.frame_at(self.pos);
        let sequence = self.publisher.take_sequence(1);
        self.publisher.commit_frame(at, self.pos, self.len, sequence);
        self.publisher.publish_progress();
    }
}

impl<T: Message, M: Mode, K: Topology> Deref for Claim<'_, T, M, K> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the payload area is reserved for us, aligned for `T`, `size_of::<T>()`
        // bytes of initialised memory, and `T` accepts any bit pattern (`Message`).
        unsafe { &*self.publisher.frame_at(self.pos).add(Frame::<T, M>::HEADER).cast::<T>() }
    }
}

impl<T: Message, M: Mode, K: Topology> DerefMut for Claim<'_, T, M, K> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; the reservation is exclusive to this claim until commit.
        unsafe { &mut *self.publisher.frame_at(self.pos).add(Frame::<T, M>::HEADER).cast::<T>() }
    }
}

/// Room for `len` raw bytes, reserved in the ring. Write them through `DerefMut`, then
/// commit; dropping it abandons the message.
///
/// ```
/// # let name = format!("doc-claim-bytes-{}", std::process::id());
/// let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name))?;
/// let mut publisher = channel.publisher()?;
/// let mut claim = publisher.claim(4)?;
/// claim.copy_from_slice(b"ping");
/// claim.commit();
/// # Ok::<(), salias::Error>(())
/// ```
#[must_use = "a claim publishes nothing until it is committed"]
pub struct ClaimBytes<'a, M: Mode, K: Topology> {
    publisher: &'a mut Publisher<Bytes, M, K>,
    pos: u64,
    len: usize,
}

impl<M: Mode, K: Topology> ClaimBytes<'_, M, K> {
    /// Publishes all `len` bytes.
    pub fn commit(self) {
        let len = self.len;
        self.commit_len(len).expect("the full length always fits");
    }

    /// Publishes only the first `len` bytes (at most the claimed length).
    pub fn commit_len(self, len: usize) -> Result<()> {
        if len > self.len {
            return Err(Error::MessageTooLarge { len, max: self.len });
        }
        let at = self.publisher.frame_at(self.pos);
        let sequence = self.publisher.take_sequence(1);
        self.publisher.commit_frame(at, self.pos, len, sequence);
        self.publisher.publish_progress();
        Ok(())
    }
}

impl<M: Mode, K: Topology> Deref for ClaimBytes<'_, M, K> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `len` bytes of initialised ring memory reserved for this claim.
        unsafe {
            std::slice::from_raw_parts(
                self.publisher.frame_at(self.pos).add(Frame::<Bytes, M>::HEADER),
                self.len,
            )
        }
    }
}

impl<M: Mode, K: Topology> DerefMut for ClaimBytes<'_, M, K> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; the reservation is exclusive to this claim until commit.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.publisher.frame_at(self.pos).add(Frame::<Bytes, M>::HEADER),
                self.len,
            )
        }
    }
}
