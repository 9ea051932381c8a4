//! The portable POSIX layer (macOS, and Linux with the `portable` feature): normal pages,
//! pages faulted in by touching them, and sleeping by short naps instead of a futex.

use std::ffi::c_void;
use std::path::Path;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use rustix::io::Errno;
use rustix::mm::MapFlags;

use crate::error::{Error, Result};

#[cfg(target_os = "macos")]
pub(crate) const NAME: &str = "macOS";
#[cfg(not(target_os = "macos"))]
pub(crate) const NAME: &str = "the portable platform layer";

pub(crate) const POPULATE: MapFlags = MapFlags::empty();

/// Longest nap while waiting: bounds the wake-up delay since there is nothing to wake us.
const MAX_NAP: Duration = Duration::from_micros(500);

pub(crate) fn check_hugetlbfs(_dir: &Path, _page_size: usize) -> Result<()> {
    Err(Error::Unsupported {
        feature: "huge pages",
        platform: NAME,
    })
}

/// # Safety
/// Never dereferences anything; NUMA binding is not available here.
pub(crate) unsafe fn bind_numa(_addr: *mut c_void, _len: usize, _node: u32) -> Result<(), Errno> {
    Err(Errno::NOSYS)
}

/// Backs `[0, len)` with memory now where the system can. Linux's shared memory is a
/// size-limited tmpfs, so `fallocate` reserves it there too. macOS cannot reserve a
/// shared-memory object (its `ftruncate` is the only size call it takes): its pages come
/// from the virtual-memory system on first touch, where a shortage is memory pressure, not
/// a fault.
pub(crate) fn reserve(fd: std::os::fd::BorrowedFd<'_>, len: u64) -> Result<(), Errno> {
    #[cfg(target_os = "linux")]
    return rustix::fs::fallocate(fd, rustix::fs::FallocateFlags::empty(), 0, len);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (fd, len);
        Ok(())
    }
}

pub(crate) fn wait(_word: &AtomicU32, _expected: u32, timeout: Duration) {
    std::thread::sleep(timeout.min(MAX_NAP));
}

pub(crate) fn wake_all(_word: &AtomicU32) {}

/// Nobody sleeps until woken here (`wait` naps), so publishers need no fence to look for
/// sleepers.
pub(crate) fn register_fast_side() -> bool {
    true
}

pub(crate) fn heavy_barrier() -> bool {
    false
}
