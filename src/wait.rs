//! How a blocking call waits: spin, yield, or sleep in the kernel until a publisher wakes it.
//!
//! A strategy is asked to wait each time the awaited condition (a message to receive, room
//! to publish) was not met. It may spin, yield, or [`Park::park`], which sleeps until a
//! publisher commits (subscribers) or for a short nap (publishers), never past the call's
//! deadline.

use std::sync::atomic::{Ordering, compiler_fence};
use std::time::{Duration, Instant};

use crate::layout::WakeWord;
use crate::platform;

/// Decides what to do while a blocking call has nothing to do. Implement it to plug in
/// your own policy; [`Adaptive`] is the default.
pub trait WaitStrategy: Send + Sync {
    /// Called after the condition was found unmet; `idle` counts such calls since the
    /// condition last held (0 on the first).
    fn wait(&mut self, idle: u32, park: &mut Park<'_>);
}

/// Burns the core: lowest latency, 100 % CPU while idle.
#[derive(Clone, Copy, Debug, Default)]
pub struct BusySpin;

impl WaitStrategy for BusySpin {
    #[inline]
    fn wait(&mut self, _idle: u32, _park: &mut Park<'_>) {
        std::hint::spin_loop();
    }
}

/// Spins `spins` times, then yields the core to other threads on every call.
#[derive(Clone, Copy, Debug)]
pub struct SpinThenYield {
    /// Spin iterations before yielding.
    pub spins: u32,
}

impl Default for SpinThenYield {
    fn default() -> Self {
        SpinThenYield { spins: 1_000 }
    }
}

impl WaitStrategy for SpinThenYield {
    fn wait(&mut self, idle: u32, _park: &mut Park<'_>) {
        if idle < self.spins {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Spins, then yields, then sleeps in the kernel: an idle subscriber costs no CPU and is
/// woken by the next commit. The default.
#[derive(Clone, Copy, Debug)]
pub struct Adaptive {
    /// Spin iterations before yielding.
    pub spins: u32,
    /// Yields before sleeping.
    pub yields: u32,
}

impl Default for Adaptive {
    fn default() -> Self {
        Adaptive {
            spins: 2_000,
            yields: 100,
        }
    }
}

impl WaitStrategy for Adaptive {
    fn wait(&mut self, idle: u32, park: &mut Park<'_>) {
        if idle < self.spins {
            std::hint::spin_loop();
        } else if idle < self.spins + self.yields {
            std::thread::yield_now();
        } else {
            park.park(Duration::from_millis(100));
        }
    }
}

/// What a strategy can sleep on.
pub struct Park<'a> {
    wake: Option<&'a WakeWord>,
    ready: &'a mut dyn FnMut() -> bool,
    deadline: Option<Instant>,
}

/// Longest kernel sleep when nothing can wake the sleeper reliably: publishers waiting for
/// room (subscribers do not wake them), or a kernel without expedited membarrier.
const NAP: Duration = Duration::from_micros(200);

impl<'a> Park<'a> {
    pub(crate) fn new(
        wake: Option<&'a WakeWord>,
        ready: &'a mut dyn FnMut() -> bool,
        deadline: Option<Instant>,
    ) -> Self {
        Park { wake, ready, deadline }
    }

    /// Sleeps for at most `max` (and never past the call's deadline), returning early when
    /// woken. The caller re-checks its condition afterwards either way.
    pub fn park(&mut self, max: Duration) {
        let mut max = max;
        if let Some(deadline) = self.deadline {
            max = max.min(deadline.saturating_duration_since(Instant::now()));
        }
        if max.is_zero() {
            return;
        }
        let Some(wake) = self.wake else {
            std::thread::sleep(max.min(NAP));
            return;
        };
        // SYNC POINT sleeper-registration: our increment must be visible to a publisher
        // before we re-check for messages, or that publisher may commit, miss us, and
        // leave us asleep. The publisher's side is only a compiler fence; the heavy
        // barrier here supplies the hardware fence on its behalf (asymmetric Dekker).
        wake.sleepers.fetch_add(1, Ordering::SeqCst);
        let seen = wake.seq.load(Ordering::Acquire);
        let reliable = platform::heavy_barrier();
        if !(self.ready)() {
            platform::wait(&wake.seq, seen, if reliable { max } else { max.min(NAP) });
        }
        wake.sleepers.fetch_sub(1, Ordering::Release);
    }
}

/// The publisher's half of SYNC POINT sleeper-registration: after a commit, wake sleeping
/// subscribers if there are any. Costs one load of a line that rarely changes.
#[inline(always)]
pub(crate) fn wake_subscribers(wake: &WakeWord) {
    compiler_fence(Ordering::SeqCst);
    if wake.sleepers.load(Ordering::Relaxed) != 0 {
        wake_slow(wake);
    }
}

#[cold]
fn wake_slow(wake: &WakeWord) {
    wake.seq.fetch_add(1, Ordering::Release);
    platform::wake_all(&wake.seq);
}

/// The state of one blocking call between attempts: how long it has been idle and when
/// it must give up.
pub(crate) struct Waiter {
    idle: u32,
    deadline: Option<Instant>,
}

impl Waiter {
    pub(crate) fn new(timeout: Option<Duration>) -> Self {
        Waiter {
            idle: 0,
            deadline: timeout.map(|t| Instant::now() + t),
        }
    }

    /// Waits once with `strategy` after a failed attempt. Returns false once the deadline
    /// has passed. `ready` is a cheap check run right before sleeping.
    pub(crate) fn wait(
        &mut self,
        strategy: &mut dyn WaitStrategy,
        wake: Option<&WakeWord>,
        ready: &mut dyn FnMut() -> bool,
    ) -> bool {
        // Reading the clock on every spin would dominate a busy wait; look every 64 rounds.
        if let Some(deadline) = self.deadline
            && self.idle.is_multiple_of(64)
            && Instant::now() >= deadline
        {
            return false;
        }
        let mut park = Park::new(wake, ready, self.deadline);
        strategy.wait(self.idle, &mut park);
        self.idle = self.idle.saturating_add(1);
        true
    }
}
