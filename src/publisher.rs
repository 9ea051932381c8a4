//! The publishing end: one [`Publisher`] owns one producer slot and its ring.
//!
//! The hot path writes the frame into the ring, then stores the frame's commit word with
//! Release. It performs no read-modify-write on shared memory, no system call and no heap
//! allocation; it reads subscriber cursors only when its cached limit runs out.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, Role};
use crate::kind::{Fifo, KindMarker, Mode, Mpsc, Topology};
use crate::layout::{COMMIT_KEY, FRAME_LEN_OFFSET, Progress, SLOT_FREE, ShmPtr, SingleUser, WakeWord};
use crate::message::{Bytes, Frame, Message, Payload};
use crate::shared::Shared;
use crate::wait::{self, Adaptive, WaitStrategy};

/// Publishes messages of type `T` into its own ring of a channel.
///
/// `Send` but not `Sync`: every method takes `&mut self`, so the compiler guarantees one
/// writer per ring. Dropping it frees the slot for another publisher.
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
    published: u64,
    backpressured: u64,
    /// Taken out while a blocking call runs, so waiting never allocates.
    strategy: Option<Box<dyn WaitStrategy>>,
    _marker: KindMarker<T, M, K>,
    _single_writer: SingleUser,
}

impl<T: Payload, M: Mode, K: Topology> Publisher<T, M, K> {
    pub(crate) fn new(shared: Arc<Shared>) -> Result<Self> {
        let slot = shared.claim_slot(
            Role::Publisher,
            (0..shared.producers as usize).map(|p| &*shared.producer_slot(p).holder),
        )?;
        crate::platform::register_fast_side();
        let tail = match shared.recover_tail(slot) {
            Ok(tail) => tail,
            Err(e) => {
                shared
                    .producer_slot(slot)
                    .holder
                    .token
                    .store(SLOT_FREE, Ordering::Release);
                return Err(e);
            }
        };
        // SAFETY: both live in the control mapping, which `shared` keeps alive as long as
        // the publisher holding these pointers.
        let (progress, wake) = unsafe {
            (
                ShmPtr::new(&*shared.producer_slot(slot).progress),
                ShmPtr::new(&*shared.hot().wake),
            )
        };
        let mut publisher = Publisher {
            // SAFETY: the ring mapping lives as long as `shared`, which the publisher holds.
            ring: unsafe { ShmPtr::from_raw(shared.ring(slot).base()) },
            mask: shared.capacity as u64 - 1,
            tail,
            limit: 0,
            window: shared.window as u64,
            max_len: shared.max_message_len,
            progress,
            wake,
            published: 0,
            backpressured: 0,
            slot,
            shared,
            strategy: Some(Box::new(Adaptive::default())),
            _marker: KindMarker::default(),
            _single_writer: SingleUser::default(),
        };
        let progress = publisher.progress.get();
        progress.tail.store(tail, Ordering::Release);
        publisher.published = progress.published.load(Ordering::Relaxed);
        publisher.backpressured = progress.backpressured.load(Ordering::Relaxed);
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

    /// Recomputes the write limit from the subscribers' cursors.
    fn refresh_limit(&mut self) -> Result<()> {
        // SYNC POINT ring-release (Acquire side): the subscriber stored its cursor with
        // Release after it finished reading everything before it, so we may overwrite it.
        let cursor = self.shared.cursor(0, self.slot).load(Ordering::Acquire);
        if cursor > self.tail || self.tail - cursor > self.mask + 1 {
            return Err(Error::corrupt(
                &self.shared.name,
                format!(
                    "the subscriber cursor of ring {} is {cursor}, outside the {} bytes before the publisher's position {}",
                    self.slot,
                    self.mask + 1,
                    self.tail
                ),
            ));
        }
        self.limit = cursor + self.window;
        Ok(())
    }

    /// Finds room for a `frame`-byte frame, returning its position.
    #[inline(always)]
    fn reserve(&mut self, frame: u64) -> Result<u64> {
        let pos = self.tail;
        if pos + frame > self.limit {
            self.refresh_limit()?;
            if pos + frame > self.limit {
                self.backpressured += 1;
                self.progress
                    .get()
                    .backpressured
                    .store(self.backpressured, Ordering::Relaxed);
                return Err(Error::Backpressured);
            }
        }
        Ok(pos)
    }

    /// Address of the frame at `pos`.
    #[inline(always)]
    fn frame_at(&self, pos: u64) -> *mut u8 {
        // SAFETY: `pos & mask` < capacity, and the ring is mapped twice in a row, so the
        // frame (at most `window` ≤ capacity bytes) lies inside the double view.
        unsafe { self.ring.as_ptr().add((pos & self.mask) as usize) }
    }

    /// Writes the frame header and commits it, without publishing progress or waking.
    #[inline(always)]
    fn commit_frame(&mut self, at: *mut u8, pos: u64, len: usize) {
        // SAFETY: `at` is the 8-aligned start of a frame we reserved; the header fields are
        // inside it and no subscriber reads them before the commit word below says so.
        unsafe {
            at.add(FRAME_LEN_OFFSET).cast::<u32>().write(len as u32);
            at.add(FRAME_LEN_OFFSET + 4).cast::<u32>().write(0);
            // SYNC POINT frame-commit (Release side): header and payload become visible to
            // a subscriber that loads this word with Acquire and finds `pos ^ COMMIT_KEY`.
            (*at.cast::<AtomicU64>()).store(pos ^ COMMIT_KEY, Ordering::Release);
        }
        self.tail = pos + Frame::<T, M>::len(len) as u64;
        self.published += 1;
    }

    /// Reports progress for monitors and wakes sleeping subscribers.
    #[inline(always)]
    fn publish_progress(&self) {
        let progress = self.progress.get();
        progress.tail.store(self.tail, Ordering::Release);
        progress.published.store(self.published, Ordering::Relaxed);
        wait::wake_subscribers(self.wake.get());
    }

    /// Writes one frame of `len` payload bytes produced by `write`, then commits it.
    #[inline(always)]
    fn offer_with(&mut self, len: usize, write: impl FnOnce(*mut u8)) -> Result<()> {
        let frame = Frame::<T, M>::len(len) as u64;
        let pos = self.reserve(frame)?;
        let at = self.frame_at(pos);
        // SAFETY: the payload starts HEADER bytes into the reserved frame.
        write(unsafe { at.add(Frame::<T, M>::HEADER) });
        self.commit_frame(at, pos, len);
        self.publish_progress();
        Ok(())
    }

    fn block<R>(&mut self, timeout: Option<Duration>, mut attempt: impl FnMut(&mut Self) -> Result<R>) -> Result<R> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut strategy = self.strategy.take().unwrap_or_else(|| Box::new(Adaptive::default()));
        let mut failure = None;
        let outcome = wait::block_on(
            &mut *strategy,
            None,
            deadline,
            || match attempt(self) {
                Ok(value) => Some(Ok(value)),
                Err(Error::Backpressured) => None,
                Err(e) => {
                    failure = Some(e);
                    Some(Err(()))
                }
            },
            &mut || false,
        );
        self.strategy = Some(strategy);
        match outcome {
            Some(Ok(value)) => Ok(value),
            Some(Err(())) => Err(failure.expect("the attempt recorded its error")),
            None => Err(Error::TimedOut),
        }
    }
}

