//! The raw API: byte messages of any length up to the channel's maximum.

use std::ops::{Deref, DerefMut};
use std::time::Duration;

use super::Publisher;
use super::write::PayloadCopy;
use crate::error::Result;
use crate::handle_error::PublishError;
use crate::kind::{Mode, Topology};
use crate::message::Bytes;

impl<M: Mode, K: Topology> Publisher<Bytes, M, K> {
    pub(super) fn check_len(&self, len: usize) -> Result<(), PublishError> {
        if len > self.max_len {
            return Err(PublishError::MessageTooLarge {
                len,
                max: self.max_len as u32,
            });
        }
        if let Some(fixed) = self.shared.fixed_len
            && len != fixed
        {
            return Err(PublishError::WrongMessageSize {
                len,
                expected: fixed as u32,
            });
        }
        Ok(())
    }

    /// Copies `bytes` into the ring as one message. Returns [`PublishError::MessageTooLarge`]
    /// for more than the channel's maximum, [`PublishError::Backpressured`] when there is no room.
    ///
    /// ```
    /// # let name = format!("doc-raw-offer-{}", std::process::id());
    /// let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name).max_message_size(64))?;
    /// let mut publisher = channel.publisher()?;
    /// publisher.offer(b"hello")?;
    /// let too_big = publisher.offer(&[0u8; 65]);
    /// assert_eq!(too_big, Err(salias::PublishError::MessageTooLarge { len: 65, max: 64 }));
    /// # Ok::<(), salias::Error>(())
    /// ```
    // Always inlined: a length known where it is called (an array, a C caller's typed
    // channel) then compiles to fixed moves instead of a copy loop.
    #[inline(always)]
    pub fn offer(&mut self, bytes: &[u8]) -> Result<(), PublishError> {
        self.check_len(bytes.len())?;
        self.publish(
            1,
            self.shape().len(bytes.len()) as u64,
            |_| bytes,
            PayloadCopy::CommitLineLast,
        )
    }

    /// Publishes as many of `messages` as fit, in order, as one batch. Returns how many
    /// were published; the rest were not written. Returns [`PublishError::Backpressured`] only if
    /// none fit, and [`PublishError::MessageTooLarge`] (publishing nothing) if any is too large.
    pub fn offer_batch<B: AsRef<[u8]>>(&mut self, messages: &[B]) -> Result<usize, PublishError> {
        if messages.is_empty() {
            return Ok(0);
        }
        // One pass checks every length (any too large publishes nothing) and adds up the
        // frames that fit the cached limit; only if some do not is the limit refreshed.
        let (mut count, mut frames) = (0, 0u64);
        let room = self.hot.limit.saturating_sub(self.hot.tail);
        for (i, message) in messages.iter().enumerate() {
            let len = message.as_ref().len();
            self.check_len(len)?;
            let frame = self.shape().len(len) as u64;
            if count == i && frames + frame <= room {
                (count, frames) = (count + 1, frames + frame);
            }
        }
        if count < messages.len() {
            self.refresh_limit()?;
            // Counted again from the first: a fanout subscriber that joined since may
            // have lowered the limit.
            let room = self.hot.limit.saturating_sub(self.hot.tail);
            (count, frames) = (0, 0);
            for message in messages {
                let frame = self.shape().len(message.as_ref().len()) as u64;
                if frames + frame > room {
                    break;
                }
                (count, frames) = (count + 1, frames + frame);
            }
        }
        if count == 0 {
            // None fit: publishing one reports the backpressure.
            (count, frames) = (1, self.shape().len(messages[0].as_ref().len()) as u64);
        }
        // Sliced to what is published, so indexing it inside the loop needs no bounds check.
        let messages = &messages[..count];
        self.publish(messages.len(), frames, |i| messages[i].as_ref(), PayloadCopy::Plain)?;
        Ok(count)
    }

