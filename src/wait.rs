//! How a blocking call waits: spin, yield, or sleep in the kernel until a peer wakes it.
//!
//! A strategy is asked to wait each time the awaited condition (a message to receive, room
//! to publish) was not met. It may spin, yield, or [`Park::park`], which sleeps until a
//! publisher commits (subscribers) or a subscriber releases room (publishers), never past
//! the call's deadline.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::platform::{self, Barrier};
use crate::protocol;
use crate::wire::layout::WakeWord;

/// Decides what to do while a blocking call has nothing to do. Implement it to plug in
/// your own policy; [`Adaptive`] is the default.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-strategy-{}", std::process::id());
/// use std::time::Duration;
/// /// Spins briefly, then sleeps in short naps (a commit still wakes it early).
/// struct Patient;
/// impl salias::wait::WaitStrategy for Patient {
///     fn wait(&mut self, idle: u32, park: &mut salias::wait::Park<'_>) {
///         if idle < 100 {
///             std::hint::spin_loop();
///         } else {
///             park.park(Duration::from_micros(20));
///         }
///     }
/// }
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut subscriber = channel.subscriber()?;
/// subscriber.set_wait_strategy(Patient);
/// assert!(subscriber.recv_timeout(Duration::from_millis(1)).is_err());
/// # Ok::<(), salias::Error>(())
/// ```
pub trait WaitStrategy: Send {
    /// Called after the condition was found unmet; `idle` counts such calls since the
    /// condition last held (0 on the first).
    fn wait(&mut self, idle: u32, park: &mut Park<'_>);

    /// Called by a subscriber's `recv_batch` after a batch that handed out fewer messages
    /// than it could take: the subscriber has caught up with its publishers, and its next
    /// look would read the frame a publisher is writing. Returns at once by default; see
    /// [`Batching`] for a strategy that waits here.
    #[inline]
    fn caught_up(&mut self) {}
}

/// Burns the core: lowest latency, 100 % CPU while idle.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-busy-spin-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut subscriber = channel.subscriber()?;
/// subscriber.set_wait_strategy(salias::wait::BusySpin); // for a core reserved for this thread
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct BusySpin;

impl WaitStrategy for BusySpin {
    #[inline]
    fn wait(&mut self, _idle: u32, _park: &mut Park<'_>) {
        std::hint::spin_loop();
    }
}

/// Burns the core as [`BusySpin`] does, and after a `recv_batch` that caught up with its
/// publishers spins `pauses` more times before it looks again: for throughput, on a core
/// reserved for the subscriber.
///
/// A subscriber that keeps up with its publishers reads the frame a publisher is writing;
/// each of its looks takes that cache line from the publisher, whose next store waits for
/// it to come back, and the two settle at a line crossing every message or so. Paused,
/// the subscriber lets the publisher run ahead, and its next look finds a full batch in
/// lines nobody is writing. doc/performance-notes.md, 1P1S, 64-byte messages: twice the
/// rate on a 2-vCPU AMD EPYC host while its cache line crossed in 90 ns or more; 1.02-1.03×
/// on a 2-vCPU Intel Xeon host whose subscriber stays behind its publisher either way (a
/// `drain` loop there delivers 0.82-0.88× the SPSC floor's rate). Large messages gain on
/// the Intel host too: raw single offers of 2 and 4 KiB 1.5×, and 1 KiB ones no longer
/// fall to a third of their rate in some runs (`cargo bench --bench ipc -- --only sizes
/// --quick`, 4 MiB ring, 30 rounds of each subscriber).
///
/// The cost is latency, and only while messages keep coming: one that arrives during the
/// pauses waits for their end (64 pauses: 1.6 µs on the AMD host, where `pause` takes
/// 25 ns; 0.7 µs on the Intel one, 10.5 ns). The first message after a quiet gap longer
/// than the pauses is seen as soon as by [`BusySpin`], and a `recv_batch` that fills its
/// batch does not pause.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-batching-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut publisher = channel.publisher()?;
/// let mut subscriber = channel.subscriber()?;
/// subscriber.set_wait_strategy(salias::wait::Batching::default());
/// publisher.offer_batch(&[Tick { seq: 1 }, Tick { seq: 2 }])?;
/// let mut sum = 0;
/// // Two of at most 256: caught up, so it pauses before returning.
/// assert_eq!(subscriber.recv_batch(256, |_, tick| sum += tick.seq)?, 2);
/// assert_eq!(sum, 3);
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Batching {
    /// `pause` instructions (`std::hint::spin_loop`) after a batch that caught up.
    pub pauses: u32,
}

impl Default for Batching {
    /// 64 pauses: on the AMD host of doc/performance-notes.md, 16 kept the subscriber off
    /// the publisher's line in some rounds only, 64 in nearly all.
    fn default() -> Self {
        Batching { pauses: 64 }
    }
}

impl WaitStrategy for Batching {
    #[inline]
    fn wait(&mut self, _idle: u32, _park: &mut Park<'_>) {
        std::hint::spin_loop();
    }