impl<T: Message, M: Mode, K: Topology> Publisher<T, M, K> {
    /// Copies `message` into the ring and publishes it. Returns
    /// [`Error::Backpressured`] (and writes nothing) when the ring has no room.
    #[inline]
    pub fn offer(&mut self, message: &T) -> Result<()> {
        self.offer_with(size_of::<T>(), |payload| {
            // SAFETY: the payload area is `size_of::<T>()` bytes, aligned for `T` (frames
            // are aligned to at least `align_of::<T>()`), and `T` has no padding, so all
            // bytes copied are initialised.
            unsafe { std::ptr::copy_nonoverlapping((message as *const T).cast::<u8>(), payload, size_of::<T>()) }
        })
    }

    /// Publishes as many of `messages` as fit, in order, with one progress update and one
    /// wake check for the whole batch. Returns how many were published; the rest were not
    /// written. Returns [`Error::Backpressured`] only if none fit.
    pub fn offer_batch(&mut self, messages: &[T]) -> Result<usize> {
        let frame = Frame::<T, M>::len(size_of::<T>()) as u64;
        if messages.is_empty() {
            return Ok(0);
        }
        if self.tail + frame * messages.len() as u64 > self.limit {
            self.refresh_limit()?;
        }
        let room = ((self.limit - self.tail) / frame) as usize;
        let count = room.min(messages.len());
        if count == 0 {
            return self.reserve(frame).map(|_| 0);
        }
        for message in &messages[..count] {
            let pos = self.tail;
            let at = self.frame_at(pos);
            // SAFETY: as in `offer`; `count` frames fit below `limit`.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (message as *const T).cast::<u8>(),
                    at.add(Frame::<T, M>::HEADER),
                    size_of::<T>(),
                )
            };
            self.commit_frame(at, pos, size_of::<T>());
        }
        self.publish_progress();
        Ok(count)
    }

    /// Reserves room for one message and lends it out to be written in place; publish it
    /// with [`Claim::commit`]. Dropping the claim instead abandons it: nothing is
    /// published and the room is reused. The slot holds the ring's previous bytes, so
    /// write every field.
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
    pub fn send(&mut self, message: &T) -> Result<()> {
        self.block(None, |p| p.offer(message))
    }

    /// Like [`send`](Self::send), giving up with [`Error::TimedOut`] after `timeout`.
    pub fn send_timeout(&mut self, message: &T, timeout: Duration) -> Result<()> {
        self.block(Some(timeout), |p| p.offer(message))
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
    #[inline]
    pub fn offer(&mut self, bytes: &[u8]) -> Result<()> {
        self.check_len(bytes.len())?;
        self.offer_with(bytes.len(), |payload| {
            // SAFETY: the reserved payload area holds `bytes.len()` bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), payload, bytes.len()) }
        })
    }

    /// Publishes as many of `messages` as fit, in order, with one progress update. Returns
    /// how many were published; the rest were not written.
    pub fn offer_batch<B: AsRef<[u8]>>(&mut self, messages: &[B]) -> Result<usize> {
        let mut count = 0;
        for message in messages {
            let bytes = message.as_ref();
            self.check_len(bytes.len())?;
            let frame = Frame::<Bytes, M>::len(bytes.len()) as u64;
            let pos = match self.reserve(frame) {
                Ok(pos) => pos,
                Err(Error::Backpressured) if count > 0 => break,
                Err(e) => return Err(e),
            };
            let at = self.frame_at(pos);
            // SAFETY: the reserved payload area holds `bytes.len()` bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at.add(Frame::<Bytes, M>::HEADER), bytes.len()) };
            self.commit_frame(at, pos, bytes.len());
            count += 1;
        }
        if count > 0 {
            self.publish_progress();
        }
        Ok(count)
    }

    /// Reserves `len` bytes to be written in place; publish them with
    /// [`ClaimBytes::commit`] (or fewer with [`ClaimBytes::commit_len`]). Dropping the
    /// claim abandons it.
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
#[must_use = "a claim publishes nothing until it is committed"]
pub struct Claim<'a, T: Message, M: Mode, K: Topology> {
    publisher: &'a mut Publisher<T, M, K>,
    pos: u64,
    len: usize,
}

impl<T: Message, M: Mode, K: Topology> Claim<'_, T, M, K> {
    /// Publishes the message.
    pub fn commit(self) {
        let at = self.publisher.frame_at(self.pos);
        self.publisher.commit_frame(at, self.pos, self.len);
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
        self.publisher.commit_frame(at, self.pos, len);
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
