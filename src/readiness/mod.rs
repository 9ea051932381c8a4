//! Readiness: a descriptor any poll loop (epoll, kqueue, mio, tokio) can watch, readable
//! while a subscriber has messages to receive or a refused publisher may have room.
//!
//! Each handle owns a local wake descriptor (`notify`), created with the handle so that
//! `as_fd` cannot fail. Watching starts at the first `as_fd`. From then on, whenever the
//! handle finds nothing (an empty receive, a refused offer) it arms: it drains its
//! descriptor, announces itself as a sleeper on its wake line, runs the sleeper's barrier,
//! and looks once more. If the look finds something it signals its own descriptor;
//! otherwise the process's watcher thread for that line (`watcher`) sleeps on the futex
//! word for it and signals the descriptor when a waker moves the word. Wakers run the
//! same one-wake-per-sleep protocol as for a sleeping `recv`: nothing on their path
//! while nobody is armed.
//!
//! An armed handle is not armed again until its watcher has signalled it, so each armed
//! handle is one registered sleeper.
//!
//! With the `tokio` feature, `reactor` is a handle's registration of its descriptor with
//! tokio's reactor, which `asynchronous` awaits.

mod notify;
#[cfg(feature = "tokio")]
mod reactor;
mod watcher;

use std::cell::{Cell, OnceCell};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::protocol::{self, Armed};
use crate::region::Shared;
use crate::wait::{NAP, sleeper_barrier};
use notify::NotifyFd;
#[cfg(feature = "tokio")]
pub(crate) use reactor::Reactor;
pub(crate) use watcher::Line;
use watcher::{Slot, Watcher};

/// A handle's readiness state. The handle is `!Sync`, so the cells are its own.
pub(crate) struct Readiness {
    slot: Arc<Slot>,
    line: Line,
    /// Set by the first `as_fd`: from then on, finding nothing arms.
    watching: Cell<bool>,
    /// Started at the first arm, kept until the handle drops.
    watcher: OnceCell<Arc<Watcher>>,
    /// Re-check at least this often while armed, even with the barrier: what the handle
    /// waits for can come without a wake.
    recheck: Option<Duration>,
}

/// How often an armed fanout publisher re-checks: room also appears without a wake when
/// a fanout subscriber dies holding it and a publisher's check frees its slot (as a
/// blocking `send` does after each sleep of at most 100 ms).
pub(crate) const FANOUT_ROOM_RECHECK: Duration = Duration::from_millis(100);

impl Readiness {
    /// The state of a new handle waiting on `line`; opens its descriptor. `recheck`: see
    /// the field.
    pub(crate) fn new(line: Line, recheck: Option<Duration>, channel: &str) -> Result<Self> {
        let fd = NotifyFd::new().map_err(|e| {
            let error = Error::platform("create the readiness descriptor", channel, e);
            if e == rustix::io::Errno::MFILE || e == rustix::io::Errno::NFILE {
                // Every handle has one descriptor (see `Subscriber::as_fd`).
                error.with_hint("out of file descriptors; raise the limit (`ulimit -n`) or close some")
            } else {
                error
            }
        })?;
        Ok(Readiness {
            slot: Arc::new(Slot::new(fd)),
            line,
            watching: Cell::new(false),
            watcher: OnceCell::new(),
            recheck,
        })
    }

    /// The descriptor. The first call starts watching and arms at once (`ready` is the
    /// handle's look), so the descriptor is right from the start; from then on the
    /// handle arms whenever it finds nothing.
    pub(crate) fn fd(&self, shared: &Arc<Shared>, ready: impl FnOnce() -> bool) -> BorrowedFd<'_> {
        // A fork child's handle arms nothing: its slot, and its descriptor, are shared
        // with the parent; its first receive reports `Inherited`.
        if !self.watching.get() && shared.is_ours() {
            self.watching.set(true);
            self.arm(shared, ready);
        }
        self.slot.fd.as_fd()
    }

    /// Whether a poll loop watches the descriptor (`as_fd` was called).
    #[inline(always)]
    pub(crate) fn is_watching(&self) -> bool {
        self.watching.get()
    }

    /// The handle found nothing: arms, if it is watched and not armed already. `ready`
    /// is its last look (a committed frame, room), run after the sleeper's barrier.
    #[inline(always)]
    pub(crate) fn found_nothing(&self, shared: &Arc<Shared>, ready: impl FnOnce() -> bool) {
        if self.watching.get() {
            self.arm(shared, ready);
        }
    }

    #[cold]
    #[inline(never)]
    fn arm(&self, shared: &Arc<Shared>, ready: impl FnOnce() -> bool) {
        if self.slot.maybe_armed() && self.watcher.get().is_some_and(|w| w.is_armed(&self.slot)) {
            return;
        }
        let watcher = match self.watcher() {
            Some(watcher) => watcher,
            None => match Watcher::get(shared, self.line) {
                Ok(watcher) => self.watcher.get_or_init(|| watcher),
                Err(_) => {
                    // No thread to watch with (the process is out of threads): the
                    // descriptor stays readable, so the loop keeps looking and the next
                    // empty look tries again. Slower, never a lost message.
                    self.slot.fd.signal();
                    return;
                }
            },
        };
        self.slot.fd.drain();
        match protocol::arm(self.line.word(shared), sleeper_barrier, ready) {
            Armed::Ready => self.slot.fd.signal(),
            // Without the barrier a racing waker may miss us: re-check after a nap.
            Armed::Sleeping { seen, reliable } => {
                watcher.add(&self.slot, seen, if reliable { self.recheck } else { Some(NAP) })
            }
        }
    }

    fn watcher(&self) -> Option<&Arc<Watcher>> {
        self.watcher.get()
    }
}

impl Drop for Readiness {
    fn drop(&mut self) {
        if let Some(watcher) = self.watcher.get() {
            watcher.remove(&self.slot);
        }
    }
}

#[cfg(salias_testing)]
static ROOM_WAKES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts a subscriber's wake of publishers waiting for room (a futex call).
#[cfg(salias_testing)]
pub(crate) fn count_room_wake() {
    ROOM_WAKES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// How many times subscribers of this process have woken publishers waiting for room.
#[cfg(salias_testing)]
pub(crate) fn room_wakes() -> u64 {
    ROOM_WAKES.load(std::sync::atomic::Ordering::Relaxed)
}
