//! Frames and room: the publisher's commit and the subscriber's consume, cursors released
//! in batches, and the write limit the slowest cursor sets.

use std::sync::atomic::Ordering;

use super::Word;
use crate::wire::frame;
use crate::wire::layout::{CURSOR_IDLE, CURSOR_UNTETHERED};

/// Publisher: makes the frame at `pos` visible. Its header and payload must be written.
/// The ring `step` places after `first`, counting round: `(first + step) % rings` for
/// `first + step < 2 * rings`, which every caller's loop keeps. One subtraction where `%`
/// would divide (tens of cycles) on every message a search hands out.
#[inline(always)]
pub fn ring_after(first: usize, step: usize, rings: usize) -> usize {
    debug_assert!(first + step < 2 * rings, "ring {first} + {step} of {rings}");
    match first + step {
        ring if ring >= rings => ring - rings,
        ring => ring,
    }
}

#[inline(always)]
pub fn commit_frame<W: Word>(commit: &W, pos: u64) {
    // SYNC POINT frame-commit (Release side): header and payload become visible to a
    // subscriber that loads this word with Acquire (`is_committed`) and finds its key.
    commit.store(frame::commit_word(pos), Ordering::Release);
}

/// Subscriber: whether the frame at `pos` is committed; if so, its header and payload
/// may be read.
#[inline(always)]
pub fn is_committed<W: Word>(commit: &W, pos: u64) -> bool {
    // SYNC POINT frame-commit (Acquire side): pairs with `commit_frame`. A stale word from
    // an earlier lap holds a different position's key, so it never matches.
    commit.load(Ordering::Acquire) == frame::commit_word(pos)
}

/// Publisher: reports every frame before `tail` committed, for monitors, joining
/// subscribers and the stuck-ring check.
#[inline(always)]
pub fn report_tail<W: Word>(tail_word: &W, tail: u64) {
    // SYNC POINT progress (Release side): the frames' commits come first, so whoever
    // reads `tail` with Acquire (`reported_tail`) sees every frame before it committed.
    tail_word.store(tail, Ordering::Release);
}

/// Reads a publisher's reported tail.
#[inline(always)]
pub fn reported_tail<W: Word>(tail_word: &W) -> u64 {
    // SYNC POINT progress (Acquire side): pairs with `report_tail`.
    tail_word.load(Ordering::Acquire)
}

/// Subscriber: gives back everything before `head` to the ring's publisher.
#[inline(always)]
pub fn release<W: Word>(cursor: &W, head: u64) {
    // SYNC POINT ring-release (Release side): our reads of everything before `head`
    // happen before a publisher that loads this cursor (`write_limit`) overwrites it.
    cursor.store(head, Ordering::Release);
}

/// Fanout subscriber leaving: publishers stop waiting for this slot.
#[inline(always)]
pub fn leave<W: Word>(cursor: &W) {
    // SYNC POINT ring-release (Release side): as in `release`, for everything.
    cursor.store(CURSOR_IDLE, Ordering::Release);
}

/// A subscriber cursor no honest subscriber could have stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadCursor {
    /// The subscriber slot.
    pub subscriber: usize,
    /// The value found.
    pub cursor: u64,
}

/// Publisher at `tail`: how far it may write, given the cursors of the ring's
/// subscriber slots: `slowest + window`. In fanout mode, idle and lossy slots (cursors at
/// or above `CURSOR_UNTETHERED`) are skipped, and a cursor more than a ring behind counts
/// as exactly a ring behind: a subscriber joining with history (`join`) may store a start
/// this publisher has already lapped, and moves it on as soon as it sees the tail. Until
/// then the publisher holds at its tail, as behind any subscriber that stopped reading.
#[inline]
pub fn write_limit<'w, W: Word + 'w>(
    tail: u64,
    window: u64,
    capacity: u64,
    fanout: bool,
    cursors: impl IntoIterator<Item = &'w W>,
) -> std::result::Result<u64, BadCursor> {
    // SYNC POINT subscriber-join (publisher side): our last progress store is ordered
    // before the cursor loads below. A joining fanout subscriber stores its cursor,
    // fences, then reads our progress (`join`); so either we see its cursor here, or it
    // sees a position at or past everything this limit lets us overwrite.
    W::fence(Ordering::SeqCst);
    let mut slowest = tail;
    for (subscriber, cursor) in cursors.into_iter().enumerate() {
        // SYNC POINT ring-release (Acquire side): pairs with `release` and `leave`.
        let cursor = cursor.load(Ordering::Acquire);
        if fanout && cursor >= CURSOR_UNTETHERED {
            continue;
        }
        if cursor > tail || (!fanout && tail - cursor > capacity) {
            return Err(BadCursor { subscriber, cursor });
        }
        slowest = slowest.min(cursor.max(tail.saturating_sub(capacity)));
    }
    Ok(slowest + window)
}

/// Fanout subscriber joining: picks a starting position in each of `rings` rings and
/// publishes the slot's cursors, such that no publisher overwrites anything from there on
/// before this subscriber releases it. `start(ring, head, floor)` receives each ring's
/// tail as seen after the handshake (`head`) and the cursor stored (`floor`): everything
/// from `floor` on is held, up to `behind` bytes before `head` for a join with history.
///
/// `behind` is at most `capacity - step`, where `step` is how far past its tail a fanout
/// publisher ever writes (`Shared::frontier_step`): a publisher whose limit refresh missed
/// our cursor wrote below at most `tail + step - capacity`, where `tail` is what it last
/// reported, which we re-read after our fence.
pub fn join<'w, W: Word + 'w>(
    rings: usize,
    behind: u64,
    tail: impl Fn(usize) -> &'w W,
    cursor: impl Fn(usize) -> &'w W,
    mut start: impl FnMut(usize, u64, u64),
) {
    // SYNC POINT subscriber-join (subscriber side): publish a starting cursor, fence,
    // then re-read each publisher's progress. A publisher whose limit refresh missed our
    // cursor refreshed before our fence, so the position we re-read bounds everything
    // that refresh let it overwrite: `behind` before it is safe. One whose refresh saw the
    // cursor holds there (or, if it had already lapped it, at its tail: `write_limit`).
    let mut first = Vec::with_capacity(rings);
    for ring in 0..rings {
        let floor = reported_tail(tail(ring)).saturating_sub(behind);
        release(cursor(ring), floor);
        first.push(floor);
    }
    W::fence(Ordering::SeqCst);
    for (ring, first) in first.into_iter().enumerate() {
        let head = reported_tail(tail(ring));
        // Only ever forward from the first cursor: a refresh that saw it may have let its
        // publisher write up to it, and none wrote past this floor meanwhile.
        let floor = head.saturating_sub(behind).max(first).min(head);
        release(cursor(ring), floor);
        start(ring, head, floor);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ring_after_counts_round_as_the_remainder_does() {
        for rings in 1..=9 {
            for first in 0..=rings {
                for step in 0..(2 * rings - first) {
                    assert_eq!(super::ring_after(first, step, rings), (first + step) % rings);
                }
            }
        }
    }
}
