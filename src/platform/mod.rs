//! The operating-system layer: shared-memory objects, the double-mapped ("magic") ring,
//! process identity, and sleeping until woken.
//!
//! `native` is the Linux layer (MAP_POPULATE, hugetlbfs, NUMA, futex, membarrier) on Linux
//! and the portable POSIX layer elsewhere (macOS: wait-on-address, no barrier).
//! `--cfg salias_portable` selects the portable layer on Linux too, with the futex as its
//! wait-on-address, so the logic macOS runs is tested here. The two wake sleepers
//! differently, so a channel records its creator's layer (`WAKE_PROTOCOL`) and `connect`
//! refuses the other one.

use std::ffi::c_void;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::time::Duration;

use rustix::fs::Mode as FileMode;
use rustix::io::Errno;
use rustix::mm::{MapFlags, MprotectFlags, ProtFlags};
#[cfg(not(target_os = "linux"))]
use rustix::shm;

use crate::error::{Error, Result};
use crate::wire::ring::{ReadOnly, Ring};

#[cfg(target_os = "linux")]
mod futex;
mod guard;
#[cfg(target_os = "macos")]
mod macos_wait;
mod names;
mod numa;
mod process;
pub(crate) use guard::{Guarded, Health, INHERITED, TRUNCATED, Unhealthy, check_cell};
pub(crate) use names::ObjectNames;
pub(crate) use numa::check_numa_node;
pub(crate) use process::{Identity, holder_alive, token_alive, token_pid};

#[cfg(all(target_os = "linux", not(salias_portable)))]
#[path = "linux.rs"]
mod native;
#[cfg(any(not(target_os = "linux"), salias_portable))]
#[path = "portable.rs"]
mod native;

#[cfg(any(not(target_os = "linux"), salias_portable))]
pub(crate) use native::NAME as PLATFORM_NAME;
pub(crate) use native::{WAKE_PROTOCOL, check_hugetlbfs, heavy_barrier, register_fast_side, wait, wake_all};

/// What a sleeper's `heavy_barrier` achieved, which decides whether it may sleep until
/// woken (SYNC POINT sleeper-registration, `protocol::announce_sleep`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Barrier {
    /// The barrier ran: it acted as a full fence in the sleeper's thread and in every
    /// thread of every process registered for it (`register_fast_side`), so publishers
    /// that rely on it with only a compiler fence cannot miss this sleeper.
    #[cfg_attr(
        any(not(target_os = "linux"), salias_portable),
        allow(dead_code, reason = "the Linux layer's barrier")
    )]
    Done,
    /// This layer has no barrier and no process can register for one, so every publisher
    /// runs a full fence of its own before it looks for sleepers. The sleeper must run its
    /// own full fence too (the two fences make the Dekker pair); then it cannot be missed.
    #[cfg_attr(
        all(target_os = "linux", not(salias_portable)),
        allow(dead_code, reason = "the portable layer has no barrier")
    )]
    NotNeeded,
    /// The barrier exists but could not run: a publisher relying on it may miss this
    /// sleeper, so the sleep must end on its own soon.
    Failed,
}

/// Sleeps at most `timeout` and at most 500 µs, woken by nothing: what a wait does when
/// the system's wait call failed in a way it may keep failing (returning at once, it would
/// have the caller spin), or where there is no wait-on-address. Long enough not to spin,
/// short enough to bound the delay before the caller sees a commit.
fn nap(timeout: Duration) {
    std::thread::sleep(timeout.min(Duration::from_micros(500)));
}

/// The system's normal page size.
pub(crate) fn page_size() -> usize {
    rustix::param::page_size()
}

/// Where Linux keeps shared-memory objects as files.
#[cfg(target_os = "linux")]
pub(crate) const SHM_DIR: &str = "/dev/shm";

/// The file behind shared-memory object `os_name` (which starts with `/`).
#[cfg(target_os = "linux")]
fn shm_path(os_name: &str) -> String {
    format!("{SHM_DIR}{os_name}")
}

/// Creates a new shared-memory object; fails with `EEXIST` if the name is taken, even by
/// a symlink (`O_EXCL` never follows one).
pub(crate) fn shm_create(os_name: &str, permissions: u32) -> std::result::Result<OwnedFd, Errno> {
    let mode = FileMode::from_bits_truncate(permissions as _);
    #[cfg(target_os = "linux")]
    let fd = rustix::fs::open(
        shm_path(os_name),
        rustix::fs::OFlags::CREATE
            | rustix::fs::OFlags::EXCL
            | rustix::fs::OFlags::RDWR
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::CLOEXEC,
        mode,
    )?;
    #[cfg(not(target_os = "linux"))]
    let fd = shm::open(
        os_name,
        shm::OFlags::CREATE | shm::OFlags::EXCL | shm::OFlags::RDWR,
        mode,
    )?;
    // The umask may have cleared bits the caller asked for; set exactly what was configured.
    rustix::fs::fchmod(&fd, mode)?;
    Ok(fd)
}