    #[inline]
    fn caught_up(&mut self) {
        for _ in 0..self.pauses {
            std::hint::spin_loop();
        }
    }
}

/// Spins `spins` times, then yields the core to other threads on every call.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-spin-yield-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut publisher = channel.publisher()?;
/// publisher.set_wait_strategy(salias::wait::SpinThenYield { spins: 100 });
/// # Ok::<(), salias::Error>(())
/// ```
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
/// woken by the next commit (a short sleep, rarely, only when it ends). The default.
///
/// The first `short_parks` sleeps last at most [`SHORT_PARK`] each and skip the
/// barrier a long sleep needs (see [`SHORT_PARK`]); a subscriber that
/// idles between messages a few microseconds apart sleeps and wakes without it. Only
/// after those does it sleep up to 100 ms at a time.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-adaptive-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut subscriber = channel.subscriber()?;
/// // Sleep sooner than the default: fewer spins, no yields.
/// subscriber.set_wait_strategy(salias::wait::Adaptive { spins: 200, yields: 0, ..Default::default() });
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Adaptive {
    /// Spin iterations before yielding.
    pub spins: u32,
    /// Yields before sleeping.
    pub yields: u32,
    /// Short sleeps before long ones.
    pub short_parks: u32,
}

impl Default for Adaptive {
    fn default() -> Self {
        Adaptive {
            spins: 2_000,
            yields: 100,
            short_parks: 20,
        }
    }
}

// The spin and yield phases count calls instead of running `crossbeam_utils::Backoff`:
// Backoff spins exponentially longer between looks (up to 64 pauses, then yields, with
// limits fixed in the crate), which delays noticing a commit by up to those 64 pauses on
// exactly the path whose latency salias sells; here every call looks once, and the
// phase lengths are the user's settings.
impl WaitStrategy for Adaptive {
    fn wait(&mut self, idle: u32, park: &mut Park<'_>) {
        let yields_end = self.spins.saturating_add(self.yields);
        if idle < self.spins {
            std::hint::spin_loop();
        } else if idle < yields_end {
            std::thread::yield_now();
        } else if idle - yields_end < self.short_parks {
            park.park(SHORT_PARK);
        } else {
            park.park(Duration::from_millis(100));
        }
    }
}

/// What a strategy can sleep on.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-park-{}", std::process::id());
/// struct Sleepy;
/// impl salias::wait::WaitStrategy for Sleepy {
///     fn wait(&mut self, _idle: u32, park: &mut salias::wait::Park<'_>) {
///         park.park(salias::wait::SHORT_PARK); // woken early by a commit; never past the deadline
///     }
/// }
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// channel.subscriber()?.set_wait_strategy(Sleepy);
/// # Ok::<(), salias::Error>(())
/// ```
pub struct Park<'a> {
    wake: Option<&'a WakeWord>,
    ready: &'a mut dyn FnMut() -> bool,
    deadline: Option<Instant>,
}

impl std::fmt::Debug for Park<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Park")
            .field("wakeable", &self.wake.is_some())
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

/// Longest kernel sleep when nothing can wake the sleeper reliably: a Linux kernel (or
/// seccomp policy) without expedited membarrier; an armed readiness descriptor there
/// re-checks this often.
pub(crate) const NAP: Duration = Duration::from_micros(200);

/// Sleeps up to this long skip the barrier that makes a publisher's wake-up certain (on
/// Linux a process-wide one that costs microseconds and interrupts every core running a
/// publisher; on macOS a fence). A publisher still wakes such a sleeper; only a commit
/// that races the sleeper's last look can leave it asleep, and then for at most this long.
pub const SHORT_PARK: Duration = Duration::from_micros(50);

impl<'a> Park<'a> {
    pub(crate) fn new(
        wake: Option<&'a WakeWord>,
        ready: &'a mut dyn FnMut() -> bool,
        deadline: Option<Instant>,
    ) -> Self {
        Park { wake, ready, deadline }
    }

