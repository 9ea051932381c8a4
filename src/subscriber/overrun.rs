//! Reading as a lossy subscriber: every frame is copied out and checked against the
//! ring's overwrite frontier before anything trusts it; an overrun ring restarts at the
//! publisher's mark, and what was skipped is counted (FIFO: messages and positions;
//! Ordered: a gap of sequence numbers).

use std::ops::Range;
use std::sync::atomic::Ordering;

use super::health::publisher_view;
use super::{Next, Reader, RingCount, Subscriber};
use crate::error::{Error, Result};
use crate::handle_error::ReceiveError;
use crate::kind::{Fanout, Mode, Topology};
use crate::message::Payload;
use crate::protocol::{self, Head, RingHeads};
use crate::wire::frame;
use crate::wire::layout::{CURSOR_UNTETHERED, MAX_POSITION};
use crate::wire::ring::{FrameAt, ReadOnly};

/// Most overruns one receive recovers from before it returns, so a publisher lapping the
/// subscriber without end (or a hostile frontier) cannot keep a call busy forever.
const MAX_RECOVERIES: u32 = 8;
/// Ordered: most frames passed over in one search (as `select`).
const MAX_SKIPS_PER_SEARCH: u32 = 4096;
/// Attempts at counting a ring's messages from its mark while the publisher moves it.
const COUNT_ATTEMPTS: u32 = 1000;
/// Failed counts after which a lossy subscriber that has received nothing joins again.
const REJOIN_AFTER: u32 = 16;

/// What a lossy look at the head of a ring found.
pub(super) enum Look {
    /// Nothing committed there yet.
    Empty,
    /// The publisher may have overwritten it: what was read is thrown away.
    Overrun,
    /// A committed frame, read whole before the publisher could overwrite it, and where
    /// it is.
    Frame(Head, FrameAt<ReadOnly>),
}

/// What one ring's overrun skipped (FIFO).
pub(super) struct Skipped {
    pub ring: usize,
    pub positions: Range<u64>,
    pub messages: u64,
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    fn capacity(&self) -> u64 {
        self.capacity
    }

    /// FIFO: how many messages lie before the head of `ring`, from its mark.
    fn count_at(&self, ring: usize) -> Option<u64> {
        let (position, count) = self.counts[ring].mark?;
        let frames = match self.fixed_len {
            Some(fixed) => (self.readers[ring].head - position) / self.shape().len(fixed) as u64,
            None => self.counts[ring].frames,
        };
        Some(count + frames)
    }

    /// FIFO, at join or on turning lossy: finds how many messages lie before each ring's
    /// head, from the publisher's mark (walking the frames between the two), so that every
    /// later loss is counted exactly.
    pub(super) fn count_from_marks(&mut self) -> Result<()> {
        for ring in 0..self.readers.len() {
            let mut counted = None;
            for attempt in 1..=COUNT_ATTEMPTS {
                counted = self.count_ring(ring)?;
                if counted.is_some() {
                    break;
                }
                if self.lossy && self.hot.received == 0 && attempt % REJOIN_AFTER == 0 {
                    // Lapped before it could count (descheduled while joining a busy
                    // channel): nothing was received yet, so joining later, at the
                    // publisher's tail now, loses nothing it was promised.
                    self.rejoin(ring)?;
                }
                std::thread::yield_now();
            }
            let Some(count) = counted else {
                return Err(self.shared.corrupt(format!(
                    "ring {ring}'s publisher kept rewriting its restart mark while a lossy subscriber counted from it"
                )));
            };
            self.counts[ring] = RingCount {
                mark: Some((self.readers[ring].head, count)),
                frames: 0,
            };
        }
        Ok(())
    }

