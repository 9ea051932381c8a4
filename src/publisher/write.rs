//! Writing frames: where the next frame goes, taking sequence numbers, committing, and
//! reporting progress (which wakes sleeping subscribers).

use std::sync::atomic::Ordering;

use super::Publisher;
use crate::error::Result;
use crate::handle_error::{MAX_GAP, PublishError};
use crate::kind::{GlobalOrder, Mode, Topology};
use crate::message::Payload;
use crate::protocol;
use crate::wait;
use crate::wire::frame;

/// How far ahead of its frames a publisher prefetches ring lines for writing, and in
/// blocks of how many bytes (`cargo bench --bench ipc` on a 2-core Intel Xeon VM;
/// doc/performance-notes.md, "Where a batch asks for its lines ahead"). 2 KiB is
/// about 25 frames of a 64-byte message; 4 KiB ahead with 512-byte blocks ran raw 8-byte
/// and 1 KiB single offers at 0.93× of 2 KiB ahead with 1 KiB blocks. Blocks of 512 bytes,
/// 8 prefetches at a time rather than 16, ran Ordered single offers 1.07× as fast as
/// blocks of 1 KiB, and single offers into a 64 MiB ring 1.66× (a bimodal figure: the
/// share of its fast rounds moved).
const PREFETCH_AHEAD: u64 = 2048;
const PREFETCH_BLOCK: u64 = 512;

/// A cache line.
const LINE: u64 = 64;

impl<T: Payload, M: Mode, K: Topology> Publisher<T, M, K> {
    /// Asks for ownership of ring lines ahead of the frames at `start..end`: whenever
    /// they enter a new `PREFETCH_BLOCK` of the ring, every line of the block
    /// `PREFETCH_AHEAD` bytes further (no further than the write limit). By the time frames
    /// are written there, the lines have left the subscriber's cache (which read them one
    /// lap ago) or come in from memory; without it the first write to each line of a frame
    /// waits for a full ownership request. Per block, not per frame, so most publishes pay
    /// one comparison. A publish spanning many blocks (a large frame, or a batch of small
    /// ones) prefetches only for its last six (3 KiB), whose targets reach from the block
    /// before the one holding its end to `PREFETCH_AHEAD` past it: the lines before are
    /// written by this publish at once, and a burst of hundreds of prefetches slowed
    /// batches of 2 and 4 KiB frames.
    #[inline(always)]
    pub(super) fn prefetch_ahead(&self, start: u64, end: u64) {
        if start / PREFETCH_BLOCK != end / PREFETCH_BLOCK {
            let last = end / PREFETCH_BLOCK;
            self.prefetch_blocks((start / PREFETCH_BLOCK + 1).max(last.saturating_sub(5)), last);
        }
    }

    /// The lines of blocks `first..=last`, `PREFETCH_AHEAD` bytes on: out of line, so the
    /// publishes that enter no new block carry none of it.
    #[inline(never)]
    fn prefetch_blocks(&self, first: u64, last: u64) {
        let stop = self.hot.limit;
        for block in first..=last {
            let mut line = block * PREFETCH_BLOCK + PREFETCH_AHEAD;
            let block_end = (line + PREFETCH_BLOCK).min(stop);
            while line < block_end {
                self.ring.prefetch_for_write(line);
                line += LINE;
            }
        }
    }

    /// Takes `count` consecutive global sequence numbers (Ordered mode), returning the
    /// first. Taken only once the frames' room is reserved, so a refused offer never
    /// leaves a hole in the sequence. Numbers past `MAX_SEQUENCE` (a frame could not
    /// tell them from a hole's mark) are a corrupted counter: the publisher writes
    /// nothing and clears its pending mark, so no subscriber waits for them.
    #[inline(always)]
    pub(super) fn take_sequence(&mut self, count: u64) -> Result<u64, PublishError> {
        if !M::ORDERED {
            return Ok(0);
        }
        let first = self.take_sequence_unchecked(count);
        if first > frame::MAX_SEQUENCE + 1 - count {
            return Err(self.sequence_exhausted(first, count));
        }
        Ok(first)
    }

