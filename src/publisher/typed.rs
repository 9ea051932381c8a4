//! The typed API: offers, batches, in-place claims and blocking sends of `T: Message`.

use std::ops::{Deref, DerefMut};
use std::time::Duration;

use super::Publisher;
use super::write::PayloadCopy;
use crate::error::Result;
use crate::handle_error::PublishError;
use crate::kind::{Mode, Topology};
use crate::message::{Frame, Message};

impl<T: Message, M: Mode, K: Topology> Publisher<T, M, K> {
    /// Copies `message` into the ring and publishes it. Returns
    /// [`PublishError::Backpressured`] (and writes nothing) when the ring has no room.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
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
    ///         Err(salias::PublishError::Backpressured) => break, // full: retry later, or `send`
    ///         Err(other) => return Err(other.into()),
    ///     }
    /// }
    /// assert!(seq > 0 && publisher.backpressured() == 1);
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn offer(&mut self, message: &T) -> Result<(), PublishError> {
        // `as_bytes` (zerocopy's `IntoBytes`: no padding) views the message as its
        // `size_of::<T>()` initialised bytes.
        self.publish(
            1,
            Frame::<T, M>::len(size_of::<T>()) as u64,
            |_| message.as_bytes(),
            PayloadCopy::CommitLineLast,
        )
    }

    /// Publishes as many of `messages` as fit, in order, with one reservation, one
    /// progress update and (Ordered) one `fetch_add` for the whole batch. Returns how many
    /// were published; the rest were not written. Returns [`PublishError::Backpressured`] only if
    /// none fit.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-offer-batch-{}", std::process::id());
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut publisher = channel.publisher()?;
    /// let batch: Vec<Tick> = (0..16).map(|seq| Tick { seq }).collect();
    /// assert_eq!(publisher.offer_batch(&batch)?, 16);
    /// let mut subscriber = channel.subscriber()?;
    /// assert_eq!(subscriber.drain(100, |_, _| {})?, 16);
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn offer_batch(&mut self, messages: &[T]) -> Result<usize, PublishError> {
        if messages.is_empty() {
            return Ok(0);
        }
        let frame = Frame::<T, M>::len(size_of::<T>()) as u64;
        // When none fit, publishing one reports the backpressure.
        let count = self.room_for(frame, messages.len())?.max(1);
        // Sliced to what is published, so indexing it inside the loop needs no bounds check.
        let messages = &messages[..count];
        self.publish(
            messages.len(),
            frame * messages.len() as u64,
            |i| messages[i].as_bytes(),
            PayloadCopy::Plain,
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
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
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
    pub fn claim(&mut self) -> Result<Claim<'_, T, M, K>, PublishError> {
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
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-send-{}", std::process::id());
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut publisher = channel.publisher()?;
    /// publisher.set_wait_strategy(salias::wait::SpinThenYield::default());
    /// publisher.send(&Tick { seq: 1 })?;
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn send(&mut self, message: &T) -> Result<(), PublishError> {
        self.block(None, |p| p.offer(message))
    }

    /// Like [`send`](Self::send), giving up with [`PublishError::TimedOut`] after `timeout`.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-send-timeout-{}", std::process::id());
    /// use std::time::Duration;
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).capacity(4096))?;
    /// let mut publisher = channel.publisher()?;
    /// while publisher.offer(&Tick { seq: 0 }).is_ok() {}
    /// // Nobody reads, so no room comes.
    /// let full = publisher.send_timeout(&Tick { seq: 0 }, Duration::from_millis(1));
    /// assert_eq!(full, Err(salias::PublishError::TimedOut));
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn send_timeout(&mut self, message: &T, timeout: Duration) -> Result<(), PublishError> {
        self.block(Some(timeout), |p| p.offer(message))
    }
}

/// Room for one typed message, reserved in the ring. Write it through `DerefMut`, then
/// [`commit`](Claim::commit); dropping it abandons the message.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
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
    ///
    /// In Ordered mode a channel whose shared sequence counter was overwritten past the
    /// largest number publishes nothing, as if the claim were dropped:
    /// [`Publisher::fault`] says why, and the next offer returns
    /// [`PublishError::Corrupt`](crate::PublishError::Corrupt).
    pub fn commit(self) {
        let Ok(sequence) = self.publisher.take_sequence(1) else {
            return;
        };
        // SAFETY: the frame this claim reserved, written through it and not committed;
        // the claim is consumed, so nothing references it any more.
        unsafe { self.publisher.commit_frame(self.pos, self.len, sequence) };
        self.publisher.publish_progress();
    }
}

/// Where the claim lies in the ring; the message itself is still being written.
impl<T: Message, M: Mode, K: Topology> std::fmt::Debug for Claim<'_, T, M, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claim")
            .field("channel", &self.publisher.shared.name)
            .field("position", &self.pos)
            .field("len", &self.len)
            .finish()
    }
}

impl<T: Message, M: Mode, K: Topology> Deref for Claim<'_, T, M, K> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the payload area is reserved for us, aligned for `T` (frames are aligned
        // to at least `align_of::<T>()`), `size_of::<T>()` bytes of initialised memory, and
        // `T: FromBytes` (a `Message` supertrait) accepts any bit pattern. A raw cast, not
        // zerocopy's `ref_from_bytes`: that would check at run time what is known here.
        unsafe {
            self.publisher
                .ring
                .frame(self.pos)
                .payload_as::<T>(Frame::<T, M>::SHAPE)
        }
    }
}

impl<T: Message, M: Mode, K: Topology> DerefMut for Claim<'_, T, M, K> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; the reservation is exclusive to this claim until commit,
        // and `T: IntoBytes` means whatever is written through it leaves no uninitialised
        // bytes in the frame.
        unsafe { self.publisher.ring.payload_as_mut::<T>(self.pos, Frame::<T, M>::SHAPE) }
    }
}