    /// Lossy, before its first message: moves the head of `ring` to its publisher's
    /// reported tail, as a join does.
    fn rejoin(&mut self, ring: usize) -> Result<()> {
        let head = protocol::reported_tail(&self.shared.publisher_slot(ring).progress.tail);
        if !head.is_multiple_of(self.shared.frame_align as u64) || head >= MAX_POSITION {
            return Err(self.shared.corrupt(format!(
                "ring {ring}'s publisher reports tail {head}, which is not a frame-aligned position below {MAX_POSITION}"
            )));
        }
        let reader = &mut self.readers[ring];
        reader.head = head;
        reader.released = head;
        protocol::release(reader.cursor.get(), head | CURSOR_UNTETHERED);
        Ok(())
    }

    /// One attempt of `count_from_marks` for `ring`: `None` if the publisher overwrote the
    /// frames counted meanwhile.
    fn count_ring(&self, ring: usize) -> Result<Option<u64>> {
        let words = &self.shared.publisher_slot(ring).overwrite;
        let Some((mark, count)) = protocol::read_mark(&**words) else {
            return Ok(None);
        };
        let head = self.readers[ring].head;
        let (from, to) = (mark.min(head), mark.max(head));
        let corrupt = |what: String| -> Error { self.shared.corrupt(what) };
        if !from.is_multiple_of(self.shared.frame_align as u64) {
            return Err(corrupt(format!(
                "ring {ring}'s restart mark {mark} is not a frame boundary"
            )));
        }
        if to - from > self.capacity() {
            // More than a ring apart: the head was lapped, or the mark is older than a
            // whole ring of frames. Nothing to count between them; look again (or rejoin).
            return Ok(None);
        }
        let frames = match self.fixed_len {
            Some(fixed) => (to - from) / self.shape().len(fixed) as u64,
            None => {
                let mut frames = 0;
                let mut pos = from;
                while pos < to {
                    let view = self.readers[ring].ring;
                    if !protocol::is_committed(view.commit_word(pos), pos) {
                        return Ok(None); // overwritten under us (checked below), or torn
                    }
                    let len = view.len_at(pos, self.shape()).min(self.max_len);
                    pos += self.shape().len(len) as u64;
                    frames += 1;
                }
                if pos != to {
                    return Ok(None);
                }
                frames
            }
        };
        if protocol::overwritten(&words.frontier, from, self.capacity()) {
            return Ok(None);
        }
        Ok(Some(if mark <= head {
            count + frames
        } else {
            count.saturating_sub(frames)
        }))
    }
}

impl<T: Payload, M: Mode> Subscriber<T, M, Fanout> {
    fn frontier(&self, ring: usize) -> &std::sync::atomic::AtomicU64 {
        &self.shared.publisher_slot(ring).overwrite.frontier
    }

    /// The frame at the head of `ring`: its header read and up to `dst.len()` bytes of its
    /// payload copied to `dst`, then checked against the frontier; validated only once it
    /// is known not to be torn.
    pub(super) fn look(&self, ring: usize, dst: &mut [u8]) -> Result<Look, ReceiveError> {
        let Reader { ring: view, head, .. } = self.readers[ring];
        let frame = view.frame(head);
        if !protocol::is_committed(frame.commit_word(), head) {
            // Not this lap's frame: not written yet, or already overwritten by a later lap.
            let lapped = protocol::overwritten(self.frontier(ring), head, self.capacity());
            return Ok(if lapped { Look::Overrun } else { Look::Empty });
        }
        // Committed when we looked; any of it may be overwritten since, which the frontier
        // check below catches. Every word is read atomically (`wire::ring`), so a racing
        // overwrite gives wrong values, which that check throws away, never a torn read of
        // a field or undefined behaviour.
        let shape = self.shape();
        let header = view.racing_header(head, shape);
        let hole = header.flags == frame::FLAG_HOLE && header.len == frame::HOLE_LEN;
        let lost = if hole { frame.hole_count(shape) } else { 0 };
        // Never past the channel's maximum, which the double view holds.
        let copy = header.len.min(self.max_len).min(dst.len());
        view.copy_out(head, shape, &mut dst[..copy]);
        if protocol::overwritten(self.frontier(ring), head, self.capacity()) {
            return Ok(Look::Overrun);
        }
        self.checked_head(ring, header, || lost)
            .map(|head| Look::Frame(head, frame))
    }