/// Opens an existing shared-memory object for reading and writing. On Linux the object is
/// a file in /dev/shm, where anyone may plant a symlink: `O_NOFOLLOW` refuses one
/// (`ELOOP`) instead of opening whatever it points to. (rustix's `shm::open` omits the
/// flag, so the file is opened directly.)
pub(crate) fn shm_open(os_name: &str) -> std::result::Result<OwnedFd, Errno> {
    #[cfg(target_os = "linux")]
    return rustix::fs::open(
        shm_path(os_name),
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC,
        FileMode::empty(),
    );
    #[cfg(not(target_os = "linux"))]
    return shm::open(os_name, shm::OFlags::RDWR, FileMode::empty());
}

/// Removes a shared-memory object's name; existing mappings stay valid.
pub(crate) fn shm_unlink(os_name: &str) -> std::result::Result<(), Errno> {
    #[cfg(target_os = "linux")]
    return rustix::fs::unlink(shm_path(os_name));
    #[cfg(not(target_os = "linux"))]
    return shm::unlink(os_name);
}

/// Removes `os_name` only if it still names the object `id` (another channel may have
/// taken the name since). The check and the unlink are two steps; a name swapped between
/// them needs a process that can already unlink our objects.
pub(crate) fn shm_unlink_if(os_name: &str, id: ObjectId) {
    if shm_open(os_name).is_ok_and(|fd| object_id(fd.as_fd()) == Ok(id)) {
        let _ = shm_unlink(os_name);
    }
}

/// What an object is, across names: its device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ObjectId {
    pub device: u64,
    pub inode: u64,
}

/// Who owns an open object and what it grants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ObjectFacts {
    pub id: ObjectId,
    pub len: u64,
    pub uid: u32,
    /// Permission bits only (`0o777`).
    pub mode: u32,
    pub regular: bool,
}

pub(crate) fn object_facts(fd: BorrowedFd<'_>) -> std::result::Result<ObjectFacts, Errno> {
    let stat = rustix::fs::fstat(fd)?;
    Ok(ObjectFacts {
        id: ObjectId {
            device: stat.st_dev as u64,
            inode: stat.st_ino as u64,
        },
        len: stat.st_size as u64,
        uid: stat.st_uid,
        mode: stat.st_mode as u32 & 0o777,
        regular: rustix::fs::FileType::from_raw_mode(stat.st_mode as _) == rustix::fs::FileType::RegularFile,
    })
}

pub(crate) fn object_id(fd: BorrowedFd<'_>) -> std::result::Result<ObjectId, Errno> {
    object_facts(fd).map(|facts| facts.id)
}

/// The effective user id of this process.
pub(crate) fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The size of an open object in bytes.
pub(crate) fn object_len(fd: BorrowedFd<'_>) -> std::result::Result<u64, Errno> {
    Ok(rustix::fs::fstat(fd)?.st_size as u64)
}

/// Why memory for an object could not be reserved.
pub(crate) enum ReserveError {
    /// The filesystem has too little free space: the bytes it has, and its name.
    NoSpace {
        available: u64,
        filesystem: String,
    },
    Other(Errno),
}

/// Backs the first `len` bytes of a freshly sized object with memory now, so running out
/// shows here as an error instead of as SIGBUS in the first process to touch a page.
pub(crate) fn reserve(fd: BorrowedFd<'_>, len: u64, filesystem: &str) -> std::result::Result<(), ReserveError> {
    match native::reserve(fd, len) {
        Ok(()) => Ok(()),
        Err(Errno::NOSPC) => Err(ReserveError::NoSpace {
            available: rustix::fs::fstatvfs(fd)
                .map(|fs| fs.f_bavail.saturating_mul(fs.f_frsize))
                .unwrap_or(0),
            filesystem: filesystem.to_owned(),
        }),
        Err(e) => Err(ReserveError::Other(e)),
    }
}

/// Free huge pages of `page` bytes in the kernel's pool, where the system says.
pub(crate) fn free_huge_pages(page: usize) -> Option<u64> {
    let path = format!("/sys/kernel/mm/hugepages/hugepages-{}kB/free_hugepages", page / 1024);
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Where the channels' shared-memory objects live, for messages.
pub(crate) fn shm_filesystem() -> &'static str {
    #[cfg(target_os = "linux")]
    return SHM_DIR;
    #[cfg(not(target_os = "linux"))]
    return "POSIX shared memory";
}

