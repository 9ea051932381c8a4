//! Last value: the latest message a Fanout channel's publisher committed, copied out by any
//! process without joining as a subscriber and without holding publishers back.
//!
//! The publisher reports its tail after every publish; the frame that ends there is its
//! latest message, found by its commit key as a history walk finds it (`frame_before`).
//! It is copied out as a lossy subscriber copies, and kept only if the publisher's
//! overwrite frontier, re-read after the copy, says nothing of it was overwritten
//! meanwhile; otherwise the publisher has moved on by a ring, and the read starts again
//! from its new tail. Ordered holes (numbers a publisher declared lost) are stepped over.

use crate::channel::Channel;
use crate::error::{Result, Role};
use crate::handle_error::ReceiveError;
use crate::kind::{Fanout, Mode, Ordered};
use crate::message::{Bytes, Frame, Message, Payload};
use crate::protocol;
use crate::region::Shared;
use crate::subscriber::{Copied, MessageInfo, frame_before};
use crate::wire::frame;
use crate::wire::layout::MAX_POSITION;

/// How often a read starts again because its publisher lapped the frame it copied: only a
/// reader descheduled for a whole ring of messages, every time, gives up.
const ATTEMPTS: u32 = 64;

impl<T: Message, M: Mode> Channel<T, M, Fanout> {
    /// A copy of the latest message publisher `publisher_slot` committed, or `Ok(None)`
    /// if it has committed none (or, Ordered, the ring holds only numbers it declared
    /// lost). No subscriber slot is taken and no publisher waits: the message is copied
    /// out as a lossy subscriber copies, and a copy the publisher overwrote meanwhile is
    /// thrown away and read again, never returned torn.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Quote { price: u64 }
    /// # let name = format!("doc-latest-{}", std::process::id());
    /// let channel = salias::FifoFanout::<Quote>::create(&Config::new(&name))?;
    /// assert!(channel.latest(0)?.is_none());
    /// let mut publisher = channel.publisher()?;
    /// publisher.offer(&Quote { price: 100 })?;
    /// publisher.offer(&Quote { price: 101 })?;
    /// assert_eq!(channel.latest(0)?.map(|quote| quote.price), Some(101));
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn latest(&self, publisher_slot: usize) -> Result<Option<Copied<T, M>>> {
        let mut value = T::new_zeroed();
        let found = latest::<T, M>(self.shared(), publisher_slot, value.as_mut_bytes())?;
        Ok(found.map(|found| Copied::new(value, info(publisher_slot, found), 0)))
    }
}

impl<T: Message> Channel<T, Ordered, Fanout> {
    /// A copy of the latest message by sequence number: the highest-numbered of the
    /// messages each publisher committed last ([`latest`](Self::latest) of every slot).
    pub fn latest_in_order(&self) -> Result<Option<Copied<T, Ordered>>> {
        let mut best: Option<Copied<T, Ordered>> = None;
        for slot in 0..self.shared().publishers as usize {
            if let Some(copied) = self.latest(slot)?
                && best
                    .as_ref()
                    .is_none_or(|best| copied.info().sequence() > best.info().sequence())
            {
                best = Some(copied);
            }
        }
        Ok(best)
    }
}

impl<M: Mode> Channel<Bytes, M, Fanout> {
    /// The latest message publisher `publisher_slot` committed, copied into `buffer`, as
    /// [`latest`](Channel::latest): its length, or `Ok(None)` if there is none. A message
    /// longer than `buffer` is [`ReceiveError::BufferTooSmall`] (a buffer of the channel's
    /// `max_message_size` always fits).
    pub fn latest_into(&self, publisher_slot: usize, buffer: &mut [u8]) -> Result<Option<Copied<usize, M>>> {
        let Some(found) = latest::<Bytes, M>(self.shared(), publisher_slot, buffer)? else {
            return Ok(None);
        };
        if found.len > buffer.len() {
            return Err(ReceiveError::BufferTooSmall {
                len: u32::try_from(found.len).unwrap_or(u32::MAX),
                buffer: u32::try_from(buffer.len()).unwrap_or(u32::MAX),
            }
            .into());
        }
        Ok(Some(Copied::new(found.len, info(publisher_slot, found), 0)))
    }
}

