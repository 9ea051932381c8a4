//! Joining with history: a Fanout subscriber that starts at the oldest message the rings
//! still hold, or at the last N, instead of at the end.
//!
//! Frames carry no link to the frame before them, but each one's commit word is its own
//! position XOR a key, and a frame's length says where it ends. So the frame before a
//! known boundary `b` is the committed frame at some `x < b` whose length ends it exactly at
//! `b`: the walk goes back from each ring's tail, frame by frame, to where the publisher's
//! overwrite frontier says its ring may already be overwritten. A word of another lap, or
//! of a frame being overwritten, holds another position's key and matches nothing. What
//! the walk read is trusted only as far as the frontier, read again after it, says nothing
//! was overwritten (`protocol::overwritten`); from there on the lossy reading protocol
//! checks every frame it copies, and an overrun restarts at the publisher's mark with the
//! exact count of what it skipped, as for any lossy subscriber.
//!
//! A tethered subscriber first holds each ring from a floor (`protocol::join`: as far
//! back as no publisher can be overwriting), then walks back no lower than it and moves
//! its cursor on to where it starts; from there, publishers wait for it as for any
//! tethered subscriber, so it loses nothing.
//!
//! What is no longer there is reported, never guessed: FIFO, the messages of the last N a
//! ring no longer holds are a loss before that ring's first message; Ordered, the numbers
//! of the last N no ring holds any more are a gap before the first message.

use crate::kind::{Mode, Topology};
use crate::message::{Frame, Payload};
use crate::protocol;
use crate::wire::frame::{self, RawHeader};
use crate::wire::ring::{ReadOnly, Ring};

use super::Subscriber;

/// Where a Fanout subscriber starts reading.
///
/// ```
/// # let name = format!("doc-start-{}", std::process::id());
/// use salias::receive::Start;
/// let channel = salias::RawFifoFanout::create(&salias::Config::new(&name))?;
/// let mut publisher = channel.publisher()?;
/// for message in [&b"one"[..], b"two", b"three"] {
///     publisher.offer(message)?;
/// }
/// // A late joiner asks for the last two messages the ring still holds.
/// let mut late = channel.lossy_subscriber_from(Start::Last(2))?;
/// let mut buffer = [0u8; 16];
/// let first = late.try_recv_into(&mut buffer)?.expect("history");
/// assert_eq!(&buffer[..*first], b"two");
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Start {
    /// At the current end of every ring: only what is published from now on.
    #[default]
    End,
    /// At the oldest message every ring still holds (FIFO: each ring's; Ordered: the
    /// oldest number from which every ring still holds all of its messages).
    Oldest,
    /// At the last `n` messages of each publisher (FIFO), or the last `n` sequence
    /// numbers (Ordered); those no longer held are reported missing.
    ///
    /// Either kind of subscriber reaches back as far as no publisher can be overwriting:
    /// each ring less the step a publisher writes ahead of its tail (three quarters of a
    /// ring by default).
    Last(u64),
}