/// A control object mapped whole, registered with the channel's [`Health`] so a peer that
/// truncates it poisons the channel instead of killing this process.
pub(crate) struct ControlMap {
    base: NonNull<u8>,
    len: usize,
    guard: Option<Guarded>,
}

// SAFETY: plain shared memory owned by this value; all access to it goes through atomics
// or validated volatile copies.
unsafe impl Send for ControlMap {}
// SAFETY: as above.
unsafe impl Sync for ControlMap {}

impl ControlMap {
    pub(crate) fn map(fd: BorrowedFd<'_>, len: usize, health: &Health, object: &str) -> Result<Self> {
        // SAFETY: a fresh shared mapping at an address of the kernel's choosing; it aliases
        // nothing. Pages past the object's end fault, which the guard registered below turns
        // into a poisoned channel.
        let base = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                fd,
                0,
            )
        }
        .map_err(|e| Error::platform("mmap (control block)", object, e))?;
        let mut map = ControlMap {
            // SAFETY: a successful mmap never returns null.
            base: unsafe { NonNull::new_unchecked(base.cast()) },
            len,
            guard: None,
        };
        map.guard = Some(health.register(map.base.as_ptr(), len, page_size())?);
        Ok(map)
    }

    #[inline(always)]
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for ControlMap {
    fn drop(&mut self) {
        // Unregistered before the mapping goes.
        self.guard = None;
        // SAFETY: mapped by `map`; every handle borrowing it holds the owner of this value.
        unsafe {
            let _ = rustix::mm::munmap(self.base.as_ptr().cast(), self.len);
        }
    }
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

/// The block a ring's views are aligned to when its size allows: the PMD size of x86-64 and
/// aarch64 with 4 KiB pages, the size of a transparent huge page.
const THP_BLOCK: usize = 2 << 20;

/// One ring mapped twice back to back: `[base, base + capacity)` and
/// `[base + capacity, base + 2·capacity)` show the same pages, so a frame that starts near
/// the end of the ring can be read and written as one contiguous slice.
pub(crate) struct MagicRing {
    base: NonNull<u8>,
    capacity: usize,
    guard: Option<Guarded>,
}

// SAFETY: the value owns the mapping and only hands out views of it, whose accesses
// (atomic, or bound by the contracts of `wire::ring`'s unsafe methods) are sound from any
// thread; changing the protection is one system call the kernel serialises.
unsafe impl Send for MagicRing {}
// SAFETY: as above.
unsafe impl Sync for MagicRing {}

impl MagicRing {
    /// Maps `capacity` bytes of `fd` starting at `offset` twice in a row.
    pub(crate) fn map(
        fd: BorrowedFd<'_>,
        offset: u64,
        capacity: usize,
        options: &RingOptions,
        health: &Health,
        object: &str,
    ) -> Result<Self> {
        let page = options.huge_page.unwrap_or_else(page_size);
        // A ring of whole 2 MiB blocks at a 2 MiB offset starts its views on a 2 MiB
        // boundary, so where the kernel gives the object transparent huge pages (a tmpfs
        // mounted `huge=within_size` or `always`) it can map them whole: the two views of a
        // 64 MiB ring then need 64 TLB entries instead of 32,768. Misaligned views get the
        // huge pages but map them 4 KiB at a time. Costs 2 MiB of address space, given back
        // below.
        let align = if capacity.is_multiple_of(THP_BLOCK) && offset.is_multiple_of(THP_BLOCK as u64) {
            page.max(THP_BLOCK)
        } else {
            page
        };
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
        if head > 0 {
            // SAFETY: the head lies inside the reservation made above and nothing uses it.
            let _ = unsafe { rustix::mm::munmap(start as *mut c_void, head) };
        }
        if tail > 0 {
            // SAFETY: the tail lies inside the reservation made above and nothing uses it.
            let _ = unsafe { rustix::mm::munmap(tail_start as *mut c_void, tail) };
        }
        let mut ring = MagicRing {
            // SAFETY: `base` is inside a successful mapping, so it is not null.
            base: unsafe { NonNull::new_unchecked(base as *mut u8) },
            capacity,
            guard: None,
        };
        // Before the first page is touched: a ring object already shrunk faults right away.
        ring.guard = Some(health.register(ring.base(), 2 * capacity, page)?);
        let flags = MapFlags::SHARED | MapFlags::FIXED;
        for view in 0..2 {
            let populate = options.populate && (view == 1 || options.numa_node.is_none());
            let extra = if populate { native::POPULATE } else { MapFlags::empty() };
            let at = (base + view * capacity) as *mut c_void;
            // SAFETY: `at..at + capacity` is inside our own reservation (MAP_FIXED replaces
            // only our PROT_NONE pages); `fd` is a shared-memory object at least
            // `offset + capacity` bytes long, checked by the caller.
            unsafe {
                rustix::mm::mmap(at, capacity, ProtFlags::READ, flags | extra, fd, offset)
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
                        // SAFETY: the first view was just mapped, `capacity` bytes.
                        unsafe { touch_pages(ring.base.as_ptr(), capacity, page) };
                    }
                } else if options.populate && native::POPULATE.is_empty() {
                    // SAFETY: as above.
                    unsafe { touch_pages(ring.base.as_ptr(), capacity, page) };
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

    /// The ring as this process may access it: read-only until `make_writable`.
    ///
    /// # Safety
    /// The view must not be used after this `MagicRing` is dropped (handles keep the
    /// `Arc<Shared>` that owns it next to their views).
    pub(crate) unsafe fn view(&self) -> Ring<ReadOnly> {
        // SAFETY: `map` made two adjacent views of `capacity` bytes (a power of two, a
        // page multiple) at an address aligned to the page; the caller keeps them mapped.
        unsafe { Ring::new(self.base, self.capacity) }
    }

    /// Maps both views writable, for the publisher that holds the ring's slot, and asks
    /// for its pages writable now rather than one fault each on the first lap.
    pub(crate) fn make_writable(&self, object: &str) -> Result<()> {
        // SAFETY: the range is exactly the two views `map` made and this value owns.
        unsafe {
            rustix::mm::mprotect(
                self.base.as_ptr().cast(),
                2 * self.capacity,
                MprotectFlags::READ | MprotectFlags::WRITE,
            )
        }
        .map_err(|e| Error::platform("mprotect (publisher's ring writable)", object, e))?;
        #[cfg(target_os = "linux")]
        // SAFETY: as above; populating changes no contents. Both views: a frame that wraps
        // is written through the second. A hint: older kernels refuse it, and the pages
        // then fault in on first write as before.
        let _ = unsafe {
            rustix::mm::madvise(
                self.base.as_ptr().cast(),
                2 * self.capacity,
                rustix::mm::Advice::LinuxPopulateWrite,
            )
        };
        Ok(())
    }

    /// Maps both views read-only again, once this process's publisher left the slot.
    pub(crate) fn make_read_only(&self) {
        // SAFETY: as for `make_writable`. Failure leaves the ring writable, which only
        // forgoes the protection: nothing writes to it any more.
        let _ = unsafe { rustix::mm::mprotect(self.base.as_ptr().cast(), 2 * self.capacity, MprotectFlags::READ) };
    }
}

impl Drop for MagicRing {
    fn drop(&mut self) {
        // Unregistered before the mapping goes.
        self.guard = None;
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
///
/// # Safety
/// `base..base + len` must be a live mapping owned by the caller (a fault in a truncated
/// salias mapping is caught by the guard and poisons the channel).
pub(crate) unsafe fn touch_pages(base: *const u8, len: usize, page: usize) {
    let mut offset = 0;
    while offset < len {
        // SAFETY: `base..base + len` is a live mapping (caller).
        unsafe { base.wrapping_add(offset).read_volatile() };
        offset += page;
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Maps a ring of `capacity` bytes at `offset` of a fresh /dev/shm file and returns
    /// where its views start.
    fn mapped_base(capacity: usize, offset: u64) -> usize {
        let path = format!("/dev/shm/salias-unit-align-{}-{capacity}-{offset}", std::process::id());
        let file = std::fs::File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        file.set_len(offset + capacity as u64).unwrap();
        let health = Health::new("unit-align").unwrap();
        let options = RingOptions {
            huge_page: None,
            numa_node: None,
            populate: false,
        };
        let ring = MagicRing::map(file.as_fd(), offset, capacity, &options, &health, "unit-align").unwrap();
        ring.base() as usize
    }

    #[test]
    fn rings_of_whole_2mib_blocks_start_on_a_2mib_boundary() {
        // Kernels that align large anonymous mappings themselves may pass this without the
        // change; those that align only lengths of whole 2 MiB blocks (the reservation is
        // 2·capacity plus one page without it) do not.
        for (capacity, offset) in [(2 << 20, 0), (4 << 20, 4 << 20), (64 << 20, 0)] {
            assert_eq!(
                mapped_base(capacity, offset) % THP_BLOCK,
                0,
                "{capacity} bytes at {offset}"
            );
        }
    }
}
