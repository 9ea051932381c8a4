//! Slots changing hands: claiming a free slot, taking over a dead holder's, reaping the
//! dead, releasing a slot, and the owner detaching from a kept channel.
//!
//! A slot's holder word is `pid << 32 | start time`, or `SLOT_FREE`. Whoever next holds
//! the slot continues from what the last holder left in it (a ring's tail, an Mpsc
//! subscriber's cursors and resume point), so every hand-off is one ordering pair:
//!
//! SYNC POINT slot-handoff: a holder's last writes to its slot happen before it frees the
//! slot (Release, in `release_slot` or a reaper's `replace_if_dead`); a claimant's CAS
//! (Acquire, in `claim_free` and `take_over`) sees them before it reads the slot. A holder
//! that died wrote nothing after its last store, so its successor sees everything it
//! stored; a store it had not made (a frame committed but not reported) is recovered
//! from the ring itself (`wire::ring::Ring::committed_end`).

use std::sync::atomic::Ordering;

use super::Word;
use crate::wire::layout::SLOT_FREE;

/// Claims the slot if it is free. Returns whether it is now `me`'s.
#[inline]
pub fn claim_free<W: Word>(holder: &W, me: u64) -> bool {
    // SYNC POINT slot-handoff (claim side): Acquire pairs with the release of the slot.
    holder
        .compare_exchange(SLOT_FREE, me, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok()
}

/// Takes the slot for `me` if it is free or its holder died (`alive` says). The word may
/// change while we look (a reaper freeing it, another claimer): look again at what it
/// changed to, at most `attempts` times, so a peer flipping it cannot keep us here.
pub fn take_over<W: Word>(holder: &W, me: u64, alive: impl Fn(u64) -> bool, attempts: u32) -> bool {
    // SYNC POINT slot-handoff (claim side): the Acquire loads and CAS pair with the dead
    // holder's last Release stores to its slot, or with the release of a freed slot.
    let mut token = holder.load(Ordering::Acquire);
    for _ in 0..attempts {
        if token != SLOT_FREE && alive(token) {
            return false;
        }
        match holder.compare_exchange(token, me, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(now) => token = now,
        }
    }
    false
}

/// Replaces a dead holder's word with `to` (`SLOT_FREE`, or the reaper's own token while
/// it resets the slot), if it is still that dead holder's. Returns whether it did.
pub fn replace_if_dead<W: Word>(holder: &W, to: u64, alive: impl Fn(u64) -> bool) -> bool {
    let token = holder.load(Ordering::Acquire);
    // SYNC POINT slot-handoff (release side, for a holder that cannot release itself):
    // AcqRel, so a reaper's own resets before a later `release_slot` reach the claimant.
    token != SLOT_FREE
        && !alive(token)
        && holder
            .compare_exchange(token, to, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
}

/// Frees the slot: everything this holder wrote to it before is visible to the next
/// claimant. Also how an owner detaches from a kept channel (its owner word).
#[inline]
pub fn release_slot<W: Word>(holder: &W) {
    // SYNC POINT slot-handoff (release side), and SYNC POINT departure (holder side):
    // peers waiting on this holder load the word with Acquire in `is_free`.
    holder.store(SLOT_FREE, Ordering::Release);
}

/// Whether the slot is free, as a peer waiting on its holder sees it: a subscriber
/// deciding that no publisher is left, a publisher that no subscriber is.
///
/// SYNC POINT departure: a holder's last writes (its final commits, an Mpsc subscriber's
/// last cursor release) happen before `release_slot`'s Release store; seeing `SLOT_FREE`
/// here with Acquire, the peer's next look at the ring sees every one of them, so a
/// subscriber that finds nothing after this has received everything the holder committed.
#[inline]
pub fn is_free<W: Word>(holder: &W) -> bool {
    holder.load(Ordering::Acquire) == SLOT_FREE
}