    /// The error of numbers `first..first + count` taken past `MAX_SEQUENCE`.
    #[cold]
    #[inline(never)]
    fn sequence_exhausted(&mut self, first: u64, count: u64) -> PublishError {
        protocol::clear_pending(&self.progress.get().pending);
        let what = format!(
            "the channel's sequence counter gave numbers {first} to {} past the largest, {}: it was overwritten",
            first.wrapping_add(count - 1),
            frame::MAX_SEQUENCE
        );
        self.fault.corrupt(&self.shared, what).into()
    }

    #[inline(always)]
    pub(super) fn take_sequence_unchecked(&self, count: u64) -> u64 {
        let progress = self.progress.get();
        let alone = match self.taking {
            protocol::Taking::Alone(tag) => tag,
            protocol::Taking::Shared => crate::wire::layout::SOLE_NOBODY,
        };
        protocol::take_sequence(
            &protocol::SequenceWords {
                sequence: self.sequence.get(),
                sole_taker: self.sole_taker.get(),
                pending: &progress.pending,
                pending_count: &progress.pending_count,
            },
            count,
            alone,
        )
    }

    /// Writes the header of the frame at `pos` and commits it; the payload is already in
    /// place. Does not publish progress or wake anyone.
    ///
    /// # Safety
    /// The frame at `pos` (of `len` payload bytes) must be the one this publisher reserved
    /// and has not committed, so no subscriber references it.
    #[inline(always)]
    pub(super) unsafe fn commit_frame(&mut self, pos: u64, len: usize, sequence: u64) {
        // SAFETY: the caller's contract.
        unsafe { self.ring.write_header(pos, self.shape(), len, sequence) };
        protocol::commit_frame(self.ring.commit_word(pos), pos);
        self.hot.tail = pos + self.shape().len(len) as u64;
        // Statistics, seeded from shared memory: wrapping, never a panic.
        self.hot.published = self.hot.published.wrapping_add(1);
    }

    /// Reports progress for monitors and joining subscribers, and wakes sleeping ones.
    #[inline(always)]
    pub(super) fn publish_progress(&self) {
        let progress = self.progress.get();
        if M::ORDERED {
            // Every number taken is committed: nothing pending any more.
            protocol::clear_pending(&progress.pending);
        }
        protocol::report_tail(&progress.tail, self.hot.tail);
        progress.published.store(self.hot.published, Ordering::Relaxed);
        wait::wake_subscribers(self.wake.get(), self.barrier_reaches_us);
    }

    /// Publishes the `count` messages whose bytes `message(i)` gives, as one batch: one
    /// reservation, one sequence range, one progress update. `frames` is the bytes the
    /// frames occupy (the sum of `Frame::len` of each message's length), which every caller
    /// already knows. `copy` says how the payloads are written: a single message with its
    /// commit line last, a batch's (committed only once all are written) in one copy each.
    #[inline(always)]
    pub(super) fn publish<'m>(
        &mut self,
        count: usize,
        frames: u64,
        message: impl Fn(usize) -> &'m [u8],
        copy: PayloadCopy,
    ) -> Result<(), PublishError> {
        let start = self.reserve_room(frames)?;
        // Where a publish asks for the lines ahead (`cargo bench --bench ipc` on a 2-core
        // Intel Xeon VM; doc/performance-notes.md): a single offer before it writes. A batch whose frames
        // average 512 bytes or more frame by frame, as it writes each: asked for once before
        // the writes, the lines of a batch of 512-byte messages were not owned when the
        // copies reached them (0.3× of single offers), and 2 and 4 KiB batches ran 0.8× and
        // 0.9× as fast. A batch of smaller frames once, after writing them and before
        // committing: asked for before the writes, the same prefetches left batches of
        // 256-byte messages at 0.8× and batches into a 64 MiB ring at 0.9×; frame by frame
        // ran about as fast, at 126 instructions more a batch of 16 64-byte messages
        // (callgrind, `benches/instructions`).
        let per_frame = count > 1 && frames >= 8 * LINE * count as u64;
        if count == 1 {
            self.prefetch_ahead(start, start + frames);
        }
        let first = self.take_sequence(count as u64)?;
        // In a local: the frame writes go through raw pointers the compiler cannot tell
        // apart from `self`, so it would reload the view for every frame.
        let ring = self.ring;
        let shape = self.shape();
        // Write every frame first and commit them all after, in order: the commits then
        // land back to back on lines this core already owns, so a subscriber polling the
        // next commit word does not pull lines away while they are still being written.
        let mut pos = start;
        for i in 0..count {
            let bytes = message(i);
            if per_frame {
                self.prefetch_ahead(pos, pos + shape.len(bytes.len()) as u64);
            }
            match copy {
                // SAFETY: the frames from `start` on, `frames` bytes in all, are reserved by
                // this publisher (`reserve`) and none is committed yet; frame `i` holds
                // `bytes.len()` payload bytes, as the caller counted them into `frames`.
                PayloadCopy::CommitLineLast => unsafe { ring.write_payload(pos, shape, bytes) },
                // SAFETY: as above.
                PayloadCopy::Plain => unsafe { ring.copy_payload(pos, shape, bytes) },
            }
            // The numbers `first..first + count` are at most MAX_SEQUENCE (`take_sequence`).
            // SAFETY: as above: frame `i` is reserved by this publisher, not committed.
            unsafe { ring.write_header(pos, shape, bytes.len(), first + i as u64) };
            pos += shape.len(bytes.len()) as u64;
        }
        debug_assert_eq!(pos - start, frames, "the caller's frame bytes");
        if count > 1 && !per_frame {
            self.prefetch_ahead(start, start + frames);
        }
        let mut pos = start;
        for i in 0..count {
            protocol::commit_frame(ring.commit_word(pos), pos);
            pos += shape.len(message(i).len()) as u64;
        }
        self.hot.tail = pos;
        self.hot.published = self.hot.published.wrapping_add(count as u64);
        self.publish_progress();
        Ok(())
    }
}

