//! Linux: MAP_POPULATE, hugetlbfs, NUMA binding, futex sleeping and an asymmetric barrier
//! (membarrier) that keeps the publisher's wake check free of fences.

use std::ffi::c_void;
use std::path::Path;
use std::sync::OnceLock;

use rustix::io::Errno;
use rustix::mm::MapFlags;
use rustix::thread::{MembarrierCommand, MembarrierQuery};

use super::Barrier;
pub(crate) use super::futex::{wait, wake_all};
use crate::error::{Error, Result};

pub(crate) const POPULATE: MapFlags = MapFlags::POPULATE;
pub(crate) const WAKE_PROTOCOL: u32 = crate::wire::layout::WAKE_BY_BARRIER;

const HUGETLBFS_MAGIC: i64 = 0x9584_58f6;

/// Checks that `dir` is a hugetlbfs mount serving pages of `page_size` bytes.
pub(crate) fn check_hugetlbfs(dir: &Path, page_size: usize) -> Result<()> {
    let shown = dir.display().to_string();
    let fs = rustix::fs::statfs(dir).map_err(|e| {
        Error::platform("statfs", &shown, e).with_hint(format!(
            "huge pages need a hugetlbfs mount there (`mount -t hugetlbfs -o pagesize={} none {shown}`) or SALIAS_HUGETLBFS_DIR pointing at one",
            page_label(page_size)
        ))
    })?;
    if fs.f_type as i64 != HUGETLBFS_MAGIC {
        return Err(Error::platform_check(
            "statfs",
            &shown,
            format!(
                "it is not a hugetlbfs mount, so huge pages cannot be had there; mount one (`mount -t hugetlbfs -o pagesize={} none {shown}`) or set SALIAS_HUGETLBFS_DIR",
                page_label(page_size)
            ),
        ));
    }
    if fs.f_bsize as usize != page_size {
        return Err(Error::platform_check(
            "statfs",
            &shown,
            format!(
                "this hugetlbfs mount serves {}-byte pages, not {page_size}; mount one with `-o pagesize={}`",
                fs.f_bsize,
                page_label(page_size)
            ),
        ));
    }
    Ok(())
}

fn page_label(size: usize) -> &'static str {
    if size >= 1 << 30 { "1G" } else { "2M" }
}

/// Binds `[addr, addr + len)` to NUMA node `node`, moving nothing (the pages are new).
///
/// # Safety
/// `addr..addr + len` must be a mapping owned by the caller.
pub(crate) unsafe fn bind_numa(addr: *mut c_void, len: usize, node: u32) -> Result<(), Errno> {
    const MPOL_BIND: libc::c_long = 2;
    const MPOL_MF_STRICT: libc::c_ulong = 1;
    let mut mask = [0 as libc::c_ulong; 16];
    let bits = libc::c_ulong::BITS as usize;
    let node = node as usize;
    if node >= mask.len() * bits {
        return Err(Errno::INVAL);
    }
    mask[node / bits] |= 1 << (node % bits);
    // SAFETY: the caller guarantees the range is its own mapping; `mask` outlives the call
    // and `maxnode` matches its size in bits.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len,
            MPOL_BIND,
            mask.as_ptr(),
            (mask.len() * bits) as libc::c_ulong,
            MPOL_MF_STRICT,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(Errno::from_raw_os_error(
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        ))
    }
}

/// Backs `[0, len)` of a tmpfs or hugetlbfs file with pages now (`fallocate`), so a
/// channel that does not fit fails at `create` with `ENOSPC`.
pub(crate) fn reserve(fd: std::os::fd::BorrowedFd<'_>, len: u64) -> Result<(), Errno> {
    rustix::fs::fallocate(fd, rustix::fs::FallocateFlags::empty(), 0, len)
}

fn expedited_supported() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        let query = rustix::thread::membarrier_query();
        query.contains(MembarrierQuery::GLOBAL_EXPEDITED | MembarrierQuery::REGISTER_GLOBAL_EXPEDITED)
    })
}

/// Called once per publishing process: lets sleepers' [`heavy_barrier`] reach it.
/// Returns whether it does; a publisher in a process it does not reach must fence for
/// itself before it looks for sleepers.
pub(crate) fn register_fast_side() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        expedited_supported() && rustix::thread::membarrier(MembarrierCommand::RegisterGlobalExpedited).is_ok()
    })
}

/// Acts as a full fence in every running thread of every registered process, at some
/// point during the call: so either such a thread's loads after that point see the
/// caller's earlier stores, or the caller's later loads see that thread's stores from
/// before it. [`Barrier::Failed`] where the kernel cannot do it; then a sleeper must wake
/// up on its own now and then.
///
/// Never [`Barrier::NotNeeded`], even where this process finds no expedited membarrier:
/// support is a property of each process (a seccomp filter can refuse the call to one
/// and allow it to another), so a publisher elsewhere may have registered and count on
/// the barrier.
pub(crate) fn heavy_barrier() -> Barrier {
    if expedited_supported() && rustix::thread::membarrier(MembarrierCommand::GlobalExpedited).is_ok() {
        Barrier::Done
    } else {
        Barrier::Failed
    }
}
