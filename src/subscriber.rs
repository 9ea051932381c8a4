//! The receiving end: a [`Subscriber`] reads every publisher ring in place and hands out
//! borrowed views of the messages.
//!
//! A message stays in the ring while its view ([`Received`]) lives; releasing it only moves
//! a local position. The subscriber tells publishers about freed room in batches (every
//! quarter ring, and whenever it runs out of messages), so receiving costs no shared write
//! per message.

use std::cell::Cell;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, Role};
use crate::kind::{Fifo, KindMarker, Mode, Mpsc, Topology};
use crate::layout::{COMMIT_KEY, FRAME_LEN_OFFSET, SLOT_FREE, ShmPtr, WakeWord};
use crate::message::{Bytes, Frame, Message, Payload};
use crate::shared::Shared;
use crate::wait::{self, Adaptive, WaitStrategy};

/// Frames taken from one ring in a row before looking at the next, so one busy publisher
/// cannot starve the others while bursts stay cheap.
const BURST: u32 = 64;

/// This subscriber's state for one publisher ring.
struct Reader {
    base: ShmPtr<u8>,
    /// Position of the next frame to read.
    head: u64,
    /// Position last stored to the shared cursor.
    released: u64,
    cursor: ShmPtr<AtomicU64>,
}

/// Receives messages of type `T` from every publisher of a channel.
///
/// `Send` but not `Sync`. Dropping it releases everything it read and frees its slot; on an
/// `Mpsc` channel the next subscriber continues where it stopped.
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
    received: u64,
    wake: ShmPtr<WakeWord>,
    /// Taken out while a blocking call runs, so waiting never allocates.
    strategy: Option<Box<dyn WaitStrategy>>,
    _marker: KindMarker<T, M, K>,
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    pub(crate) fn new(shared: Arc<Shared>) -> Result<Self> {
        let slot = shared.claim_slot(
            Role::Subscriber,
            (0..shared.subscribers as usize).map(|s| &*shared.subscriber_slot(s).holder),
        )?;
        let mut readers = Vec::with_capacity(shared.producers as usize);
        for producer in 0..shared.producers as usize {
            let cursor = shared.cursor(slot, producer);
            let head = cursor.load(Ordering::Acquire);
            if !head.is_multiple_of(shared.frame_align as u64) {
                shared
                    .subscriber_slot(slot)
                    .holder
                    .token
                    .store(SLOT_FREE, Ordering::Release);
                return Err(Error::corrupt(
                    &shared.name,
                    format!("the subscriber cursor of ring {producer} is {head}, which is not frame aligned"),
                ));
            }
            readers.push(Reader {
                // SAFETY: the ring mapping lives as long as `shared`, which we hold.
                base: unsafe { ShmPtr::from_raw(shared.ring(producer).base()) },
                head,
                released: head,
                // SAFETY: the cursor lives in the control mapping, which `shared` keeps alive
                // as long as this subscriber.
                cursor: unsafe { ShmPtr::new(&**cursor) },
            });
        }
        let quarter = (shared.window as u64 / 4).max(1);
        Ok(Subscriber {
            slot,
            readers: readers.into_boxed_slice(),
            mask: shared.capacity as u64 - 1,
            max_len: shared.max_message_len,
            fixed_len: shared.fixed_len,
            release_every: quarter,
            current: Cell::new(0),
            burst: Cell::new(0),
            received: 0,
            // SAFETY: as for the cursors.
            wake: unsafe { ShmPtr::new(&*shared.hot().wake) },
            strategy: Some(Box::new(Adaptive::default())),
            shared,
            _marker: KindMarker::default(),
        })
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

    /// Length of the committed frame at the head of ring `ring`, if there is one.
    #[inline(always)]
    fn peek(&self, ring: usize) -> Result<Option<usize>> {
        let reader = &self.readers[ring];
        // SAFETY: `head & mask` < capacity and frames are 8-aligned, so the commit word is
        // inside the first view and aligned for AtomicU64.
        let at = unsafe { reader.base.as_ptr().add((reader.head & self.mask) as usize) };
        // SYNC POINT frame-commit (Acquire side): the header and payload written before
        // the publisher's Release store are visible once we see our position's key.
        // SAFETY: see above.
        let commit = unsafe { &*at.cast::<AtomicU64>() }.load(Ordering::Acquire);
        if commit != reader.head ^ COMMIT_KEY {
            return Ok(None);
        }
        // SAFETY: the length field is inside the frame header, inside the double view.
        let len = unsafe { at.add(FRAME_LEN_OFFSET).cast::<u32>().read_volatile() } as usize;
        let valid = match self.fixed_len {
            Some(fixed) => len == fixed,
            None => len <= self.max_len,
        };
        if !valid {
            return Err(Error::corrupt(
                &self.shared.name,
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
        Ok(Some(len))
    }

    /// The next message to deliver, as (ring, length): keep draining the current ring for
    /// up to `BURST` frames, then go round the others.
    #[inline]
    fn find(&self) -> Result<Option<(usize, usize)>> {
        let current = self.current.get();
        if self.burst.get() < BURST
            && let Some(len) = self.peek(current)?
        {
            self.burst.set(self.burst.get() + 1);
            return Ok(Some((current, len)));
        }
        let rings = self.readers.len();
        for step in 1..=rings {
            let ring = (current + step) % rings;
            if let Some(len) = self.peek(ring)? {
                self.current.set(ring);
                self.burst.set(1);
                return Ok(Some((ring, len)));
            }
        }
        Ok(None)
    }

    fn any_ready(&self) -> bool {
        (0..self.readers.len()).any(|ring| !matches!(self.peek(ring), Ok(None)))
    }

    /// Moves past the frame at the head of `ring`; tells publishers in batches.
    #[inline(always)]
    fn advance(&mut self, ring: usize, len: usize) {
        self.received += 1;
        let release_every = self.release_every;
        let reader = &mut self.readers[ring];
        reader.head += Frame::<T, M>::len(len) as u64;
        if reader.head - reader.released >= release_every {
            Self::store_cursor(reader);
        }
    }

    #[inline(always)]
    fn store_cursor(reader: &mut Reader) {
        // SYNC POINT ring-release (Release side): our reads of everything before `head`
        // happen before a publisher that loads this cursor overwrites it.
        reader.cursor.get().store(reader.head, Ordering::Release);
        reader.released = reader.head;
    }

    /// Tells publishers about all room released so far.
    pub fn release_all(&mut self) {
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

    /// Finds the next message, flushing released room when there is none.
    fn next(&mut self) -> Result<Option<(usize, usize)>> {
        let found = self.find()?;
        if found.is_none() {
            self.release_all();
        }
        Ok(found)
    }

    fn wait_next(&mut self, timeout: Option<Duration>) -> Result<(usize, usize)> {
        if let Some(found) = self.next()? {
            return Ok(found);
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut strategy = self.strategy.take().unwrap_or_else(|| Box::new(Adaptive::default()));
        let mut failure = None;
        let this = &*self;
        let wake = this.wake.get();
        let found = wait::block_on(
            &mut *strategy,
            Some(wake),
            deadline,
            || match this.find() {
                Ok(found) => found.map(Ok),
                Err(e) => {
                    failure = Some(e);
                    Some(Err(()))
                }
            },
            &mut || this.any_ready(),
        );
        self.strategy = Some(strategy);
        match found {
            Some(Ok(found)) => Ok(found),
            Some(Err(())) => Err(failure.expect("the attempt recorded its error")),
            None => Err(Error::TimedOut),
        }
    }
}

impl<T: Message, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// The next message, if one is committed, as a view into the ring; `Ok(None)` when
    /// every ring is empty. The message is released when the view is dropped.
    #[inline]
    pub fn try_recv(&mut self) -> Result<Option<Received<'_, T, M, K>>> {
        Ok(self.next()?.map(|(ring, len)| Received::new(self, ring, len)))
    }

    /// Waits for the next message using the wait strategy.
    pub fn recv(&mut self) -> Result<Received<'_, T, M, K>> {
        let (ring, len) = self.wait_next(None)?;
        Ok(Received::new(self, ring, len))
    }

    /// Like [`recv`](Self::recv), giving up with [`Error::TimedOut`] after `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Received<'_, T, M, K>> {
        let (ring, len) = self.wait_next(Some(timeout))?;
        Ok(Received::new(self, ring, len))
    }

    /// Hands up to `max` committed messages to `handle` (with the index of the publisher
    /// slot that sent each) and releases them; returns how many. Never waits.
    #[inline]
    pub fn poll(&mut self, max: usize, mut handle: impl FnMut(usize, &T)) -> Result<usize> {
        let mut count = 0;
        while count < max {
            let Some((ring, len)) = self.find()? else { break };
            // SAFETY: the payload is a committed, validated frame of exactly
            // `size_of::<T>()` bytes, aligned for `T`; `T` accepts any bit pattern.
            handle(ring, unsafe { &*self.payload(ring).cast::<T>() });
            self.advance(ring, len);
            count += 1;
        }
        self.release_all();
        Ok(count)
    }
}

impl<M: Mode, K: Topology> Subscriber<Bytes, M, K> {
    /// The next message, if one is committed, as a view into the ring; `Ok(None)` when
    /// every ring is empty. The message is released when the view is dropped.
    #[inline]
    pub fn try_recv(&mut self) -> Result<Option<ReceivedBytes<'_, M, K>>> {
        Ok(self.next()?.map(|(ring, len)| ReceivedBytes::new(self, ring, len)))
    }

    /// Waits for the next message using the wait strategy.
    pub fn recv(&mut self) -> Result<ReceivedBytes<'_, M, K>> {
        let (ring, len) = self.wait_next(None)?;
        Ok(ReceivedBytes::new(self, ring, len))
    }

    /// Like [`recv`](Self::recv), giving up with [`Error::TimedOut`] after `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<ReceivedBytes<'_, M, K>> {
        let (ring, len) = self.wait_next(Some(timeout))?;
        Ok(ReceivedBytes::new(self, ring, len))
    }

    /// Hands up to `max` committed messages to `handle` (with the index of the publisher
    /// slot that sent each) and releases them; returns how many. Never waits.
    #[inline]
    pub fn poll(&mut self, max: usize, mut handle: impl FnMut(usize, &[u8])) -> Result<usize> {
        let mut count = 0;
        while count < max {
            let Some((ring, len)) = self.find()? else { break };
            // SAFETY: the payload is a committed frame whose validated length lies inside
            // the double view.
            handle(ring, unsafe { std::slice::from_raw_parts(self.payload(ring), len) });
            self.advance(ring, len);
            count += 1;
        }
        self.release_all();
        Ok(count)
    }
}

