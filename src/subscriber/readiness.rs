//! The subscriber's readiness descriptor (`AsFd`), arming it when a receive finds
//! nothing, and waking publishers that wait for the room a release frees.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use super::Subscriber;
use crate::kind::{Mode, Topology};
use crate::message::Payload;
use crate::wait;

/// A descriptor that is readable while this subscriber has messages to receive:
/// register it with epoll, kqueue, mio, tokio's `AsyncFd` or any poll loop.
///
/// Level-triggered: once a message is committed it stays readable until a receive
/// (`try_recv`, `drain`, `recv`) finds nothing more, and becomes readable again at the
/// next commit. The first call starts watching and arms; from then on every receive that
/// finds nothing arms again: it drains the descriptor, registers as a sleeper as a
/// parked `recv` does, runs the process-wide barrier (membarrier) and looks once more.
/// Arming costs a few system calls and the barrier, once each time the subscriber runs
/// dry; receiving while messages keep coming costs nothing extra. Publishers pay nothing
/// while no subscriber is armed, and one wake (a futex call) per arm otherwise.
///
/// One process-wide thread per channel (shared by every watched subscriber of that
/// channel in the process) sleeps on the channel's wake word and signals the
/// descriptors; it exits when the last of those subscribers drops. Every subscriber
/// holds its descriptor from creation (an eventfd on Linux, a pipe on macOS), so that
/// this method cannot fail.
///
/// Where a Linux kernel (or a seccomp policy) refuses expedited membarrier, the watcher
/// cannot be sure a commit racing the arming wakes it, so it makes the descriptor
/// readable every 200 µs while armed: the loop looks, finds
/// nothing and arms again. Correct, but a watched idle subscriber then costs CPU. Should
/// the thread not start (the process is out of threads), the descriptor is left readable
/// and every empty receive tries again.
///
/// It also turns readable when every publisher has gone (dropped, or its process died:
/// the watcher looks every 100 ms while another process holds a publisher slot), so the
/// loop's next receive returns [`ReceiveError::Disconnected`](crate::ReceiveError::Disconnected)
/// once, and then finds nothing and arms again.
///
/// Receive until empty each time it is readable: a receive that stops while messages
/// remain does not arm, and the descriptor stays readable.
///
/// ```no_run
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// use std::os::fd::AsRawFd;
/// let channel = salias::FifoMpsc::<Tick>::connect("quotes")?;
/// let mut subscriber = channel.subscriber()?;
/// // A raw epoll loop (libc); mio's `SourceFd(&subscriber.as_raw_fd())` works the same.
/// // SAFETY: epoll_create1 takes no pointers.
/// let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
/// let mut event = libc::epoll_event { events: libc::EPOLLIN as u32, u64: 1 };
/// // SAFETY: `event` is a valid epoll_event for the call; the kernel copies it.
/// unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, subscriber.as_raw_fd(), &mut event) };
/// loop {
///     // Drain each time: the descriptor arms again only once a receive finds nothing.
///     while let Some(tick) = subscriber.try_recv()? {
///         println!("{}", tick.seq);
///     }
///     let mut ready = [libc::epoll_event { events: 0, u64: 0 }; 8];
///     // SAFETY: `ready` has room for the 8 events the kernel may write.
///     unsafe { libc::epoll_wait(epoll, ready.as_mut_ptr(), 8, -1) };
/// }
/// # Ok::<(), salias::Error>(())
/// ```
impl<T: Payload, M: Mode, K: Topology> AsFd for Subscriber<T, M, K> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.readiness
            .fd(&self.shared, || self.any_ready() || self.departure_visible())
    }
}

/// The raw form of [`AsFd`](#impl-AsFd-for-Subscriber<T,+M,+K>), which starts watching
/// the same way.
impl<T: Payload, M: Mode, K: Topology> AsRawFd for Subscriber<T, M, K> {
    fn as_raw_fd(&self) -> RawFd {
        self.readiness
            .fd(&self.shared, || self.any_ready() || self.departure_visible())
            .as_raw_fd()
    }
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// A receive found nothing (and released everything): arms the descriptor if watched.
    #[inline(always)]
    pub(super) fn drained(&self) {
        self.readiness
            .found_nothing(&self.shared, || self.any_ready() || self.departure_visible());
    }

    /// After releasing room: wakes publishers waiting for it, if any (`wait::wake_sleepers`
    /// on the room line).
    #[inline(always)]
    pub(super) fn wake_publishers(&self) {
        wait::wake_sleepers(self.room.get(), self.barrier_reaches_us, || {
            #[cfg(salias_testing)]
            crate::readiness::count_room_wake();
        });
    }
}
