//! The portable POSIX layer (macOS, and Linux built with `--cfg salias_portable`): normal pages,
//! pages faulted in by touching them, and sleeping on an address until woken (macOS's
//! wait-on-address, Linux's futex) with no process-wide barrier: every publisher fences
//! for itself before it looks for sleepers.

use std::ffi::c_void;
use std::path::Path;

use rustix::io::Errno;
use rustix::mm::MapFlags;

use super::Barrier;
#[cfg(target_os = "linux")]
pub(crate) use super::futex::{wait, wake_all};
#[cfg(target_os = "macos")]
pub(crate) use super::macos_wait::{wait, wake_all};
use crate::error::{Error, Result};

#[cfg(target_os = "macos")]
pub(crate) const NAME: &str = "macOS";
#[cfg(not(target_os = "macos"))]
pub(crate) const NAME: &str = "the portable platform layer";

pub(crate) const POPULATE: MapFlags = MapFlags::empty();
pub(crate) const WAKE_PROTOCOL: u32 = crate::wire::layout::WAKE_BY_FENCES;

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

/// Whether `wait` sleeps until `wake_all` wakes it; elsewhere it only naps.
const WOKEN: bool = cfg!(any(target_os = "linux", target_os = "macos"));

/// Elsewhere (no wait-on-address the layer knows): naps, bounding the wake-up delay.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(crate) fn wait(_word: &std::sync::atomic::AtomicU32, _expected: u32, timeout: std::time::Duration) {
    super::nap(timeout);
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(crate) fn wake_all(_word: &std::sync::atomic::AtomicU32) {}

/// Whether a sleeper's barrier reaches this publishing process: never, there is none. So
/// every publisher runs a full fence before it looks for sleepers (`sleepers_present`),
/// which lets a sleeper sleep until woken with only its own fence (`heavy_barrier`).
/// Where `wait` only naps, nobody sleeps long enough to need either.
pub(crate) fn register_fast_side() -> bool {
    !WOKEN
}

/// There is no process-wide barrier, and none is needed: no process registers for one
/// (`register_fast_side`), so every publisher fences for itself. Where `wait` naps, a
/// sleep is never reliable ([`Barrier::Failed`] caps it).
pub(crate) fn heavy_barrier() -> Barrier {
    if WOKEN { Barrier::NotNeeded } else { Barrier::Failed }
}
