//! A file in /dev/shm mapped shared by several processes of one run: the start barrier,
//! the cache-line floor and the harnesses' own rings live in one.

use std::fmt;
use std::fs::File;
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

use rustix::mm::{MapFlags, ProtFlags};

/// A shared mapping of `/dev/shm/<name>`. The process that created the file removes it
/// when this is dropped, also when a run panics; the others only unmap it.
pub struct ShmFile {
    base: NonNull<u8>,
    len: usize,
    path: PathBuf,
    owner: bool,
}

// SAFETY: the mapping is plain shared memory, reached only through `word` (atomics) or
// raw pointers whose users argue their own safety; nothing ties it to one thread.
unsafe impl Send for ShmFile {}
// SAFETY: as for Send: `&ShmFile` hands out only atomics and raw pointers.
unsafe impl Sync for ShmFile {}

/// A shared-memory file could not be created, opened or mapped.
#[derive(Debug)]
pub struct ShmError {
    path: PathBuf,
    what: &'static str,
    source: std::io::Error,
}

impl fmt::Display for ShmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot {} {}: {}", self.what, self.path.display(), self.source)?;
        if self.source.kind() == std::io::ErrorKind::AlreadyExists {
            write!(f, " (left by an earlier run that was killed? remove it)")?;
        }
        Ok(())
    }
}

impl std::error::Error for ShmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl ShmFile {
    /// Where the file of `name` lives.
    pub fn path_of(name: &str) -> PathBuf {
        PathBuf::from(format!("/dev/shm/{name}"))
    }

    /// Creates `/dev/shm/<name>` of `len` zeroed bytes (it must not exist yet) and maps it.
    pub fn create(name: &str, len: usize) -> Result<ShmFile, ShmError> {
        let path = Self::path_of(name);
        let fail = |what, source| ShmError {
            path: path.clone(),
            what,
            source,
        };
        let file = File::create_new(&path).map_err(|e| fail("create", e))?;
        if let Err(e) = file.set_len(len as u64) {
            let _ = std::fs::remove_file(&path);
            return Err(fail("size", e));
        }
        Self::map(file, path.clone(), len, true).inspect_err(|_| {
            let _ = std::fs::remove_file(&path);
        })
    }

    /// Opens and maps `/dev/shm/<name>`, which another process of the run created.
    pub fn open(name: &str) -> Result<ShmFile, ShmError> {
        let path = Self::path_of(name);
        let fail = |what, source| ShmError {
            path: path.clone(),
            what,
            source,
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| fail("open", e))?;
        let len = file.metadata().map_err(|e| fail("measure", e))?.len() as usize;
        Self::map(file, path, len, false)
    }

    fn map(file: File, path: PathBuf, len: usize, owner: bool) -> Result<ShmFile, ShmError> {
        if len == 0 {
            return Err(ShmError {
                path,
                what: "map an empty",
                source: std::io::ErrorKind::InvalidInput.into(),
            });
        }
        // Fault the pages in now, outside any timed region.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let flags = MapFlags::SHARED | MapFlags::POPULATE;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let flags = MapFlags::SHARED;
        // SAFETY: a fresh mapping (null hint) of `len` bytes of a file that is `len` bytes
        // long; it aliases no Rust object, and every access goes through atomics or raw
        // pointers whose users argue their own safety.
        let base = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                flags,
                &file,
                0,
            )
        }
        .map_err(|e| ShmError {
            path: path.clone(),
            what: "map",
            source: e.into(),
        })?;
        Ok(ShmFile {
            base: NonNull::new(base.cast()).expect("mmap returns a non-null address on success"),
            len,
            path,
            owner,
        })
    }

    /// The mapping's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: an empty file is refused).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The mapping's first byte, page aligned.
    pub fn as_ptr(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    /// The `index`th 8-byte word of the mapping, as an atomic.
    ///
    /// # Panics
    /// If the word lies beyond the mapping: a harness's own layout error.
    pub fn word(&self, index: usize) -> &AtomicU64 {
        assert!(
            (index + 1) * 8 <= self.len,
            "word {index} lies outside {} ({} bytes)",
            self.path.display(),
            self.len
        );
        // SAFETY: in bounds (checked above) and 8-byte aligned (the mapping is page
        // aligned); the memory lives as long as `self`, and is only ever accessed
        // atomically at this offset by every process of the run.
        unsafe { &*self.base.as_ptr().cast::<AtomicU64>().add(index) }
    }
}

impl Drop for ShmFile {
    fn drop(&mut self) {
        // SAFETY: `base` and `len` are exactly what mmap returned, and no reference into
        // the mapping outlives `self` (`word` borrows it).
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len) };
        if self.owner {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn two_mappings_share_words_and_the_creator_removes_the_file() {
        let name = format!("salias-support-shm-{}", std::process::id());
        let created = ShmFile::create(&name, 4096).unwrap();
        let opened = ShmFile::open(&name).unwrap();
        assert_eq!(opened.len(), 4096);
        created.word(3).store(7, Ordering::Release);
        assert_eq!(opened.word(3).load(Ordering::Acquire), 7);
        let again = ShmFile::create(&name, 4096).err().unwrap().to_string();
        assert!(again.contains("earlier run"), "{again}");
        drop(opened);
        drop(created);
        assert!(!ShmFile::path_of(&name).exists());
    }
}
