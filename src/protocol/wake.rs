//! Sleeping subscribers and the publishers that wake them: announcing a sleep, a
//! publisher's look for sleepers, and the one-wake-per-sleep claim.

use std::sync::atomic::Ordering;

use super::Word32;
use crate::wire::layout::WakeWords;

/// Subscriber, before its last look for messages: announces it is about to sleep and
/// returns the futex value to sleep on. The caller then runs the sleeper's barrier (a
/// long sleep) or not (a short one, which may then miss a racing commit and sleep its
/// whole length), looks once more, and only if it finds nothing sleeps while `seq` still
/// holds that value (`wait::Park::park`).
pub fn announce_sleep<A: Word32>(wake: &WakeWords<A>) -> u32 {
    // SYNC POINT sleeper-registration (sleeper side): the increment must be visible to a
    // publisher before our last look for messages, or that publisher may commit, miss us,
    // and leave us asleep. Pairs with `sleepers_present` across the sleeper's barrier.
    wake.sleepers.fetch_add(1, Ordering::SeqCst);
    let seen = wake.seq.load(Ordering::Acquire);
    // SYNC POINT wake-claim (sleeper side): cleared after reading `seen`, with Release, so
    // a publisher whose claim reads this clear (`claim_wake`, Acquire) bumps `seq` past
    // `seen`. A swap, so later sleepers' clears continue this release sequence.
    wake.woken.swap(0, Ordering::AcqRel);
    seen
}

/// Subscriber, after sleeping or deciding not to.
pub fn leave_sleep<A: Word32>(wake: &WakeWords<A>) {
    wake.sleepers.fetch_sub(1, Ordering::Release);
}

/// Publisher, after its commits: whether a subscriber may be asleep. Costs one load of a
/// line that changes only when a subscriber goes to sleep or wakes. `reached` says
/// whether sleepers' barriers reach this process; if not, it fences for itself.
#[inline(always)]
pub fn sleepers_present<A: Word32>(wake: &WakeWords<A>, reached: bool) -> bool {
    // SYNC POINT sleeper-registration (publisher side): pairs with `announce_sleep`.
    if reached {
        A::publisher_fence();
    } else {
        A::full_fence();
    }
    wake.sleepers.load(Ordering::Relaxed) != 0
}

/// Publisher that found sleepers: whether it is the one to wake them. If so it must call
/// [`bump_wake`] and then wake every futex waiter on `seq`; if not, another publisher
/// claimed after the last clear and wakes every sleeper that took its barrier before
/// that claim. Should that publisher die or stall between its claim and its wake, those
/// sleepers sleep until it runs again or their sleep ends (100 ms for `Adaptive`), while
/// later commits skip the wake: a bounded delay, never a lost message.
pub fn claim_wake<A: Word32>(wake: &WakeWords<A>) -> bool {
    // SYNC POINT wake-claim (publisher side): pairs with the clear in `announce_sleep`.
    // The plain load first keeps publishers from fighting over the line while the flag
    // is set.
    wake.woken.load(Ordering::Relaxed) == 0 && wake.woken.swap(1, Ordering::Acquire) == 0
}

/// Publisher that claimed the wake: moves the futex word past the `seen` of every sleeper
/// that cleared the claim before it was taken.
pub fn bump_wake<A: Word32>(wake: &WakeWords<A>) {
    // SYNC POINT wake-bump (waker side): what the waker committed or released before
    // its bump is visible to a readiness watcher that loads the moved word with Acquire
    // (`readiness::watcher`), and through the descriptor it signals, to the handle.
    wake.seq.fetch_add(1, Ordering::Release);
}

/// What arming a watched handle found (`readiness`): ready already, its sleep left; or
/// registered as a sleeper that must be woken when `seq` moves past `seen`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Armed {
    /// The last look found what the handle waits for; it is no longer a sleeper.
    Ready,
    /// Still registered: wait while `seq == seen`, then `leave_sleep`. `reliable` says
    /// whether the sleeper's barrier ran; if not, a racing commit may not wake it.
    Sleeping {
        /// The futex value to wait on.
        seen: u32,
        /// Whether a waker is certain to move `seq`.
        reliable: bool,
    },
}

/// A watched handle that found nothing: the steps of a long sleep (`wait::Park::park`)
/// up to, not including, the wait itself: announce, the sleeper's barrier, one more look.
pub fn arm<A: Word32>(wake: &WakeWords<A>, barrier: impl FnOnce() -> bool, ready: impl FnOnce() -> bool) -> Armed {
    let seen = announce_sleep(wake);
    // The other half of SYNC POINT sleeper-registration, as in `Park::park`: the barrier
    // supplies the waker's hardware fence.
    let reliable = barrier();
    if ready() {
        leave_sleep(wake);
        return Armed::Ready;
    }
    Armed::Sleeping { seen, reliable }
}
