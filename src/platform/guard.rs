//! Surviving what other processes do to our mappings: a shrunk object and `fork()`.
//!
//! **Shrink.** Any process that may write a channel's objects can `ftruncate` them. Every
//! later access to a page past the new end raises SIGBUS, which would kill each process
//! that has the channel mapped. salias installs one SIGBUS handler per process (chaining to
//! the previous one for every address that is not in a salias mapping). For a fault inside
//! a registered mapping it maps a private zero page over the faulting page, marks the
//! channel's [`Health`] cell `TRUNCATED` and returns, so the interrupted load or store
//! finishes against the zero page. Every handle checks its cell before it acts (and a
//! receive again when it finds nothing, which is what a zeroed ring looks like), and
//! reports the truncation from then on (`PublishError::Truncated`, `ReceiveError::Truncated`;
//! the handle's `fault()` and every setup call say `Error::Corrupt`). This is what the JVM does for a truncated
//! `MappedByteBuffer`; the alternatives were worse: reading through `pread` (a system
//! call per message) or `MAP_PRIVATE` copies (no sharing at all).
//!
//! **Fork.** A child made by `fork()` inherits every mapping and handle, but it is not the
//! process its slots are registered to. A `pthread_atfork` child hook replaces every
//! inherited salias mapping with private zero pages, so nothing the child does through an
//! inherited handle (or a received view it kept) can reach its parent's channels; marks
//! every cell `INHERITED`, so those handles report `Inherited` (and their drops
//! release nothing); and forgets the cached process identity, so the child's own handles
//! carry its own.
//!
//! Both tables are fixed-size statics because the signal handler may neither allocate
//! nor lock: it only reads atomics and makes one `mmap` system call.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

use crate::error::{Error, Result};

/// Most channels (each `connect` or `create` in this process counts one) open at once.
pub(crate) const MAX_CHANNELS: usize = 4096;
/// Most mappings registered at once: a channel maps its control block and one double view
/// per ring (at most 65).
const MAX_RANGES: usize = 16 * 1024;

/// States of a [`Health`] cell.
const FREE: u32 = 0;
pub(crate) const HEALTHY: u32 = 1;
pub(crate) const TRUNCATED: u32 = 2;
pub(crate) const INHERITED: u32 = 3;

static CELLS: [AtomicU32; MAX_CHANNELS] = [const { AtomicU32::new(FREE) }; MAX_CHANNELS];

/// A registered mapping: `[start, end)`, its fault granularity and its channel's cell.
/// `end == 0` marks a free entry; `end` is written last on registration and cleared first
/// on removal, so the handler never acts on a half-written entry.
struct Range {
    start: AtomicUsize,
    end: AtomicUsize,
    page: AtomicUsize,
    cell: AtomicUsize,
}

static RANGES: [Range; MAX_RANGES] = [const {
    Range {
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        page: AtomicUsize::new(0),
        cell: AtomicUsize::new(0),
    }
}; MAX_RANGES];

/// The SIGBUS disposition found when the handler was installed, for chaining. Read by the
/// handler with one atomic load (`OnceLock::get`), which is async-signal-safe.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
static INSTALL: Once = Once::new();

/// One channel's health as this process sees it: whether its objects were truncated under
/// it, or whether this process is a fork of the one that opened it. Freed on drop.
pub(crate) struct Health {
    index: usize,
}

impl Health {
    /// Takes a free cell, installing the handler and fork hook first if no one has.
    pub(crate) fn new(name: &str) -> Result<Health> {
        if !install() {
            return Err(Error::platform_check(
                "sigaction",
                format!("channel {name:?}"),
                "salias could not install its SIGBUS guard or fork hook, without which a peer truncating the channel would kill this process",
            ));
        }
        for (index, cell) in CELLS.iter().enumerate() {
            if cell
                .compare_exchange(FREE, HEALTHY, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(Health { index });
            }
        }
        Err(Error::platform_check(
            "open",
            format!("channel {name:?}"),
            format!("this process already has {MAX_CHANNELS} channels open; drop channels it no longer uses"),
        ))
    }