/// How `Publisher::publish` copies payloads into their frames.
#[derive(Clone, Copy)]
pub(super) enum PayloadCopy {
    /// The line holding the commit word last (`Ring::write_payload`): a single message.
    CommitLineLast,
    /// One `memcpy` each: a batch.
    Plain,
}

impl<T: Payload, M: GlobalOrder, K: Topology> Publisher<T, M, K> {
    /// Declares `count` sequence numbers lost: takes them, as a publish of `count`
    /// messages would, and commits one frame that says so instead of any message. Every
    /// subscriber then reports exactly that range as a gap ([`Subscriber::gaps`], and
    /// [`gap_before`] of the next message), as for numbers a dead publisher held; none
    /// hands it out as a message. For a relay that knows how many messages it lost on the
    /// way, such as the zenoh bridge.
    ///
    /// A `count` of 0 declares nothing and writes nothing: `Ok(())`. Returns
    /// [`PublishError::GapTooLarge`] past [`MAX_GAP`](crate::error::MAX_GAP) numbers, and
    /// [`PublishError::Backpressured`] (writing nothing) when the ring has no room for the
    /// frame.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-publish-gap-{}", std::process::id());
    /// let channel = salias::OrderedMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut subscriber = channel.subscriber()?;
    /// let mut publisher = channel.publisher()?;
    /// publisher.offer(&Tick { seq: 0 })?; // number 0
    /// publisher.publish_gap(3)?; // numbers 1, 2 and 3 are lost
    /// publisher.offer(&Tick { seq: 4 })?; // number 4
    /// assert_eq!(subscriber.try_recv()?.expect("first").sequence(), 0);
    /// let next = subscriber.try_recv()?.expect("after the gap");
    /// assert_eq!((next.sequence(), next.gap_before()), (4, 3));
    /// drop(next);
    /// assert_eq!(subscriber.gaps().last, Some(1..4));
    /// # Ok::<(), salias::Error>(())
    /// ```
    ///
    /// [`Subscriber::gaps`]: crate::Subscriber::gaps
    /// [`gap_before`]: crate::Received::gap_before
    pub fn publish_gap(&mut self, count: u64) -> Result<(), PublishError> {
        if count == 0 {
            return Ok(());
        }
        if count > MAX_GAP {
            return Err(PublishError::GapTooLarge { count });
        }
        let len = self.shape().len(frame::HOLE_LEN) as u64;
        let pos = self.reserve(len)?;
        let first = self.take_sequence(count)?;
        // SAFETY: the frame of `len` bytes just reserved, not yet committed.
        unsafe { self.ring.write_hole(pos, self.shape(), first, count) };
        protocol::commit_frame(self.ring.commit_word(pos), pos);
        self.hot.tail = pos + len;
        // Not a message: `published` stays as it is.
        self.publish_progress();
        Ok(())
    }
}
