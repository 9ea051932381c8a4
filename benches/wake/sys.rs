//! The system calls the prototypes are made of, each wrapped once: a futex wait and wake
//! on a word shared between processes, an eventfd, and a named FIFO in a private
//! directory.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;

/// Sleeps while `word` holds `expected` (or until a signal or a spurious wake). Not
/// `FUTEX_PRIVATE_FLAG`: the word is in memory shared with other processes.
pub fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: FUTEX_WAIT reads the u32 at `word` (valid and aligned: it is an AtomicU32
    // that outlives the call) and writes nothing; the timeout pointer may be null.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes every process waiting on `word`.
pub fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses `word`'s address as a key; it reads no memory.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX);
    }
}

/// An eventfd, non-blocking: readable while its counter is above zero.
pub struct EventFd(File);

impl EventFd {
    pub fn new() -> io::Result<EventFd> {
        // SAFETY: eventfd takes no pointers; a non-negative result is a new descriptor.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nobody else.
        Ok(EventFd(File::from(unsafe { OwnedFd::from_raw_fd(fd) })))
    }

    /// Adds one to the counter: makes the descriptor readable.
    pub fn signal(&self) -> io::Result<()> {
        (&self.0).write_all(&1u64.to_ne_bytes())
    }

    /// Resets the counter to zero: not readable until the next signal.
    pub fn drain(&self) -> io::Result<()> {
        drain(&self.0, &mut [0u8; 8])
    }
}

impl AsFd for EventFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// Reads a non-blocking descriptor until it would block.
fn drain(mut file: &File, buf: &mut [u8]) -> io::Result<()> {
    loop {
        match file.read(buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A private directory (mode 0700) for named FIFOs, removed with them when dropped.
pub struct FifoDir(PathBuf);

impl FifoDir {
    pub fn create(name: &str) -> io::Result<FifoDir> {
        let path = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(FifoDir(path))
    }

    /// Makes the FIFO `name` (mode 0600) and returns its path.
    pub fn fifo(&self, name: &str) -> io::Result<PathBuf> {
        let path = self.0.join(name);
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: `c_path` is a NUL-terminated string that lives across the call.
        if unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(path)
    }
}

impl Drop for FifoDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One end of a named FIFO, non-blocking.
pub struct Fifo(File);

impl Fifo {
    /// The reading end (opening it does not wait for a writer).
    pub fn reader(path: &Path) -> io::Result<Fifo> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)?;
        Ok(Fifo(file))
    }

    /// The writing end; the reader must have opened it already.
    pub fn writer(path: &Path) -> io::Result<Fifo> {
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)?;
        Ok(Fifo(file))
    }

    /// Writes the one wake-up byte. A full FIFO is already readable: nothing is lost.
    pub fn signal(&self) -> io::Result<()> {
        match (&self.0).write(&[1]) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            other => other.map(drop),
        }
    }

    /// Reads every pending byte.
    pub fn drain(&self) -> io::Result<()> {
        drain(&self.0, &mut [0u8; 64])
    }
}

impl AsFd for Fifo {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}
