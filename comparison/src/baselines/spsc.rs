//! The throughput floor: a minimal Lamport ring in a shared mapping, one publisher and one
//! subscriber, with cached indices and the tail published every [`BATCH`] messages. Its
//! slots hold the bare message, or ([`FrameSlot`]) as many bytes as salias's frame of it,
//! so that the floor also moves what salias moves per message.

use std::sync::atomic::{AtomicU64, Ordering};

use support::shm::{ShmError, ShmFile};

use crate::message::{MESSAGE_BYTES, Msg64};
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

/// What one slot of the floor holds: a message, with or without frame bytes around it.
pub trait Slot: Copy {
    /// The slot of message number `seq`.
    fn of(message: &Msg64, seq: u64) -> Self;
    fn message(self) -> Msg64;
}

impl Slot for Msg64 {
    #[inline(always)]
    fn of(message: &Msg64, _: u64) -> Self {
        *message
    }

    #[inline(always)]
    fn message(self) -> Msg64 {
        self
    }
}

/// A slot as large as salias's frame of a 64-byte typed message: a 16-byte header (two
/// words written per message, as salias's commit and length words) and the message.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct FrameSlot {
    header: [u64; 2],
    message: Msg64,
}

/// Bytes of a [`FrameSlot`]: salias's frame of a 64-byte message (a test checks it
/// against a salias channel's `frame_len`).
pub const FRAME_SLOT_BYTES: usize = std::mem::size_of::<FrameSlot>();

const _: () = assert!(FRAME_SLOT_BYTES == 16 + MESSAGE_BYTES, "no padding in a frame slot");

impl Slot for FrameSlot {
    #[inline(always)]
    fn of(message: &Msg64, seq: u64) -> Self {
        FrameSlot {
            header: [seq, MESSAGE_BYTES as u64],
            message: *message,
        }
    }

    #[inline(always)]
    fn message(self) -> Msg64 {
        self.message
    }
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

    /// The ring's first slot of type `S`, and how many whole slots its bytes hold.
    fn slots<S: Slot>(&self) -> (*mut S, u64) {
        // SAFETY: the mapping is SLOTS_OFFSET + bytes long (`create_ring`), so the slots start
        // inside it; page aligned + 256 keeps them 64-byte aligned, more than any slot needs.
        let base = unsafe { self.file.as_ptr().add(SLOTS_OFFSET) } as *mut S;
        (base, self.bytes / std::mem::size_of::<S>() as u64)
    }

    /// The publishing end of `a.messages`, in slots of `S`.
    pub fn publisher<S: Slot>(&self, a: &Params) -> Publisher<'_, S> {
        let (base, slots) = self.slots();
        Publisher {
            base,
            slots,
            tail_word: self.file.word(TAIL),
            head_word: self.file.word(HEAD),
            tail: 0,
            tail_slot: 0,
            published: 0,
            cached_head: 0,
            last: a.messages,
        }
    }

    pub fn subscriber<S: Slot>(&self) -> Subscriber<'_, S> {
        let (base, slots) = self.slots();
        Subscriber {
            base,
            slots,
            tail_word: self.file.word(TAIL),
            head_word: self.file.word(HEAD),
            head: 0,
            head_slot: 0,
            cached_tail: 0,
        }
    }
}

/// The slot after `slot` of `slots`: a comparison, not a division, since a ring of frame
/// slots holds no power of two of them.
#[inline(always)]
fn next_slot(slot: u64, slots: u64) -> u64 {
    if slot + 1 == slots { 0 } else { slot + 1 }
}

pub struct Publisher<'a, S> {
    base: *mut S,
    slots: u64,
    tail_word: &'a AtomicU64,
    head_word: &'a AtomicU64,
    /// Messages written; the next one goes to `tail_slot`.
    tail: u64,
    tail_slot: u64,
    /// The tail as last published to the subscriber.
    published: u64,
    cached_head: u64,
    /// The run's message count: the last message publishes the tail at once.
    last: u64,
}

impl<S: Slot> Publish for Publisher<'_, S> {
    #[inline(always)]
    fn offer(&mut self, message: &Msg64) -> bool {
        let (tail, size) = (self.tail, self.slots);
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
        // SAFETY: slot `tail_slot` is free (tail - head < slots) and inside the mapping.
        unsafe { self.base.add(self.tail_slot as usize).write(S::of(message, tail)) };
        self.tail_slot = next_slot(self.tail_slot, self.slots);
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

pub struct Subscriber<'a, S> {
    base: *mut S,
    slots: u64,
    tail_word: &'a AtomicU64,
    head_word: &'a AtomicU64,
    /// Messages read; the next one is at `head_slot`.
    head: u64,
    head_slot: u64,
    cached_tail: u64,
}

impl<S: Slot> Subscribe for Subscriber<'_, S> {
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
            let m = unsafe { self.base.add(self.head_slot as usize).read() }.message();
            receive(&m);
            self.head_slot = next_slot(self.head_slot, self.slots);
            self.head += 1;
        }
        // SYNC POINT head: pairs with the publisher's Acquire load of `head`.
        self.head_word.store(self.head, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use salias::{Config, FifoMpsc};

    use super::FRAME_SLOT_BYTES;
    use crate::message::Msg64;

    #[test]
    fn a_frame_slot_is_as_large_as_salias_frame_of_the_message() {
        let name = format!("spsc-frame-slot-{}", std::process::id());
        let _channel = FifoMpsc::<Msg64>::create(&Config::new(&name)).unwrap();
        let status = salias::status::channel_status(&name).unwrap();
        assert_eq!(status.frame_len(), Some(FRAME_SLOT_BYTES));
    }
}