/// The committed frame of `view` (a ring of `Frame<T, M>` frames whose messages are
/// `fixed_len` long, or at most `max_len`) that ends exactly at `end` and starts no lower
/// than `lowest`, if there is one: its position and header. Every word is read atomically;
/// the caller trusts the result only as far as the frontier says.
pub(crate) fn frame_before<T: Payload, M: Mode>(
    view: Ring<ReadOnly>,
    fixed_len: Option<usize>,
    max_len: usize,
    end: u64,
    lowest: u64,
) -> Option<(u64, RawHeader)> {
    let shape = Frame::<T, M>::in_channel(fixed_len);
    let align = shape.align() as u64;
    // A frame is at least an empty message's and at most the largest message's or a
    // hole's length; every start between is a multiple of the alignment.
    let largest = match fixed_len {
        Some(fixed) => fixed.max(if M::ORDERED { frame::HOLE_LEN } else { 0 }),
        None => max_len.max(frame::HOLE_LEN),
    };
    let (shortest, longest) = (shape.len(0) as u64, shape.len(largest) as u64);
    let mut back = shortest;
    while back <= longest {
        let at = end.checked_sub(back).filter(|&at| at >= lowest)?;
        back += align;
        if !protocol::is_committed(view.commit_word(at), at) {
            continue;
        }
        let header = view.racing_header(at, shape);
        let fits = match (header.flags, fixed_len) {
            (frame::FLAG_HOLE, _) => M::ORDERED && header.len == frame::HOLE_LEN,
            (0, Some(fixed)) => header.len == fixed,
            (0, None) => header.len <= max_len,
            _ => false,
        };
        if fits && at + shape.len(header.len) as u64 == end {
            return Some((at, header));
        }
    }
    None
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// The committed frame of `ring` that ends exactly at `end` and starts no lower than
    /// `lowest`, if there is one: its position and header.
    fn frame_before(&self, ring: usize, end: u64, lowest: u64) -> Option<(u64, RawHeader)> {
        frame_before::<T, M>(self.readers[ring].ring, self.fixed_len, self.max_len, end, lowest)
    }

    /// Walks `ring` back from its head: at most `limit` frames (all the ring holds without
    /// one), each still there when the walk ends, as `(position, sequence)`, oldest first.
    pub(super) fn walk_back(&self, ring: usize, limit: Option<u64>) -> Vec<(u64, u64)> {
        let frontier = &self.shared.publisher_slot(ring).overwrite.frontier;
        // Tethered, the join's floor: what lies below it the publisher may be overwriting.
        let floor = if self.lossy { 0 } else { self.readers[ring].released };
        protocol::walk_back(
            frontier,
            self.capacity,
            self.readers[ring].head,
            floor,
            limit,
            |end, lowest| {
                self.frame_before(ring, end, lowest)
                    .map(|(at, header)| (at, header.sequence))
            },
        )
    }

    /// Moves every ring's head back to where `start` says (Fanout, at join, before
    /// the FIFO counts are taken); Ordered, sets the first number to deliver and records
    /// the numbers of `Last(n)` no ring holds as a gap. Returns, per ring, how many frames
    /// it went back.
    pub(super) fn rewind(&mut self, start: Start) -> Vec<u64> {
        let limit = match start {
            Start::End => return vec![0; self.readers.len()],
            Start::Oldest => None,
            Start::Last(_) if M::ORDERED => None,
            Start::Last(n) => Some(n),
        };
        let walks: Vec<Vec<(u64, u64)>> = (0..self.readers.len())
            .map(|ring| self.walk_back(ring, limit))
            .collect();
        let mut from = 0;
        if M::ORDERED {
            // Every ring holds all of its numbers from `from` on: a ring whose walk did not
            // reach the ring's beginning may have held lower ones it no longer holds.
            let next = self.next_sequence;
            for (ring, walk) in walks.iter().enumerate() {
                match walk.first() {
                    Some(&(0, _)) => {}
                    Some(&(_, oldest)) => from = from.max(oldest),
                    None if self.readers[ring].head > 0 => from = next,
                    None => {}
                }
            }
            let from_asked = match start {
                Start::Last(n) => next.saturating_sub(n),
                _ => from,
            };
            let from_held = from.clamp(from_asked, next);
            self.next_sequence = from_asked;
            if from_held > from_asked {
                self.record_gap(from_asked..from_held);
            }
            from = from_held;
        }
        walks
            .iter()
            .enumerate()
            .map(|(ring, walk)| {
                // FIFO: the oldest frame walked to; Ordered: the first numbered `from` or
                // later (frames before it would be passed over).
                let first = walk
                    .iter()
                    .position(|&(_, sequence)| !M::ORDERED || sequence >= from)
                    .unwrap_or(walk.len());
                if let Some(&(at, _)) = walk.get(first) {
                    self.readers[ring].head = at;
                    self.store_cursor(ring);
                }
                (walk.len() - first) as u64
            })
            .collect()
    }

    /// FIFO, `Last(n)`, once the counts are taken: per ring, the messages of the last `n`
    /// it no longer held (`went_back` frames were still there), to report as a loss.
    pub(super) fn history_shortfall(&self, n: u64, went_back: &[u64], tails: &[u64]) -> Box<[u64]> {
        (0..self.readers.len())
            .map(|ring| {
                // Moved to the tail meanwhile (`rejoin`, lapped while counting): nothing
                // of the history is held.
                let held = if self.readers[ring].head == tails[ring] {
                    0
                } else {
                    went_back[ring]
                };
                let before = self.counts[ring].mark.map_or(0, |(_, count)| count);
                n.saturating_sub(held).min(before)
            })
            .collect()
    }
}
