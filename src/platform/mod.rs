//! The operating-system layer: shared-memory objects, the double-mapped ("magic") ring,
//! process identity, and sleeping until woken.
//!
//! `native` is the Linux layer (MAP_POPULATE, hugetlbfs, NUMA, futex, membarrier) on Linux
//! and the portable POSIX layer elsewhere. The `portable` cargo feature selects the
//! portable layer on Linux too, so the code macOS runs is tested here.

use std::ffi::c_void;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::ptr::NonNull;

use rustix::fs::Mode as FileMode;
use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};
use rustix::shm;

use crate::error::{Error, Result};

mod process;
pub(crate) use process::{Identity, token_alive, token_pid};

#[cfg(all(target_os = "linux", not(feature = "portable")))]
#[path = "linux.rs"]
mod native;
#[cfg(any(not(target_os = "linux"), feature = "portable"))]
#[path = "portable.rs"]
mod native;

#[cfg(any(not(target_os = "linux"), feature = "portable"))]
pub(crate) use native::NAME as PLATFORM_NAME;
pub(crate) use native::{check_hugetlbfs, heavy_barrier, register_fast_side, wait, wake_all};

/// The system's normal page size.
pub(crate) fn page_size() -> usize {
    rustix::param::page_size()
}

/// The shared-memory object names behind a channel name. Names are hashed so they fit
/// macOS's 31-character limit on any channel name; the control block stores the full name
/// and every open checks it, so a hash collision is detected rather than followed.
pub(crate) struct ObjectNames {
    pub control: String,
    pub rings: String,
    /// File name of the rings inside a hugetlbfs directory.
    pub ring_file: String,
}

