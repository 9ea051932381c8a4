//! The throughput floor: a minimal Lamport ring in a shared mapping, one publisher and one
//! subscriber, with cached indices and the tail published every [`BATCH`] messages.

use std::sync::atomic::{AtomicU64, Ordering};

use support::shm::{ShmError, ShmFile};

use crate::message::Msg64;
use crate::roles::Params;
use crate::setup::BATCH;
use crate::transport::{POLL_LIMIT, Publish, Subscribe};

/// Layout: word 0 tail (producer), word 16 head (consumer), slots from byte 256.
const SLOTS_OFFSET: usize = 256;
const TAIL: usize = 0;
const HEAD: usize = 16;

fn ring_name(name: &str) -> String {
    format!("{name}.spsc")
}

/// The parent creates run `name`'s ring of `bytes` (a power of two, >= 64).
pub fn create_ring(name: &str, bytes: u64) -> Result<ShmFile, ShmError> {
    ShmFile::create(&ring_name(name), SLOTS_OFFSET + bytes as usize)
}

/// A child's mapping of run `a`'s ring, of `a.param` bytes.
pub struct Ring {
    file: ShmFile,
    bytes: u64,
}

impl Ring {
    pub fn open(a: &Params) -> Ring {
        Ring {
            file: ShmFile::open(&ring_name(&a.name)).expect("open the SPSC floor's ring"),
            bytes: a.param,
        }
    }

    /// The ring's first slot and its index mask.
    fn slots(&self) -> (*mut Msg64, u64) {
        let slots = self.bytes / 64;
        // SAFETY: the mapping is SLOTS_OFFSET + bytes long (`create_ring`), so the slots start
        // inside it; page aligned + 256 keeps them 64-byte aligned.
        let base = unsafe { self.file.as_ptr().add(SLOTS_OFFSET) } as *mut Msg64;
        (base, slots - 1)
    }

    /// The publishing end of `a.messages`.
    pub fn publisher(&self, a: &Params) -> Publisher<'_> {
        let (base, mask) = self.slots();
        Publisher {
            base,
            mask,
            tail_word: self.file.word(TAIL),
            head_word: self.file.word(HEAD),
            tail: 0,
            published: 0,
            cached_head: 0,
            last: a.messages,
        }
    }

    pub fn subscriber(&self) -> Subscriber<'_> {
        let (base, mask) = self.slots();
        Subscriber {
            base,
            mask,
            tail_word: self.file.word(TAIL),
            head_word: self.file.word(HEAD),
            head: 0,
            cached_tail: 0,
        }
    }
}

pub struct Publisher<'a> {
    base: *mut Msg64,
    mask: u64,
    tail_word: &'a AtomicU64,
    head_word: &'a AtomicU64,
    /// The next slot to write.
    tail: u64,
    /// The tail as last published to the subscriber.
    published: u64,
    cached_head: u64,
    /// The run's message count: the last message publishes the tail at once.
    last: u64,
}

impl Publish for Publisher<'_> {
    #[inline(always)]
    fn offer(&mut self, message: &Msg64) -> bool {
        let (tail, size) = (self.tail, self.mask + 1);
        if tail - self.cached_head == size {
            // SYNC POINT head: pairs with the subscriber's Release store of `head`; the
            // slots below it are read and may be overwritten.
            self.cached_head = self.head_word.load(Ordering::Acquire);
            if tail - self.cached_head == size {
                if self.published != tail {
                    // SYNC POINT tail: pairs with the subscriber's Acquire load of `tail`.
                    self.tail_word.store(tail, Ordering::Release);
                    self.published = tail;
                }
                return false;
            }
        }
        // SAFETY: slot `tail & mask` is free (tail - head < slots) and inside the mapping.
        unsafe { self.base.add((tail & self.mask) as usize).write(*message) };
        let next = tail + 1;
        if next - self.published >= BATCH as u64 || next == self.last {
            // SYNC POINT tail: as above; the slots below `next` are written.
            self.tail_word.store(next, Ordering::Release);
            self.published = next;
        }
        self.tail = next;
        true
    }
}

pub struct Subscriber<'a> {
    base: *mut Msg64,
    mask: u64,
    tail_word: &'a AtomicU64,
    head_word: &'a AtomicU64,
    /// The next slot to read.
    head: u64,
    cached_tail: u64,
}

impl Subscribe for Subscriber<'_> {
    #[inline(always)]
    fn poll(&mut self, mut receive: impl FnMut(&Msg64)) {
        if self.head == self.cached_tail {
            // SYNC POINT tail: pairs with the publisher's Release stores of `tail`.
            self.cached_tail = self.tail_word.load(Ordering::Acquire);
            if self.head == self.cached_tail {
                std::hint::spin_loop();
                return;
            }
        }
        let end = self.cached_tail.min(self.head + POLL_LIMIT as u64);
        while self.head < end {
            // SAFETY: head < tail (published with Release, read with Acquire): the slot is
            // written and will not be overwritten until `head` moves past it.
            let m = unsafe { self.base.add((self.head & self.mask) as usize).read() };
            receive(&m);
            self.head += 1;
        }
        // SYNC POINT head: pairs with the publisher's Acquire load of `head`.
        self.head_word.store(self.head, Ordering::Release);
    }
}