    /// Publishes as many as fit of the equal-size messages packed back to back in
    /// `messages`, `size` bytes each (an array of fixed-size records, such as another
    /// language's structs), in order, as one batch: one length check for all, and none of
    /// the per-message slices [`offer_batch`](Self::offer_batch) takes. Returns how many
    /// were published; the rest were not written. Returns [`PublishError::Backpressured`]
    /// only if none fit, [`PublishError::MessageTooLarge`] or
    /// [`PublishError::WrongMessageSize`] if `size` is not accepted, and
    /// [`PublishError::PackedLength`] if `messages` is not a whole number of them
    /// (publishing nothing).
    ///
    /// ```
    /// # let name = format!("doc-raw-offer-packed-{}", std::process::id());
    /// let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name))?;
    /// let mut publisher = channel.publisher()?;
    /// let records = [1u8, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]; // three 4-byte records
    /// assert_eq!(publisher.offer_packed(&records, 4)?, 3);
    /// let mut subscriber = channel.subscriber()?;
    /// assert_eq!(&*subscriber.try_recv()?.expect("the first"), &[1, 1, 1, 1]);
    /// assert_eq!(
    ///     publisher.offer_packed(&records[..10], 4),
    ///     Err(salias::PublishError::PackedLength { len: 10, size: 4 })
    /// );
    /// # Ok::<(), salias::Error>(())
    /// ```
    // Always inlined, as `offer`: with `size` known where it is called, the copies and the
    // frame arithmetic compile to fixed moves.
    #[inline(always)]
    pub fn offer_packed(&mut self, messages: &[u8], size: usize) -> Result<usize, PublishError> {
        if messages.is_empty() {
            return Ok(0);
        }
        self.check_len(size)?;
        if size == 0 || !messages.len().is_multiple_of(size) {
            return Err(PublishError::PackedLength {
                len: messages.len(),
                size: size as u32,
            });
        }
        let frame = self.shape().len(size) as u64;
        // When none fit, publishing one reports the backpressure.
        let count = self.room_for(frame, messages.len() / size)?.max(1);
        let messages = &messages[..count * size];
        self.publish(
            count,
            frame * count as u64,
            // SAFETY: `publish` asks for `i < count` only, and `messages` holds `count * size`
            // bytes, so bytes `i * size..(i + 1) * size` lie inside it. Unchecked because
            // the two bounds checks the compiler cannot remove were a fifth of a packed
            // message's instructions (callgrind, 64-byte messages).
            |i| unsafe { messages.get_unchecked(i * size..(i + 1) * size) },
            PayloadCopy::Plain,
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
    pub fn claim(&mut self, len: usize) -> Result<ClaimBytes<'_, M, K>, PublishError> {
        self.check_len(len)?;
        let pos = self.reserve(self.shape().len(len) as u64)?;
        Ok(ClaimBytes {
            pos,
            len,
            publisher: self,
        })
    }

    /// Like [`offer`](Self::offer), but waits for room using the wait strategy.
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), PublishError> {
        self.block(None, |p| p.offer(bytes))
    }

    /// Like [`send`](Self::send), giving up with [`PublishError::TimedOut`] after `timeout`.
    pub fn send_timeout(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), PublishError> {
        self.block(Some(timeout), |p| p.offer(bytes))
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
    pub fn commit_len(self, len: usize) -> Result<(), PublishError> {
        if len > self.len {
            return Err(PublishError::MessageTooLarge {
                len,
                max: self.len as u32,
            });
        }
        // A typed channel's messages are all the type's size (raw handles on one:
        // `connect_as_bytes`, `connect_typed`), whatever the claim reserved.
        if let Some(fixed) = self.publisher.shared.fixed_len
            && len != fixed
        {
            return Err(PublishError::WrongMessageSize {
                len,
                expected: fixed as u32,
            });
        }
        let sequence = self.publisher.take_sequence(1)?;
        // SAFETY: the frame this claim reserved, `len` ≤ its reserved length, not
        // committed; the claim is consumed, so nothing references it any more.
        unsafe { self.publisher.commit_frame(self.pos, len, sequence) };
        self.publisher.publish_progress();
        Ok(())
    }
}

/// Where the claim lies in the ring and how many bytes it reserved.
impl<M: Mode, K: Topology> std::fmt::Debug for ClaimBytes<'_, M, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaimBytes")
            .field("channel", &self.publisher.shared.name)
            .field("position", &self.pos)
            .field("len", &self.len)
            .finish()
    }
}

impl<M: Mode, K: Topology> Deref for ClaimBytes<'_, M, K> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `len` bytes of initialised ring memory reserved for this claim, which
        // nothing else references until it is committed or dropped.
        unsafe {
            self.publisher
                .ring
                .payload_mut(self.pos, self.publisher.shape(), self.len)
        }
    }
}

impl<M: Mode, K: Topology> DerefMut for ClaimBytes<'_, M, K> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; the reservation is exclusive to this claim until commit.
        unsafe {
            self.publisher
                .ring
                .payload_mut(self.pos, self.publisher.shape(), self.len)
        }
    }
}
