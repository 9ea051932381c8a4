//! Files in /dev/shm mapped shared: the start barrier and the floors' rings.

use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::platform::interrupted;

/// A file in /dev/shm mapped shared, for the barrier and the floors.
pub struct ShmFile {
    pub map: memmap2::MmapMut,
    pub path: String,
    /// The creator removes the file when dropped (also when a run panics).
    pub owner: bool,
}

impl Drop for ShmFile {
    fn drop(&mut self) {
        if self.owner {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl ShmFile {
    pub fn create(path: &str, len: usize) -> ShmFile {
        let file = std::fs::File::create_new(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        file.set_len(len as u64).unwrap();
        // SAFETY: a private file of this benchmark, accessed through atomics and the
        // floor protocols only.
        let map = unsafe { memmap2::MmapOptions::new().populate().map_mut(&file).unwrap() };
        ShmFile {
            map,
            path: path.into(),
            owner: true,
        }
    }

    pub fn open(path: &str) -> ShmFile {
        let file = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
        // SAFETY: as in `create`.
        let map = unsafe { memmap2::MmapOptions::new().populate().map_mut(&file).unwrap() };
        ShmFile {
            map,
            path: path.into(),
            owner: false,
        }
    }

    pub fn word(&self, index: usize) -> &AtomicU64 {
        assert!((index + 1) * 8 <= self.map.len());
        // SAFETY: in bounds (checked), 8-byte aligned (page-aligned mapping).
        unsafe { &*(self.map.as_ptr() as *const AtomicU64).add(index) }
    }
}

/// Start barrier: word 0 counts arrivals, word 1 is "go"; word 8 counts subscribers done
/// (publishers keep their resources until then); words 16 and 24 carry the floor's ping
/// and pong on one cache line pair as in benches/ipc.rs (there both share a line: 2, 3).
pub struct Barrier(ShmFile);

impl Barrier {
    pub fn path(name: &str) -> String {
        format!("/dev/shm/{name}.barrier")
    }
    pub fn create(name: &str) -> Barrier {
        Barrier(ShmFile::create(&Self::path(name), 4096))
    }
    pub fn open(name: &str) -> Barrier {
        Barrier(ShmFile::open(&Self::path(name)))
    }
    pub fn word(&self, i: usize) -> &AtomicU64 {
        self.0.word(i)
    }
    pub fn arrive_and_wait(&self) {
        self.word(0).fetch_add(1, Ordering::AcqRel);
        while self.word(1).load(Ordering::Acquire) == 0 {
            std::hint::spin_loop();
        }
    }
    pub fn release_when(&self, parties: u64, children: &mut [Child]) {
        while self.word(0).load(Ordering::Acquire) < parties {
            for child in children.iter_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!(
                        "a benchmark process exited before the start barrier{}: {status}",
                        interrupted()
                    );
                }
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        self.word(1).store(1, Ordering::Release);
    }
    pub fn subscriber_done(&self) {
        self.word(8).fetch_add(1, Ordering::AcqRel);
    }
    pub fn wait_subscribers_done(&self, subscribers: u64) {
        while self.word(8).load(Ordering::Acquire) < subscribers {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}