    /// Sleeps for at most `max` (and never past the call's deadline), returning early when
    /// woken. The caller re-checks its condition afterwards either way. A sleep of at most
    /// [`SHORT_PARK`] is cheaper to enter, and in a rare race with a commit it is not
    /// woken early.
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
        let seen = protocol::announce_sleep(wake);
        // The other half of SYNC POINT sleeper-registration (`sleepers_present`), between
        // the announcement and the last look. Short sleeps skip it (see `SHORT_PARK`).
        let reliable = max > SHORT_PARK && sleeper_barrier();
        if !(self.ready)() {
            platform::wait(&wake.seq, seen, if reliable { max } else { max.min(NAP) });
        }
        protocol::leave_sleep(wake);
    }
}

/// Orders a sleeper's announcement before its last look against every publisher's commit
/// before its look for sleepers (SYNC POINT sleeper-registration, sleeper side; the
/// publisher side is `protocol::sleepers_present`). Returns whether the sleep may then
/// last until woken.
///
/// - `Done` (Linux membarrier): a publisher reached by the barrier runs only a compiler
///   fence, and the barrier supplies the hardware fence on its behalf and on ours
///   (asymmetric Dekker); a publisher it does not reach fences for itself.
/// - `NotNeeded` (macOS, the portable layer): no publisher is reached, so each runs a full
///   fence after its commit; with ours here, the two SeqCst fences make the Dekker pair:
///   either the publisher sees our announcement and wakes us, or we see its commit. So
///   each commit's wake check costs a publisher a full fence there.
/// - `Failed`: a publisher relying on the barrier may miss us; the sleep is capped at `NAP`.
pub(crate) fn sleeper_barrier() -> bool {
    match platform::heavy_barrier() {
        Barrier::Done => true,
        Barrier::NotNeeded => {
            std::sync::atomic::fence(Ordering::SeqCst);
            true
        }
        Barrier::Failed => false,
    }
}

/// The waker of both lines, after a commit (subscribers sleep on the messages line) or a
/// release (publishers wait on the room line): wakes whoever sleeps on `wake` if anyone
/// does and no other waker has taken that on since they went to sleep. `claimed` runs
/// when this call takes that on, before it wakes them (the tests count wakes with it).
/// `reached`: whether sleepers' barriers reach this process
/// (`platform::register_fast_side`). While nobody sleeps, one load of a read-mostly line
/// (and, outside the barrier's reach, a fence).
#[inline(always)]
pub(crate) fn wake_sleepers(wake: &WakeWord, reached: bool, claimed: impl FnOnce()) {
    if protocol::sleepers_present(wake, reached) {
        wake_claimed(wake, claimed);
    }
}

/// `wake_sleepers` on the messages line, after a commit.
#[inline(always)]
pub(crate) fn wake_subscribers(wake: &WakeWord, reached: bool) {
    wake_sleepers(wake, reached, || {});
}

/// Wakes every sleeper on `wake`, whether or not a waker already claimed the wake: after
/// a handle freed its slot, so that peers waiting on it look again and see it gone (or a
/// subscriber joined, for publishers refused for want of one). One futex call; cold paths.
#[cold]
pub(crate) fn wake_everyone(wake: &WakeWord) {
    protocol::bump_wake(wake);
    platform::wake_all(&wake.seq);
}

/// Sleepers are present: wakes them if this caller claims the wake.
#[cold]
#[inline(never)]
fn wake_claimed(wake: &WakeWord, claimed: impl FnOnce()) {
    if protocol::claim_wake(wake) {
        claimed();
        protocol::bump_wake(wake);
        platform::wake_all(&wake.seq);
    }
}

/// The instant `timeout` from now; `None` (no deadline) for a timeout too long for the
/// clock to represent, which no call outlives anyway.
pub(crate) fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

/// The state of one blocking call between attempts: how long it has been idle and when
/// it must give up.
pub(crate) struct Waiter {
    idle: u32,
    deadline: Option<Instant>,
}

impl Waiter {
    pub(crate) fn new(timeout: Option<Duration>) -> Self {
        Self::until(timeout.and_then(deadline_after))
    }

    /// A waiter for a call that gives up at `deadline` (never, if `None`).
    pub(crate) fn until(deadline: Option<Instant>) -> Self {
        Waiter { idle: 0, deadline }
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
