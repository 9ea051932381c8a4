//! The prototypes' wake words, shared by a run's two processes in one page of
//! `/dev/shm/<run>.wake`: an armed flag and design A's futex word, each on a cache line of
//! its own.
//!
//! The prototypes' protocol is the library's in miniature: the receiver arms, looks once
//! more, then sleeps; a publisher, after its commit, disarms and wakes only if it finds
//! the flag set, so a receiver that is awake costs it no system call.

use std::sync::atomic::{AtomicU32, Ordering, fence};

use support::shm::{ShmError, ShmFile};

/// Byte offsets.
const SEQ: usize = 0;
const ARMED: usize = 64;
const LEN: usize = 4096;

pub struct Words(ShmFile);

impl Words {
    fn file_name(name: &str) -> String {
        format!("{name}.wake")
    }

    pub fn create(name: &str) -> Result<Words, ShmError> {
        ShmFile::create(&Self::file_name(name), LEN).map(Words)
    }

    pub fn open(name: &str) -> Result<Words, ShmError> {
        ShmFile::open(&Self::file_name(name)).map(Words)
    }

    fn word32(&self, offset: usize) -> &AtomicU32 {
        const { assert!(SEQ + 4 <= LEN && ARMED + 4 <= LEN) };
        // SAFETY: `offset` is SEQ or ARMED, in bounds (asserted above) and 4-byte aligned
        // in a page-aligned mapping that lives as long as `self`; every process of the run
        // accesses these bytes only atomically, as u32.
        unsafe { &*self.0.as_ptr().add(offset).cast::<AtomicU32>() }
    }

    /// Design A's futex word: bumped by each wake.
    pub fn seq(&self) -> &AtomicU32 {
        self.word32(SEQ)
    }

    /// Receiver: arms, before its last look for a message.
    pub fn arm(&self) {
        // SYNC POINT arm (receiver side): the flag is set before the last look, and that
        // look's loads do not move before it (the fence); pairs with `take_wake`'s fence,
        // so either the publisher sees the flag or this look sees its commit.
        self.word32(ARMED).store(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    /// Receiver that found a message on its last look: disarms.
    pub fn disarm(&self) {
        self.word32(ARMED).store(0, Ordering::Relaxed);
    }

    /// Publisher, after its commit: whether it must wake the receiver (then it is the only
    /// one that does, for this arming).
    pub fn take_wake(&self) -> bool {
        // SYNC POINT arm (publisher side): the commit before, the flag's load after;
        // pairs with `arm`.
        fence(Ordering::SeqCst);
        let armed = self.word32(ARMED);
        armed.load(Ordering::Relaxed) != 0 && armed.swap(0, Ordering::AcqRel) == 1
    }
}
