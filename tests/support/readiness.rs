//! What the readiness tests share (tests/readiness*.rs include it by path; it needs the
//! `rustix` dev-dependency, which the tool's tests, sharing `support`, do not have).
#![allow(dead_code)] // each test binary uses its own subset

use std::os::fd::AsFd;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};

/// How long a wake-up may take to arrive on a loaded machine before a test fails.
pub const ARRIVAL: Duration = Duration::from_secs(10);

/// Whether `fd` is readable within `wait` (zero: right now), by poll(2).
pub fn readable(fd: &impl AsFd, wait: Duration) -> bool {
    let timeout = Timespec {
        tv_sec: wait.as_secs() as _,
        tv_nsec: wait.subsec_nanos() as _,
    };
    let mut fds = [PollFd::new(fd, PollFlags::IN)];
    let n = rustix::event::poll(&mut fds, Some(&timeout)).expect("poll");
    n == 1 && fds[0].revents().contains(PollFlags::IN)
}

/// Whether the kernel has the expedited membarrier that makes arming certain; without it
/// (and on the portable layer) an armed handle re-checks after every nap, by design.
pub fn barrier_available() -> bool {
    #[cfg(all(target_os = "linux", not(salias_portable)))]
    {
        const QUERY: libc::c_long = 0;
        const NEEDED: libc::c_long = (1 << 1) | (1 << 2);
        // SAFETY: MEMBARRIER_CMD_QUERY only returns a bit mask; it reads and writes no memory.
        let supported = unsafe { libc::syscall(libc::SYS_membarrier, QUERY, 0) };
        supported >= 0 && supported & NEEDED == NEEDED
    }
    #[cfg(not(all(target_os = "linux", not(salias_portable))))]
    false
}