impl Channel<Bytes, Ordered, Fanout> {
    /// The latest message by sequence number, copied into `buffer`, as
    /// [`latest_in_order`](Channel::latest_in_order).
    pub fn latest_in_order_into(&self, buffer: &mut [u8]) -> Result<Option<Copied<usize, Ordered>>> {
        // Which publisher's latest is highest, reading headers only; then its message,
        // which by then may be a later one of that publisher (higher still).
        let mut best: Option<(usize, u64)> = None;
        for slot in 0..self.shared().publishers as usize {
            if let Some(found) = latest::<Bytes, Ordered>(self.shared(), slot, &mut [])?
                && best.is_none_or(|(_, sequence)| found.sequence > sequence)
            {
                best = Some((slot, found.sequence));
            }
        }
        match best {
            Some((slot, _)) => self.latest_into(slot, buffer),
            None => Ok(None),
        }
    }
}

/// The latest message of one ring, copied out.
#[derive(Clone, Copy)]
struct Found {
    len: usize,
    sequence: u64,
}

/// Copies the latest message publisher `ring` committed into `dst` (as much of it as
/// fits); `Ok(None)` if it has committed none, or none the ring still holds.
fn latest<T: Payload, M: Mode>(shared: &Shared, ring: usize, dst: &mut [u8]) -> Result<Option<Found>> {
    shared.check_health()?;
    shared.check_slot_index(Role::Publisher, ring)?;
    let capacity = shared.capacity as u64;
    let slot = shared.publisher_slot(ring);
    let frontier = &slot.overwrite.frontier;
    // SAFETY: `view` requires that the view not outlive the `MagicRing`; this one is a
    // local of this call and never escapes it, while `shared`, which owns the ring, is
    // borrowed for the whole call.
    let view = unsafe { shared.ring(ring).view() };
    let shape = Frame::<T, M>::in_channel(shared.fixed_len);
    let longest = shape.len(shared.max_message_len.max(frame::HOLE_LEN)) as u64;
    for _ in 0..ATTEMPTS {
        let tail = protocol::reported_tail(&slot.progress.tail);
        if !tail.is_multiple_of(shared.frame_align as u64) || tail >= MAX_POSITION {
            return Err(shared.corrupt(format!(
                "ring {ring}'s publisher reports tail {tail}, which is not a frame-aligned position below {MAX_POSITION}"
            )));
        }
        // Nothing of the ring lies further back; what lies within it the frontier check
        // after the copy judges.
        let lowest = tail.saturating_sub(capacity);
        let mut end = tail;
        let found = loop {
            let Some((at, header)) = frame_before::<T, M>(view, shared.fixed_len, shared.max_message_len, end, lowest)
            else {
                break None;
            };
            if header.flags == frame::FLAG_HOLE {
                end = at;
                continue;
            }
            let copy = header.len.min(dst.len());
            view.copy_out(at, shape, &mut dst[..copy]);
            break Some((at, header));
        };
        // SYNC POINT overwrite-frontier (subscriber side, in `overwritten`): what the
        // search and the copy read comes before its fence; a frame still clear of the
        // frontier after it was read whole, as committed.
        match found {
            Some((at, header)) if !protocol::overwritten(frontier, at, capacity) => {
                // What was copied may be zero pages now (truncated under us, or a fork
                // child's mapping).
                shared.check_health()?;
                return Ok(Some(Found {
                    len: header.len,
                    sequence: header.sequence,
                }));
            }
            // A frame the publisher overwrote meanwhile: lapped while copying. Again, from
            // the new tail.
            Some(_) => continue,
            // The frame before `end` may have been overwritten as the search looked.
            None if end > 0 && protocol::overwritten(frontier, end.saturating_sub(longest), capacity) => continue,
            // Nothing committed, or only holes the ring still holds.
            None if end == 0 || end < tail => return Ok(None),
            None => {
                return Err(shared.corrupt(format!(
                    "ring {ring}'s publisher reports tail {tail}, but no committed frame ends there"
                )));
            }
        }
    }
    Err(shared.corrupt(format!(
        "ring {ring}'s publisher overwrote its latest message {ATTEMPTS} times while it was copied; its ring of {capacity} bytes is lapped faster than it can be read"
    )))
}

/// Where a latest message came from.
fn info<M: Mode>(ring: usize, found: Found) -> MessageInfo<M> {
    MessageInfo::new(ring, if M::ORDERED { found.sequence } else { 0 }, 0)
}