impl ObjectNames {
    pub(crate) fn of(name: &str) -> Self {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in name.bytes() {
            hash = (hash ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        ObjectNames {
            control: format!("/salias-{hash:016x}.c"),
            rings: format!("/salias-{hash:016x}.r"),
            ring_file: format!("salias-{hash:016x}.r"),
        }
    }
}

/// Creates a new shared-memory object; fails with `EEXIST` if the name is taken.
pub(crate) fn shm_create(os_name: &str, permissions: u32) -> std::result::Result<OwnedFd, Errno> {
    let mode = FileMode::from_bits_truncate(permissions as _);
    let fd = shm::open(
        os_name,
        shm::OFlags::CREATE | shm::OFlags::EXCL | shm::OFlags::RDWR,
        mode,
    )?;
    // The umask may have cleared bits the caller asked for; set exactly what was configured.
    rustix::fs::fchmod(&fd, mode)?;
    Ok(fd)
}

/// Opens an existing shared-memory object for reading and writing.
pub(crate) fn shm_open(os_name: &str) -> std::result::Result<OwnedFd, Errno> {
    shm::open(os_name, shm::OFlags::RDWR, FileMode::empty())
}

/// Removes a shared-memory object's name; existing mappings stay valid.
pub(crate) fn shm_unlink(os_name: &str) -> std::result::Result<(), Errno> {
    shm::unlink(os_name)
}

/// The size of an open object in bytes.
pub(crate) fn object_len(fd: BorrowedFd<'_>) -> std::result::Result<u64, Errno> {
    Ok(rustix::fs::fstat(fd)?.st_size as u64)
}

/// How to map the rings.
pub(crate) struct RingOptions {
    /// Huge page size when the rings live in hugetlbfs.
    pub huge_page: Option<usize>,
    /// NUMA node to bind the rings' pages to.
    pub numa_node: Option<u32>,
    /// Fault every page in now (the owner does this once, before anyone times anything).
    pub populate: bool,
}

/// One ring mapped twice back to back: `[base, base + capacity)` and
/// `[base + capacity, base + 2·capacity)` show the same pages, so a frame that starts near
/// the end of the ring can be read and written as one contiguous slice.
pub(crate) struct MagicRing {
    base: NonNull<u8>,
    capacity: usize,
}

// SAFETY: the mapping is plain shared memory owned by this value; all access to its
// contents goes through the ring protocol's atomics.
unsafe impl Send for MagicRing {}
// SAFETY: as above; `&MagicRing` only hands out the base pointer.
unsafe impl Sync for MagicRing {}

impl MagicRing {
    /// Maps `capacity` bytes of `fd` starting at `offset` twice in a row.
    pub(crate) fn map(
        fd: BorrowedFd<'_>,
        offset: u64,
        capacity: usize,
        options: &RingOptions,
        object: &str,
    ) -> Result<Self> {
        let align = options.huge_page.unwrap_or_else(page_size);
        let reserve_len = 2 * capacity + align;
        // SAFETY: a fresh anonymous PROT_NONE reservation at an address of the kernel's
        // choosing; it aliases nothing.
        let reserved = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                reserve_len,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )
        }
        .map_err(|e| Error::platform("mmap (reserve ring address space)", object, e))?;
        let start = reserved as usize;
        let base = start.next_multiple_of(align);
        // Give back the unaligned head and the tail beyond the two views.
        let head = base - start;
        let tail_start = base + 2 * capacity;
        let tail = start + reserve_len - tail_start;
        // SAFETY: both ranges lie inside the reservation made above and nothing uses them.
        unsafe {
            if head > 0 {
                let _ = rustix::mm::munmap(start as *mut c_void, head);
            }
            if tail > 0 {
                let _ = rustix::mm::munmap(tail_start as *mut c_void, tail);
            }
        }
        let ring = MagicRing {
            // SAFETY: `base` is inside a successful mapping, so it is not null.
            base: unsafe { NonNull::new_unchecked(base as *mut u8) },
            capacity,
        };
        let flags = MapFlags::SHARED | MapFlags::FIXED;
        for view in 0..2 {
            let populate = options.populate && (view == 1 || options.numa_node.is_none());
            let extra = if populate { native::POPULATE } else { MapFlags::empty() };
            let at = (base + view * capacity) as *mut c_void;
            // SAFETY: `at..at + capacity` is inside our own reservation (MAP_FIXED replaces
            // only our PROT_NONE pages); `fd` is a shared-memory object at least
            // `offset + capacity` bytes long, checked by the caller.
            unsafe {
                rustix::mm::mmap(at, capacity, ProtFlags::READ | ProtFlags::WRITE, flags | extra, fd, offset)
            }
            .map_err(|e| {
                let err = Error::platform("mmap (ring view)", object, e);
                if options.huge_page.is_some() && e == Errno::NOMEM {
                    err.with_hint(
                        "not enough free huge pages; reserve more (e.g. `echo 64 > /proc/sys/vm/nr_hugepages`) or turn huge pages off",
                    )
                } else {
                    err
                }
            })?;
            if view == 0 {
                if let Some(node) = options.numa_node {
                    // SAFETY: the first view was just mapped at `at` with `capacity` bytes.
                    unsafe { native::bind_numa(at, capacity, node) }
                        .map_err(|e| Error::platform("mbind", object, e))?;
                    if options.populate {
                        touch_pages(ring.base.as_ptr(), capacity, align);
                    }
                } else if options.populate && native::POPULATE.is_empty() {
                    touch_pages(ring.base.as_ptr(), capacity, align);
                }
            }
        }
        Ok(ring)
    }

    /// Start of the first view.
    #[inline(always)]
    pub(crate) fn base(&self) -> *mut u8 {
        self.base.as_ptr()
    }
}

impl Drop for MagicRing {
    fn drop(&mut self) {
        // SAFETY: the two views were mapped by `map` and nothing borrows them past the
        // lifetime of this value (handles hold the ring through an `Arc`).
        unsafe {
            let _ = rustix::mm::munmap(self.base.as_ptr().cast(), 2 * self.capacity);
        }
    }
}

/// Reads one byte of every page so it is faulted in (and, for shared memory, allocated)
/// before first use. Reading, never writing: a process connecting to a live channel must
/// not disturb frames already in the ring.
pub(crate) fn touch_pages(base: *const u8, len: usize, page: usize) {
    let mut offset = 0;
    while offset < len {
        // SAFETY: `base..base + len` is a live mapping owned by the caller.
        unsafe { base.add(offset).read_volatile() };
        offset += page;
    }
}
