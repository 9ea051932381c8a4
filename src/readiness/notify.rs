//! A handle's local wake descriptor: readable once signalled, until drained. An eventfd
//! on Linux; a non-blocking pipe elsewhere (macOS, and Linux built with `--cfg salias_portable`,
//! so the code macOS runs is tested here).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::io::Errno;

/// The descriptor an event loop watches, and the means to make it readable.
pub(crate) struct NotifyFd {
    /// The end an event loop polls.
    read: OwnedFd,
    /// The end written to signal (the pipe's other end; unused for an eventfd).
    #[cfg(any(not(target_os = "linux"), salias_portable))]
    write: OwnedFd,
}

impl NotifyFd {
    /// A new descriptor, not readable, closed on exec.
    #[cfg(all(target_os = "linux", not(salias_portable)))]
    pub(crate) fn new() -> Result<Self, Errno> {
        use rustix::event::{EventfdFlags, eventfd};
        let read = eventfd(0, EventfdFlags::NONBLOCK | EventfdFlags::CLOEXEC)?;
        Ok(NotifyFd { read })
    }

    /// A new descriptor, not readable, closed on exec. macOS has no `pipe2`: the flags
    /// are set right after; nothing can exec in between in a library that spawns nothing.
    #[cfg(any(not(target_os = "linux"), salias_portable))]
    pub(crate) fn new() -> Result<Self, Errno> {
        use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
        use rustix::io::{FdFlags, fcntl_setfd};
        let (read, write) = rustix::pipe::pipe()?;
        for end in [&read, &write] {
            fcntl_setfd(end, FdFlags::CLOEXEC)?;
            fcntl_setfl(end, fcntl_getfl(end)? | OFlags::NONBLOCK)?;
        }
        Ok(NotifyFd { read, write })
    }

    /// Makes the descriptor readable. A full pipe or a saturated counter (`EAGAIN`)
    /// already reads readable, so nothing is lost by ignoring it.
    pub(crate) fn signal(&self) {
        #[cfg(all(target_os = "linux", not(salias_portable)))]
        let _ = rustix::io::write(&self.read, &1u64.to_ne_bytes());
        #[cfg(any(not(target_os = "linux"), salias_portable))]
        let _ = rustix::io::write(&self.write, &[1]);
    }

    /// Reads everything signalled so far, so the descriptor reads not ready.
    pub(crate) fn drain(&self) {
        let mut buf = [0u8; 64];
        // An eventfd's one read resets its counter; a pipe is read until empty (EAGAIN).
        loop {
            match rustix::io::read(&self.read, &mut buf) {
                Ok(n) if n == buf.len() => continue,
                Err(Errno::INTR) => continue,
                _ => return,
            }
        }
    }
}

impl AsFd for NotifyFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.read.as_fd()
    }
}
