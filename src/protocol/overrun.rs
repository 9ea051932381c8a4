//! Lossy subscribers: what a publisher says it may overwrite, how a subscriber that copied
//! a frame out tells a good copy from a torn one, where it can start again after being
//! overrun, and a publisher demoting a tethered subscriber that held it back too long.
//!
//! The publisher publishes an overwrite frontier per ring once per limit refresh, never
//! per message: it stores the new limit before it writes past the old one (the writer side
//! of a seqlock). A lossy reader copies a committed frame out, then re-reads the frontier:
//! if the frontier lapped the frame's position, the copy may be torn and is thrown away.

use std::sync::atomic::Ordering;

use super::Word;
use crate::wire::layout::{CURSOR_UNTETHERED, OverwriteWords, SUBSCRIBER_DEMOTED, SUBSCRIBER_TETHERED};

/// How often a reader looks again at a mark being rewritten before it gives up for now.
const MARK_ATTEMPTS: u32 = 4;

/// Publisher: from now on it may write every position below `frontier`. `tail` is the
/// position after its last committed frame, and `count` the messages before it: the mark a
/// lossy subscriber that was overrun starts again from. Call before writing past the
/// previous frontier.
#[inline]
pub fn advance_frontier<W: Word>(words: &OverwriteWords<W>, frontier: u64, tail: u64, count: u64) {
    // Only the slot's holder writes these words; an odd version a dead holder left behind
    // is stepped over.
    let odd = words.version.load(Ordering::Relaxed).wrapping_add(1) | 1;
    words.version.store(odd, Ordering::Relaxed);
    // SYNC POINT overwrite-mark (writer side): the odd version is ordered before the mark's
    // words; a reader whose loads see any of them re-reads the version (`read_mark`, after
    // its Acquire fence) and finds it changed.
    W::fence(Ordering::Release);
    words.mark_position.store(tail, Ordering::Relaxed);
    words.mark_count.store(count, Ordering::Relaxed);
    words.frontier.store(frontier, Ordering::Relaxed);
    // SYNC POINT overwrite-mark (writer side): the even version publishes the mark, and the
    // commits of every frame before `tail`, to a reader that loads it with Acquire.
    words.version.store(odd.wrapping_add(1), Ordering::Release);
    // SYNC POINT overwrite-frontier (publisher side): the frontier store is ordered before
    // every ring write that follows. A reader that sees any of those writes, and then runs
    // its Acquire fence (`overwritten`), sees this frontier or a later one.
    W::fence(Ordering::Release);
}

/// Lossy subscriber, after copying out (or just reading the header of) the frame at
/// `position`: whether the ring's publisher may have overwritten it meanwhile, so that
/// what was read must be thrown away. `capacity` is the ring's size.
#[inline(always)]
pub fn overwritten<W: Word>(frontier: &W, position: u64, capacity: u64) -> bool {
    // SYNC POINT overwrite-frontier (subscriber side): pairs with `advance_frontier`. Our
    // reads of the frame come before this fence; if one saw a byte of a later lap, the
    // publisher stored a frontier past `position + capacity` before writing it, and the
    // load below sees that frontier or a later one.
    W::fence(Ordering::Acquire);
    frontier.load(Ordering::Relaxed).saturating_sub(capacity) > position
}

/// Lossy subscriber: the ring's mark, `(position, messages before it)`, read whole; `None`
/// while the publisher is rewriting it (look again later).
pub fn read_mark<W: Word>(words: &OverwriteWords<W>) -> Option<(u64, u64)> {
    for _ in 0..MARK_ATTEMPTS {
        // SYNC POINT overwrite-mark (reader side): pairs with the even version store.
        let version = words.version.load(Ordering::Acquire);
        if version & 1 == 1 {
            continue;
        }
        let position = words.mark_position.load(Ordering::Relaxed);
        let count = words.mark_count.load(Ordering::Relaxed);
        // SYNC POINT overwrite-mark (reader side): pairs with the fence after the odd
        // version store; a mark word from a newer write means a newer version below.
        W::fence(Ordering::Acquire);
        if words.version.load(Ordering::Relaxed) == version {
            return Some((position, count));
        }
    }
    None
}

/// Tethered subscriber on a channel with a tether timeout: releases everything before
/// `head`, as [`release`](super::release), unless a publisher demoted the slot (marked its
/// cursor untethered) since the last release at `released`. Returns whether it released.
#[inline]
pub fn release_unless_demoted<W: Word>(cursor: &W, released: u64, head: u64) -> bool {
    // SYNC POINT ring-release (Release side), as in `release`; a compare-exchange so that
    // a demotion's mark on the cursor is never overwritten by a plain store.
    cursor
        .compare_exchange(released, head, Ordering::Release, Ordering::Relaxed)
        .is_ok()
}

/// Publisher held back too long by the tethered subscriber whose slot kind word is `kind`
/// and whose cursor in this publisher's ring is `cursor`: demotes it to lossy, and marks
/// the cursor untethered so that no publisher waits for it any more. A subscriber releasing
/// at that moment either lands its release first (the mark goes on its new position) or
/// finds its release refused (`release_unless_demoted`). Returns whether this call changed
/// the slot's kind (it may already be lossy or demoted).
pub fn demote<W: Word>(kind: &W, cursor: &W) -> bool {
    let changed = kind
        .compare_exchange(
            SUBSCRIBER_TETHERED,
            SUBSCRIBER_DEMOTED,
            Ordering::Relaxed,
            Ordering::Relaxed,
        )
        .is_ok();
    let mut seen = cursor.load(Ordering::Relaxed);
    while seen < CURSOR_UNTETHERED {
        match cursor.compare_exchange(seen, seen | CURSOR_UNTETHERED, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break,
            Err(now) => seen = now,
        }
    }
    changed
}
