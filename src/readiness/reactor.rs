//! A handle's registration with a tokio runtime's reactor: its readiness descriptor,
//! watched by `AsyncFd`, kept across waits and moved when the handle is awaited in
//! another runtime.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{Context, Poll};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::runtime::{self, Handle};

use crate::handle_error::{PublishError, ReceiveError};

/// The number of a descriptor its handle owns. `AsyncFd` wants to own something that has
/// a descriptor; it must not own (and close) the handle's.
struct Borrowed(RawFd);

impl AsRawFd for Borrowed {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// Why a handle could not wait in tokio; becomes the handle's own error type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Problem {
    NoRuntime,
    ShutDown,
    Refused,
}

impl From<Problem> for ReceiveError {
    fn from(problem: Problem) -> Self {
        match problem {
            Problem::NoRuntime => ReceiveError::NoRuntime,
            Problem::ShutDown => ReceiveError::RuntimeShutDown,
            Problem::Refused => ReceiveError::Reactor,
        }
    }
}

impl From<Problem> for PublishError {
    fn from(problem: Problem) -> Self {
        match problem {
            Problem::NoRuntime => PublishError::NoRuntime,
            Problem::ShutDown => PublishError::RuntimeShutDown,
            Problem::Refused => PublishError::Reactor,
        }
    }
}

impl Problem {
    fn of(error: &io::Error) -> Problem {
        if runtime::is_rt_shutdown_err(error) {
            Problem::ShutDown
        } else {
            Problem::Refused
        }
    }
}

/// One handle's registration: registered on the first wait, with the runtime that wait
/// ran in, and kept for later waits there, so a wait costs no `epoll_ctl`. A wait in
/// another runtime moves it (a registration only ever wakes tasks through its own
/// runtime's driver, which may no longer be driven).
///
/// The handle must drop this before it closes the descriptor: deregistering a number
/// already closed could remove a newer descriptor of the same number from the epoll set.
#[derive(Default)]
pub(crate) struct Reactor {
    registered: Option<(AsyncFd<Borrowed>, runtime::Id)>,
}

impl Reactor {
    /// `Ready(Ok(()))` once `fd` has become readable since the last `Ready` (the readiness
    /// is consumed: the caller looks for work and, finding none, re-arms `fd` and polls
    /// again); `Pending` with `cx`'s waker kept until then.
    ///
    /// tokio watches edge-triggered and caches readiness. It is cleared here, before the
    /// caller looks again, never after: an edge that arrives after the clear sets it again
    /// (tokio's clear compares a tick and keeps readiness from a newer event), so it either
    /// makes the next poll `Ready` or wakes the stored waker. The caller's empty look
    /// re-arms `fd` (drains it; the next commit writes it again, which is a new edge), so a
    /// message committed after that look always produces an edge after the clear.
    pub(crate) fn poll_readable(&mut self, fd: RawFd, cx: &mut Context<'_>) -> Poll<Result<(), Problem>> {
        let runtime = Handle::try_current().map_err(|_| Problem::NoRuntime)?.id();
        let watched = match &mut self.registered {
            Some((watched, id)) if *id == runtime => watched,
            registered => {
                // Deregister from the former runtime before registering with this one.
                *registered = None;
                // SAFETY: `fd` is the handle's readiness descriptor, open and the same
                // file description for the handle's whole life (the handle never replaces
                // it); this registration lives inside the handle, which drops it
                // (`release`) before it closes the descriptor, so `fd` outlives it.
                let registered_fd = unsafe { AsyncFd::register_with_interest(Borrowed(fd), Interest::READABLE) };
                let watched = registered_fd.map_err(|e| Problem::of(&e.into()))?;
                &mut registered.insert((watched, runtime)).0
            }
        };
        match watched.poll_read_ready(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(mut guard)) => {
                guard.clear_ready();
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => {
                // Its runtime is gone or going: the next wait registers afresh.
                self.registered = None;
                Poll::Ready(Err(Problem::of(&error)))
            }
        }
    }

    /// Deregisters now (the handle is about to close its descriptor).
    pub(crate) fn release(&mut self) {
        self.registered = None;
    }
}