    /// Ring `ring` was overrun: moves its head to the publisher's mark, a frame boundary
    /// it has not overwritten, and returns what was skipped; `None` if no usable mark is
    /// there yet (look again later).
    pub(super) fn restart(&mut self, ring: usize) -> Option<Skipped> {
        let words = &self.shared.publisher_slot(ring).overwrite;
        let (position, count) = protocol::read_mark(&**words)?;
        let head = self.readers[ring].head;
        let usable = position > head
            && position < MAX_POSITION
            && position.is_multiple_of(self.shared.frame_align as u64)
            && !protocol::overwritten(&words.frontier, position, self.capacity());
        if !usable {
            return None; // an older mark than the frontier that lapped us: look again
        }
        // Positions stay inside one object's range: no overflow below.
        let messages = match self.count_at(ring) {
            Some(before) => count.saturating_sub(before),
            None => 0,
        };
        self.readers[ring].head = position;
        self.counts[ring] = RingCount {
            mark: Some((position, count)),
            frames: 0,
        };
        self.store_cursor(ring);
        Some(Skipped {
            ring,
            positions: head..position,
            messages,
        })
    }

    /// Lossy FIFO: the next message, its payload copied to `dst` (as much as fits),
    /// rings taken round robin; overruns are recovered from and passed to `skipped`.
    pub(super) fn next_lossy_fifo(
        &mut self,
        dst: &mut [u8],
        mut skipped: impl FnMut(&mut Self, Skipped),
    ) -> Result<Option<Next>, ReceiveError> {
        let rings = self.readers.len();
        let first = self.hot.current.get() + 1;
        let mut recoveries = 0;
        for step in 0..rings {
            let ring = protocol::ring_after(first, step, rings);
            loop {
                match self.look(ring, &mut *dst)? {
                    Look::Frame(Head { len, .. }, frame) => {
                        self.hot.current.set(ring);
                        return Ok(Some(Next {
                            ring,
                            frame,
                            len,
                            sequence: 0,
                            gap_before: 0,
                        }));
                    }
                    Look::Empty => break,
                    Look::Overrun => {
                        recoveries += 1;
                        match self.restart(ring) {
                            Some(lost) if recoveries <= MAX_RECOVERIES => skipped(self, lost),
                            Some(lost) => {
                                skipped(self, lost);
                                break;
                            }
                            None => break,
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    /// Lossy Ordered: the message numbered next (or the first after numbers found lost),
    /// its payload copied to `dst`. An overrun ring restarts at its mark, and the numbers
    /// it skipped become a gap as soon as nothing can still deliver them.
    pub(super) fn next_lossy_ordered(&mut self, dst: &mut [u8]) -> Result<Option<Next>, ReceiveError> {
        for _ in 0..MAX_RECOVERIES {
            let (rings, current, wanted) = (self.readers.len(), self.hot.current.get(), self.next_sequence);
            let found = protocol::next_in_order(&mut LossyHeads(self), rings, current, wanted, MAX_SKIPS_PER_SEARCH);
            let overrun = match found {
                Ok(None) => return Ok(None),
                Err(Fault::Receive(error)) => return Err(error),
                Err(Fault::Overrun(ring)) => ring,
                Ok(Some(protocol::Found { ring, head, .. })) => match self.look(ring, &mut *dst)? {
                    Look::Frame(copied, frame) if copied == head => {
                        self.hot.current.set(ring);
                        return Ok(Some(Next {
                            ring,
                            frame,
                            len: head.len,
                            sequence: head.sequence,
                            gap_before: self.gap_before,
                        }));
                    }
                    // The frame the search found cannot change while committed: only an
                    // overwrite (caught by the frontier) or a hostile peer changes it.
                    _ => ring,
                },
            };
            if self.restart(overrun).is_some() {
                self.find_lossy_gap()?;
            }
        }
        Ok(None)
    }

    /// Lossy Ordered: declares lost the numbers from `next_sequence` on that nothing can
    /// deliver any more (skipped in an overrun, or taken by a publisher that died).
    pub(super) fn find_lossy_gap(&mut self) -> Result<bool, ReceiveError> {
        for _ in 0..MAX_RECOVERIES {
            let shared = self.shared.clone();
            let publisher = |ring| publisher_view(&shared, ring);
            let (wanted, rings) = (self.next_sequence, self.readers.len());
            match protocol::find_gap(wanted, &shared.hot().sequence.next, &LossyHeads(self), rings, publisher) {
                Ok(None) => return Ok(false),
                Ok(Some(end)) => {
                    self.record_gap(wanted..end);
                    self.publish_missed(self.gaps.missing);
                    return Ok(true);
                }
                Err(protocol::GapError::Head(Fault::Overrun(ring))) => {
                    self.restart(ring);
                }
                Err(protocol::GapError::Head(Fault::Receive(error))) => return Err(error),
                Err(protocol::GapError::CounterOutOfRange { taken }) => {
                    return Err(self.gap_error(protocol::GapError::CounterOutOfRange { taken }));
                }
                Err(protocol::GapError::NeverTaken { ring, sequence, taken }) => {
                    return Err(self.gap_error(protocol::GapError::NeverTaken { ring, sequence, taken }));
                }
            }
        }
        Ok(false)
    }

    /// Whether waiting should not sleep: a frame is committed (or overwritten) at a head,
    /// or (Ordered) a number not yet delivered was taken. Reads only commit words, which
    /// are atomic: nothing a publisher is overwriting is read, or reported as corrupt.
    pub(super) fn any_ready_lossy(&self) -> bool {
        (M::ORDERED && self.shared.hot().sequence.next.load(Ordering::Relaxed) > self.next_sequence)
            || (0..self.readers.len()).any(|ring| {
                let Reader { ring: view, head, .. } = self.readers[ring];
                protocol::is_committed(view.commit_word(head), head)
                    || protocol::overwritten(self.frontier(ring), head, self.capacity())
            })
    }

    /// Publishes how much this subscriber has missed, for monitors.
    pub(super) fn publish_missed(&self, missed: u64) {
        self.shared
            .subscriber_slot(self.slot)
            .flow
            .missed
            .store(missed, Ordering::Relaxed);
    }
}

/// Why a lossy look at a ring head gave no head.
enum Fault {
    /// The ring was overrun: restart it.
    Overrun(usize),
    Receive(ReceiveError),
}

/// The protocol's view of a lossy subscriber's ring heads: each head validated against
/// the frontier, an overrun reported rather than read.
struct LossyHeads<'s, T: Payload, M: Mode>(&'s mut Subscriber<T, M, Fanout>);

impl<T: Payload, M: Mode> RingHeads for LossyHeads<'_, T, M> {
    type Error = Fault;
    /// Nothing: the caller looks again, copying the frame out.
    type At = ();

    fn head_at(&self, ring: usize) -> Result<Option<(Head, ())>, Fault> {
        match self.0.look(ring, &mut []).map_err(Fault::Receive)? {
            Look::Empty => Ok(None),
            Look::Overrun => Err(Fault::Overrun(ring)),
            Look::Frame(head, _) => Ok(Some((head, ()))),
        }
    }

    fn pass_over(&mut self, ring: usize, head: Head) {
        RingHeads::pass_over(self.0, ring, head);
    }

    fn pass_hole(&mut self, ring: usize, head: Head) {
        RingHeads::pass_hole(self.0, ring, head);
        self.0.publish_missed(self.0.gaps.missing);
    }
}
