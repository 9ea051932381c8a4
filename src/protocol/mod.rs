//! The synchronisation protocol between publishers and subscribers, written once.
//!
//! Every step that orders memory between processes lives here, generic over the atomic
//! [`Word`]. Channels run these steps on shared memory with `std` atomics; the loom models
//! in `tests/loom.rs` (built with `--cfg loom`) run the very same functions on a
//! heap-backed ring with loom's atomics, which explore their interleavings and weak-memory
//! outcomes within a preemption bound. Each `SYNC POINT` names both ends of an ordering
//! pair. The one sequence kept elsewhere is a sleeper's (announce, barrier, last look,
//! futex wait: `wait::Park::park`), which the sleep model in `tests/loom.rs` follows.
//!
//! - [`ring`]: committing and consuming frames, cursors and the publisher's write limit;
//! - [`ordered`]: global sequence numbers, the subscriber's merge, and declaring numbers lost;
//! - [`overrun`]: lossy subscribers: the overwrite frontier, torn copies, the restart mark, demotion;
//! - [`wake`]: sleeping subscribers and the publishers that wake them;
//! - [`handoff`]: slots changing hands (claim, take-over of a dead holder, reap, release);
//! - [`history`]: a joining lossy subscriber walking a ring back from its tail.

use std::sync::atomic::Ordering;

pub mod handoff;
pub mod history;
pub mod ordered;
pub mod overrun;
pub mod ring;
pub mod wake;

#[cfg(any(loom, salias_testing))]
pub use crate::wire::layout::{OverwriteWords, WakeWords};
pub use handoff::*;
pub use history::*;
pub use ordered::*;
pub use overrun::*;
pub use ring::*;
pub use wake::*;

/// A 64-bit atomic word and the fence of the same memory model.
pub trait Word {
    /// Atomic load.
    fn load(&self, order: Ordering) -> u64;
    /// Atomic store.
    fn store(&self, value: u64, order: Ordering);
    /// Atomic add, returning the previous value.
    fn fetch_add(&self, value: u64, order: Ordering) -> u64;
    /// Atomic compare-and-exchange: the previous value, `Ok` if it was `current`.
    fn compare_exchange(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64>;
    /// A memory fence that orders accesses to words of this kind.
    fn fence(order: Ordering);
    /// Between a sole taker's TAKING mark and its look at `sole_taker`
    /// (`take_sequence`): on shared memory only the compiler is fenced, and a joiner's
    /// process-wide barrier (membarrier) supplies the hardware fence. The loom models,
    /// which cannot express that barrier, fence here with SeqCst instead.
    fn taker_fence();
}

impl Word for std::sync::atomic::AtomicU64 {
    #[inline(always)]
    fn load(&self, order: Ordering) -> u64 {
        self.load(order)
    }
    #[inline(always)]
    fn store(&self, value: u64, order: Ordering) {
        self.store(value, order)
    }
    #[inline(always)]
    fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
        self.fetch_add(value, order)
    }
    #[inline(always)]
    fn compare_exchange(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64> {
        self.compare_exchange(current, new, success, failure)
    }
    #[inline(always)]
    fn fence(order: Ordering) {
        std::sync::atomic::fence(order)
    }
    #[inline(always)]
    fn taker_fence() {
        std::sync::atomic::compiler_fence(Ordering::SeqCst)
    }
}

#[cfg(loom)]
impl Word for loom::sync::atomic::AtomicU64 {
    fn load(&self, order: Ordering) -> u64 {
        self.load(order)
    }
    fn store(&self, value: u64, order: Ordering) {
        self.store(value, order)
    }
    fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
        self.fetch_add(value, order)
    }
    fn compare_exchange(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64> {
        self.compare_exchange(current, new, success, failure)
    }
    fn fence(order: Ordering) {
        loom::sync::atomic::fence(order)
    }
    fn taker_fence() {
        loom::sync::atomic::fence(Ordering::SeqCst)
    }
}

/// A 32-bit atomic word (the futex width) and the fences a publisher may run before it
/// looks for sleepers.
pub trait Word32 {
    /// Atomic load.
    fn load(&self, order: Ordering) -> u32;
    /// Atomic swap, returning the previous value.
    fn swap(&self, value: u32, order: Ordering) -> u32;
    /// Atomic add, returning the previous value.
    fn fetch_add(&self, value: u32, order: Ordering) -> u32;
    /// Atomic subtract, returning the previous value.
    fn fetch_sub(&self, value: u32, order: Ordering) -> u32;
    /// Between a publisher's commits and its look for sleepers, in a process that
    /// sleepers' barriers reach. On shared memory only the compiler is fenced: a long
    /// sleeper's process-wide barrier (membarrier) supplies the hardware fence on the
    /// publisher's behalf. The loom models, which cannot express that barrier, put a
    /// SeqCst fence on both sides instead.
    fn publisher_fence();
    /// A full fence: what a publisher that sleepers' barriers do not reach runs instead.
    fn full_fence();
}

macro_rules! word32 {
    ($atomic:ty, $publisher_fence:expr, $full_fence:expr) => {
        impl Word32 for $atomic {
            #[inline(always)]
            fn load(&self, order: Ordering) -> u32 {
                self.load(order)
            }
            #[inline(always)]
            fn swap(&self, value: u32, order: Ordering) -> u32 {
                self.swap(value, order)
            }
            #[inline(always)]
            fn fetch_add(&self, value: u32, order: Ordering) -> u32 {
                self.fetch_add(value, order)
            }
            #[inline(always)]
            fn fetch_sub(&self, value: u32, order: Ordering) -> u32 {
                self.fetch_sub(value, order)
            }
            #[inline(always)]
            fn publisher_fence() {
                $publisher_fence
            }
            #[inline(always)]
            fn full_fence() {
                $full_fence
            }
        }
    };
}

word32!(
    std::sync::atomic::AtomicU32,
    std::sync::atomic::compiler_fence(Ordering::SeqCst),
    std::sync::atomic::fence(Ordering::SeqCst)
);
#[cfg(loom)]
word32!(
    loom::sync::atomic::AtomicU32,
    loom::sync::atomic::fence(Ordering::SeqCst),
    loom::sync::atomic::fence(Ordering::SeqCst)
);
