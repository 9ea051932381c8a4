//! Which message comes next: FIFO bursts round robin over the rings, or Ordered delivery
//! strictly by global sequence.

use std::sync::atomic::Ordering;

use super::{Next, Subscriber};
use crate::error::Result;
use crate::handle_error::ReceiveError;
use crate::kind::{Mode, Topology};
use crate::message::Payload;
use crate::protocol::{self, Head};
use crate::wire::frame;
use crate::wire::ring::{FrameAt, ReadOnly};

/// FIFO mode: frames taken from one ring in a row before looking at the next, so one busy
/// publisher cannot starve the others while bursts stay cheap.
pub(super) const BURST: u32 = 64;

/// Ordered mode: most frames passed over in one search, so a peer flooding the rings with
/// stale numbers cannot keep a receive call busy forever.
const MAX_SKIPS_PER_SEARCH: u32 = 4096;

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// FIFO: keep draining the current ring for up to `BURST` frames, then go round.
    // Always inlined: returned through memory, the `Result` cost `try_recv` a
    // store-forwarding stall per message (19 ns against 6 ns inlined, benches/paths.rs).
    #[inline(always)]
    pub(super) fn find_fifo(&self) -> Result<Option<Next>, ReceiveError> {
        let current = self.hot.current.get();
        if self.hot.burst.get() < BURST
            && let Some((Head { len, .. }, frame)) = self.peek_at(current)?
        {
            self.hot.burst.set(self.hot.burst.get() + 1);
            return Ok(Some(Next {
                ring: current,
                frame,
                len,
                sequence: 0,
                gap_before: 0,
            }));
        }
        let rings = self.readers.len();
        // The current ring was just found empty unless its burst ran out: look at it last,
        // and only then.
        let last = if self.hot.burst.get() < BURST { rings - 1 } else { rings };
        for step in 1..=last {
            let ring = protocol::ring_after(current, step, rings);
            if let Some((Head { len, .. }, frame)) = self.peek_at(ring)? {
                self.hot.current.set(ring);
                self.hot.burst.set(1);
                return Ok(Some(Next {
                    ring,
                    frame,
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
    pub(super) fn find_ordered(&mut self) -> Result<Option<Next>, ReceiveError> {
        let (rings, current, wanted) = (self.readers.len(), self.hot.current.get(), self.next_sequence);
        // The ring that delivered last holds the next number too while its publisher sends
        // alone or in batches (always, with one publisher): look there before searching.
        if current < rings {
            match self.peek_at(current)? {
                Some((head, frame)) if head.sequence == wanted && !head.is_hole() => {
                    return Ok(Some(Next {
                        ring: current,
                        frame,
                        len: head.len,
                        sequence: head.sequence,
                        gap_before: self.gap_before,
                    }));
                }
                // One ring with nothing committed: the search would look at it again only.
                None if rings == 1 => return Ok(None),
                _ => {}
            }
        }
        let Some(protocol::Found { ring, head, at: frame }) =
            protocol::next_in_order(self, rings, current, wanted, MAX_SKIPS_PER_SEARCH)?
        else {
            return Ok(None);
        };
        self.hot.current.set(ring);
        Ok(Some(Next {
            ring,
            frame,
            len: head.len,
            sequence: head.sequence,
            gap_before: self.gap_before,
        }))
    }

    /// A look found a message that the caller will find again with the next look (as
    /// `recv` does after `wait_ready`): the message is counted into the FIFO burst once.
    /// Finding changes nothing else a second look sees differently: Ordered passes over
    /// stale and hole frames for good and finds the same number again.
    pub(super) fn look_again(&self) {
        if !M::ORDERED {
            // The look either added one to the burst or, going round, set it to 1 for the
            // ring it moved to; either way the next look adds the one back.
            self.hot.burst.set(self.hot.burst.get().saturating_sub(1));
        }
    }

    #[inline(always)]
    pub(super) fn find(&mut self) -> Result<Option<Next>, ReceiveError> {
        if M::ORDERED {
            self.find_ordered()
        } else {
            self.find_fifo()
        }
    }

    /// Whether waiting should not sleep: a frame is committed somewhere, or (Ordered) a
    /// number this subscriber has not delivered was taken — if its publisher died, the
    /// health check must get to run soon rather than after a long sleep.
    pub(super) fn any_ready(&self) -> bool {
        (M::ORDERED && self.shared.hot().sequence.next.load(Ordering::Relaxed) > self.next_sequence)
            || (0..self.readers.len()).any(|ring| !matches!(self.peek(ring), Ok(None)))
    }
}

impl<T: Payload, M: Mode, K: Topology> protocol::RingHeads for Subscriber<T, M, K> {
    type Error = ReceiveError;
    type At = FrameAt<ReadOnly>;

    #[inline(always)]
    fn head_at(&self, ring: usize) -> Result<Option<(Head, FrameAt<ReadOnly>)>, ReceiveError> {
        self.peek_at(ring)
    }

    fn pass_over(&mut self, ring: usize, head: Head) {
        let len = if head.is_hole() { frame::HOLE_LEN } else { head.len };
        self.skip(ring, len);
    }

    /// A hole frame's numbers become a gap, exactly as numbers a dead publisher held; a
    /// hole is never handed out, raw `drain` included.
    #[cold]
    #[inline(never)]
    fn pass_hole(&mut self, ring: usize, head: Head) {
        // Validated by `peek`: the end does not overflow.
        self.record_gap(head.sequence..head.sequence + head.lost());
        if M::ORDERED && !K::FANOUT {
            // As `advance` does for a message: a successor of this subscriber does not
            // report the gap again.
            self.resume_point().store(self.next_sequence, Ordering::Relaxed);
        }
        self.move_head(ring, frame::HOLE_LEN);
    }
}