impl<T: Payload, M: Mode, K: Topology> Drop for Subscriber<T, M, K> {
    fn drop(&mut self) {
        self.release_all();
        self.shared
            .subscriber_slot(self.slot)
            .holder
            .token
            .store(SLOT_FREE, Ordering::Release);
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

/// A typed message borrowed from the ring. Dropping it (or [`release`](Received::release))
/// releases it.
pub struct Received<'a, T: Payload, M: Mode, K: Topology> {
    subscriber: &'a mut Subscriber<T, M, K>,
    ring: usize,
    len: usize,
}

impl<'a, T: Payload, M: Mode, K: Topology> Received<'a, T, M, K> {
    fn new(subscriber: &'a mut Subscriber<T, M, K>, ring: usize, len: usize) -> Self {
        Received { subscriber, ring, len }
    }

    /// The publisher slot that sent the message.
    pub fn publisher_slot(&self) -> usize {
        self.ring
    }

    /// Releases the message now (same as dropping the view).
    pub fn release(self) {}
}

impl<T: Message, M: Mode, K: Topology> Deref for Received<'_, T, M, K> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a committed, validated frame of exactly `size_of::<T>()` bytes, aligned
        // for `T`, which accepts any bit pattern; publishers do not overwrite it before we
        // release it.
        unsafe { &*self.subscriber.payload(self.ring).cast::<T>() }
    }
}

impl<T: Payload, M: Mode, K: Topology> Drop for Received<'_, T, M, K> {
    fn drop(&mut self) {
        self.subscriber.advance(self.ring, self.len);
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
        unsafe { std::slice::from_raw_parts(self.subscriber.payload(self.ring), self.len) }
    }
}