    /// The cell itself, for handles that check it on every call without an `Arc` hop.
    pub(crate) fn word(&self) -> &'static AtomicU32 {
        &CELLS[self.index]
    }

    /// The cell's state after every access made so far by this thread.
    #[inline(always)]
    pub(crate) fn state(&self) -> u32 {
        state_of(self.word())
    }

    /// Fails once the channel was truncated under this process, or in a `fork()` child.
    pub(crate) fn check(&self, name: &str) -> Result<()> {
        check_cell(self.word()).map_err(|bad| bad.error(name))
    }

    /// Marks the channel truncated, as the handler does when it catches a fault.
    pub(crate) fn poison(&self) {
        let _ = self
            .word()
            .compare_exchange(HEALTHY, TRUNCATED, Ordering::AcqRel, Ordering::Relaxed);
    }

    /// Registers `[start, start + len)`, faulting in `page`-sized units, as this channel's.
    pub(crate) fn register(&self, start: *const u8, len: usize, page: usize) -> Result<Guarded> {
        for (index, range) in RANGES.iter().enumerate() {
            if range
                .start
                .compare_exchange(0, start as usize, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                range.page.store(page, Ordering::Relaxed);
                range.cell.store(self.index, Ordering::Relaxed);
                // SYNC POINT guard-range (Release side): the handler loads `end` with
                // Acquire before it trusts `page` and `cell`.
                range.end.store(start as usize + len, Ordering::Release);
                return Ok(Guarded { index });
            }
        }
        Err(Error::platform_check(
            "mmap",
            "a channel's shared memory",
            format!("this process already has {MAX_RANGES} salias mappings; drop channels it no longer uses"),
        ))
    }
}

impl Drop for Health {
    fn drop(&mut self) {
        CELLS[self.index].store(FREE, Ordering::Release);
    }
}

/// `word`'s state, loaded after every earlier access of this thread: a fault the handler
/// caught in a load or store just before is already visible.
#[inline(always)]
pub(crate) fn state_of(word: &AtomicU32) -> u32 {
    // The handler runs on this thread between two of its instructions; a compiler fence
    // keeps the load from being moved before the accesses that may have faulted.
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    word.load(Ordering::Relaxed)
}

/// A cell found unhealthy: its state, turned into an `Error` only off the hot path.
pub(crate) struct Unhealthy(u32);

impl Unhealthy {
    #[cold]
    pub(crate) fn error(self, name: &str) -> Error {
        unhealthy(name, self.0)
    }
}

/// `Ok` while the cell `word` is healthy: the one check every handle and every read of a
/// mapping makes. The error carries only the state, so the hot path loads nothing for the
/// message (a load the compiler fence in `state_of` would keep from being sunk).
#[inline(always)]
pub(crate) fn check_cell(word: &AtomicU32) -> std::result::Result<(), Unhealthy> {
    match state_of(word) {
        HEALTHY => Ok(()),
        state => Err(Unhealthy(state)),
    }
}

/// A mapping the handler knows about, until dropped; drop it before the mapping is
/// unmapped, or a fault in whatever reuses the address would be mistaken for ours.
pub(crate) struct Guarded {
    index: usize,
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let range = &RANGES[self.index];
        range.end.store(0, Ordering::Release);
        range.start.store(0, Ordering::Release);
    }
}

/// Installs the handler and the fork hook once; whether both are in place.
fn install() -> bool {
    static INSTALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    INSTALL.call_once(|| {
        // The disposition to chain to is stored before ours is installed, so the handler
        // never runs without it.
        // SAFETY: `sigaction` is plain data for which all zeroes is a valid value.
        let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a query only (no new action), into a struct we own.
        if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) } != 0 {
            return;
        }
        let _ = PREVIOUS.set(previous);
        // SAFETY: as for `previous`.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_sigbus as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: initialises a signal set we own.
        unsafe { libc::sigemptyset(&mut action.sa_mask) };
        // SAFETY: the handler is an `extern "C"` function of the SA_SIGINFO signature that
        // lives for the whole program, installed from a struct we own and filled in.
        let installed = unsafe { libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) } == 0
            // SAFETY: the hook is an `extern "C"` function that lives for the whole program.
            && unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) } == 0;
        INSTALLED.store(installed, Ordering::Release);
    });
    INSTALLED.load(Ordering::Acquire)
}

extern "C" fn after_fork_in_child() {
    // The child shares every inherited mapping with its parent. Replace each with private
    // zero pages: nothing an inherited handle does in the child (a publish, a release, a
    // drop) can then reach the parent's channels, and a receive finds nothing committed.
    for range in &RANGES {
        let end = range.end.load(Ordering::Acquire);
        let start = range.start.load(Ordering::Acquire);
        if end != 0 && start != 0 && end > start {
            // SAFETY: `[start, end)` is a live salias mapping of this (single-threaded,
            // just forked) process; replacing its pages affects only this process, and its
            // handles all report `Inherited` through the cells marked below.
            let replaced = unsafe {
                libc::mmap(
                    start as *mut c_void,
                    end - start,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if replaced == libc::MAP_FAILED {
                // No memory for private pages: make the shared ones unreachable instead
                // (handles check their cell before touching them).
                // SAFETY: the same live mapping of this process, as above.
                unsafe { libc::mprotect(start as *mut c_void, end - start, libc::PROT_NONE) };
            }
        }
    }
    for cell in &CELLS {
        // Only cells in use: a free one must stay claimable by the child.
        let _ = cell.fetch_update(Ordering::AcqRel, Ordering::Relaxed, |state| {
            (state != FREE).then_some(INHERITED)
        });
    }
    super::process::forget_identity();
}

/// The registered range holding `addr`, if any.
fn range_of(addr: usize) -> Option<&'static Range> {
    RANGES.iter().find(|range| {
        // SYNC POINT guard-range (Acquire side).
        let end = range.end.load(Ordering::Acquire);
        if end == 0 || addr >= end {
            return false;
        }
        let start = range.start.load(Ordering::Acquire);
        // An entry being released and taken for another mapping meanwhile could pair one
        // mapping's start with another's end: look again, and trust only a stable entry.
        // (The faulting mapping's own entry is stable: it is in use right now.)
        start != 0 && start <= addr && range.end.load(Ordering::Acquire) == end
    })
}

/// Whether `code` is a fault the kernel raised for an access to a mapping: only those
/// carry a faulting address, and only they recur if the access is retried.
fn is_access_fault(code: libc::c_int) -> bool {
    code == libc::BUS_ADRERR || code == libc::BUS_OBJERR
}

/// The calling thread's `errno`, which the handler must leave as it found it.
fn errno_location() -> *mut libc::c_int {
    #[cfg(target_os = "linux")]
    // SAFETY: returns this thread's errno slot; no preconditions.
    return unsafe { libc::__errno_location() };
    #[cfg(not(target_os = "linux"))]
    // SAFETY: as above.
    return unsafe { libc::__error() };
}

extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    // SAFETY: this thread's errno slot, valid for the whole handler.
    let saved_errno = unsafe { *errno_location() };
    // SAFETY: the arguments the kernel gave this handler.
    unsafe { handle(signal, info, context) };
    // SAFETY: as above.
    unsafe { *errno_location() = saved_errno };
}

/// # Safety
/// Only from the signal handler, with the arguments it was given.
unsafe fn handle(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    // A signal someone sent carries no address worth trusting (for SI_USER the field
    // overlaps the sender's pid and uid): never zero a page for one.
    let addr = is_access_fault(code).then(|| {
        // SAFETY: as above: the kernel's siginfo, valid for the handler's duration.
        let info = unsafe { &*info };
        // SAFETY: for an access fault the kernel fills in the faulting address.
        unsafe { info.si_addr() as usize }
    });
    if let Some((addr, range)) = addr.and_then(|addr| Some((addr, range_of(addr)?))) {
        let page = range.page.load(Ordering::Relaxed);
        let at = addr & !(page - 1);
        // SAFETY: `[at, at + page)` lies inside a live salias mapping (it is registered,
        // and ranges are released before their mapping goes): replacing those pages with
        // private zero pages affects nothing but that mapping, whose handles all check the
        // cell marked below before trusting anything they read.
        let mapped = unsafe {
            libc::mmap(
                at as *mut c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if mapped != libc::MAP_FAILED {
            let cell = &CELLS[range.cell.load(Ordering::Relaxed)];
            let _ = cell.compare_exchange(HEALTHY, TRUNCATED, Ordering::AcqRel, Ordering::Relaxed);
            return;
        }
    }
    // SAFETY: not ours: hand the signal to whoever had it before us, as they asked.
    unsafe { chain(signal, info, context) }
}

/// Passes a SIGBUS that is not ours on to the previous disposition.
///
/// # Safety
/// Only from the signal handler, with the arguments it was given.
unsafe fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    let previous = PREVIOUS.get();
    let handler = previous.map_or(libc::SIG_DFL, |previous| previous.sa_sigaction);
    // SAFETY: the kernel's siginfo (caller).
    let code = unsafe { (*info).si_code };
    if handler == libc::SIG_IGN && !is_access_fault(code) {
        // Ignored before salias came: stays ignored. (An access fault cannot be ignored:
        // retried, it recurs; the kernel kills the process, as it would have.)
    } else if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // Restore the default and let the process die of SIGBUS exactly as it would have
        // without salias: an access fault recurs on return; anything else (sent, or a
        // machine-check report that will not recur) is raised again.
        // SAFETY: a plain signal-disposition call, async-signal-safe.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
        if !is_access_fault(code) {
            // SAFETY: async-signal-safe; the default disposition is back in place.
            unsafe { libc::raise(signal) };
        }
    } else if previous.is_some_and(|previous| previous.sa_flags & libc::SA_SIGINFO != 0) {
        // SAFETY: the previous handler was installed for exactly this signature.
        let previous: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
            unsafe { std::mem::transmute(handler) };
        previous(signal, info, context);
    } else {
        // SAFETY: as above, for a plain handler.
        let previous: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        previous(signal);
    }
}

/// The `Error` a handle returns once its cell is no longer healthy.
#[cold]
fn unhealthy(name: &str, state: u32) -> Error {
    match state {
        INHERITED => Error::Inherited { name: name.to_owned() },
        _ => Error::corrupt(
            name,
            "another process truncated its shared memory while it was mapped here; what was in it is gone, \
             so recreate the channel and find out which process shrank it",
        ),
    }
}
