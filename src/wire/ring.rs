//! The rings as this process sees them: every address computed into a ring, and every
//! access made there, goes through a [`Ring`] view.
//!
//! A view is a base address and a mask: `Copy`, no lifetime, one per ring a handle reads or
//! writes. Its access type says what the mapping under it allows. [`ReadOnly`] views are
//! what every process gets for every ring (the mapping is `PROT_READ`); a publisher turns
//! the mapping of the one ring whose slot it holds writable and gets a [`Writable`] view.
//!
//! What is shared with other processes is accessed as follows:
//!
//! - commit words: only atomically, by everyone (`commit_word`, whose orderings are
//!   `crate::protocol::ring`'s);
//! - headers: stored as atomic words (the length and flags as one `u64`, the sequence as
//!   another; a typed channel's Ordered frame has only its sequence word; `Relaxed`, as
//!   the commit word orders them). A tethered reader loads the fields one by one, ordered
//!   after the commit (`header`); a lossy reader, which may race an overwrite, loads the
//!   same `u64`s (`racing_header`), so it reads some value, never a torn field or
//!   undefined behaviour;
//! - payloads a tethered subscriber holds: through a reference (`payload`, `payload_as`),
//!   valid because no publisher rewrites a frame before every subscriber released it;
//! - payloads a lossy subscriber copies: word by word with atomic loads (`copy_out`),
//!   checked against the overwrite frontier afterwards.
//!
//! Positions are masked with `capacity - 1` with its low three bits cleared, so any
//! position gives an 8-aligned frame start inside the first view: the safe methods stay in
//! bounds whatever a peer wrote, and only the contracts of the `unsafe` ones (which frames
//! a caller may reference or write) are the handles' to keep.

use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::frame::{
    self, FLAG_HOLE, FLAGS_OFFSET, HOLE_BIT, HOLE_LEN, LEN_OFFSET, MAX_ALIGN, RawHeader, SEQ_OFFSET, Shape,
    TYPED_SEQ_OFFSET,
};

mod sealed {
    pub trait Sealed {}
}

/// What a view may do with its ring: [`ReadOnly`] or [`Writable`].
pub trait Access: sealed::Sealed + Copy + 'static {}

/// A view of a ring mapped read-only: loads and references only.
#[derive(Clone, Copy, Debug)]
pub enum ReadOnly {}

/// A view of the ring whose publisher slot this process holds, mapped writable.
#[derive(Clone, Copy, Debug)]
pub enum Writable {}

impl sealed::Sealed for ReadOnly {}
impl sealed::Sealed for Writable {}
impl Access for ReadOnly {}
impl Access for Writable {}

/// Cache line size, for the payload prefetch and the commit-line-last copy.
const LINE: usize = 64;
const WORD: usize = 8;

/// One ring, double-mapped: `[base, base + capacity)` and the next `capacity` bytes show
/// the same pages, so every frame (at most `capacity` bytes) is contiguous.
#[derive(Clone, Copy)]
pub struct Ring<A: Access> {
    base: NonNull<u8>,
    /// `capacity - 1` with the low three bits cleared.
    frame_mask: u64,
    _access: PhantomData<A>,
}

impl<A: Access> std::fmt::Debug for Ring<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("base", &self.base)
            .field("capacity", &self.capacity())
            .finish()
    }
}

// SAFETY: a view is an address into a mapping its holder keeps alive (the constructors'
// contract); every safe method is an atomic access or a read of its own fields, so using
// it from any thread is what a peer process does anyway. The writing methods are `unsafe`
// and their contracts name the one writer.
unsafe impl<A: Access> Send for Ring<A> {}
// SAFETY: as above.
unsafe impl<A: Access> Sync for Ring<A> {}

/// One frame's start in a ring view, computed once ([`Ring::frame`]) for every access a
/// handle makes to that frame: 8-aligned and inside the first view, whatever position it
/// was computed from.
#[derive(Clone, Copy)]
pub struct FrameAt<A: Access> {
    at: NonNull<u8>,
    _access: PhantomData<A>,
}

impl<A: Access> std::fmt::Debug for FrameAt<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FrameAt").field(&self.at).finish()
    }
}

// SAFETY: as for `Ring`: an address into a mapping its holder keeps alive.
unsafe impl<A: Access> Send for FrameAt<A> {}
// SAFETY: as above.
unsafe impl<A: Access> Sync for FrameAt<A> {}

impl Ring<ReadOnly> {
    /// A read-only view of the ring mapped at `base`.
    ///
    /// # Safety
    /// `base` must be the start of a double mapping of `capacity` bytes (a power of two, at
    /// least [`MAX_ALIGN`]), readable for `2 * capacity` bytes and 4096-aligned, that stays
    /// mapped as long as the view (or any copy of it) is used.
    pub unsafe fn new(base: NonNull<u8>, capacity: usize) -> Self {
        assert!(
            capacity.is_power_of_two() && capacity >= MAX_ALIGN && (base.as_ptr() as usize).is_multiple_of(MAX_ALIGN),
            "a ring view needs a page-aligned ring of a power-of-two capacity of at least a page"
        );
        Ring {
            base,
            frame_mask: (capacity as u64 - 1) & !(WORD as u64 - 1),
            _access: PhantomData,
        }
    }

    /// The writable view of the same ring.
    ///
    /// # Safety
    /// The mapping must be writable for as long as the returned view is used, and the caller
    /// must hold the ring's publisher slot: it is the ring's one writer.
    pub unsafe fn writable(self) -> Ring<Writable> {
        Ring {
            base: self.base,
            frame_mask: self.frame_mask,
            _access: PhantomData,
        }
    }

    /// Asks for the `bytes` bytes from `pos` for reading, line by line (a subscriber about
    /// to read the committed frames there). `pos` a multiple of `bytes`, which divides the
    /// capacity: the lines lie in one stretch of the first view, one address computed.
    #[inline(always)]
    pub fn prefetch_for_read(self, pos: u64, bytes: usize) {
        // Otherwise the lines asked for might not be the stretch meant: never a fault, a
        // prefetch being a hint whatever the address.
        debug_assert!(
            pos.is_multiple_of(bytes as u64),
            "a prefetched stretch starts at a multiple of its size"
        );
        let at = self.at(pos);
        for line in 0..bytes / LINE {
            crate::prefetch::for_read(at.wrapping_add(line * LINE));
        }
    }
}

impl<A: Access> Ring<A> {
    /// Bytes in one view of the ring.
    #[inline(always)]
    pub fn capacity(self) -> u64 {
        (self.frame_mask | (WORD as u64 - 1)) + 1
    }

    /// The frame start for `pos`: 8-aligned, inside the first view.
    #[inline(always)]
    fn at(self, pos: u64) -> *mut u8 {
        // SAFETY: the masked offset is below `capacity`, inside the mapping (`new`).
        unsafe { self.base.as_ptr().add((pos & self.frame_mask) as usize) }
    }

    /// The frame at `pos`, its address computed once for the accesses that follow.
    #[inline(always)]
    pub fn frame(self, pos: u64) -> FrameAt<A> {
        // SAFETY: `at` adds less than `capacity` to the non-null `base`, inside the one
        // mapping that starts there (`new`), so the sum cannot wrap around to null.
        let at = unsafe { NonNull::new_unchecked(self.at(pos)) };
        FrameAt {
            at,
            _access: PhantomData,
        }
    }

    /// The word at `offset` into the frame at `pos` (see [`FrameAt::word`]).
    #[inline(always)]
    fn word(&self, pos: u64, offset: usize) -> &AtomicU64 {
        let at = self.at(pos).wrapping_add(offset);
        debug_assert!(offset.is_multiple_of(WORD) && offset <= MAX_ALIGN + WORD);
        // SAFETY: as for `FrameAt::word`, whose bounds argument this is.
        unsafe { AtomicU64::from_ptr(at.cast()) }
    }

    /// The commit word of the frame at `pos` (orderings: `crate::protocol::ring`).
    #[inline(always)]
    pub fn commit_word(&self, pos: u64) -> &AtomicU64 {
        self.word(pos, 0)
    }

    /// The header of the frame at `pos` for a lossy reader, which the publisher may be
    /// overwriting: the length and flags loaded as the one word the publisher stores them
    /// as, so the race is between two atomic accesses of one size, which is defined. Its
    /// values are thrown away unless the frontier says the frame was not overwritten.
    #[inline(always)]
    pub fn racing_header(&self, pos: u64, shape: Shape) -> RawHeader {
        if let Some(len) = shape.implied_len() {
            return frame::typed_ordered_header(self.word(pos, TYPED_SEQ_OFFSET).load(Ordering::Relaxed), len);
        }
        let (len, flags) = frame::split_len_and_flags(self.word(pos, LEN_OFFSET).load(Ordering::Relaxed));
        if shape.ordered() {
            RawHeader {
                len: len as usize,
                sequence: self.word(pos, SEQ_OFFSET).load(Ordering::Relaxed),
                flags,
            }
        } else {
            RawHeader {
                len: len as usize,
                sequence: 0,
                flags: 0,
            }
        }
    }

    /// Copies up to `dst.len()` payload bytes of the frame at `pos` out, with atomic loads
    /// of whole words: the publisher may be overwriting them, and what a racing load
    /// returns is a value (the publisher stores words atomically on the paths a lossy
    /// reader races, and the frontier check after the copy throws away a torn copy). Copies
    /// at most what fits in the double view; returns the bytes copied.
    #[inline]
    pub fn copy_out(&self, pos: u64, shape: Shape, dst: &mut [u8]) -> usize {
        // The payload starts at most MAX_ALIGN ≤ capacity bytes into a frame that starts at
        // most `capacity - 8` into the first view: `capacity - header` bytes, a multiple of
        // 8, fit after it.
        let len = dst.len().min(self.capacity() as usize - shape.header());
        let src = self.at(pos).wrapping_add(shape.header());
        let out = dst.as_mut_ptr();
        let words = len / WORD;
        for word in 0..words {
            // SAFETY: `word * 8 + 8 ≤ len`, so the word lies in the bounds argued above; the
            // payload start is 8-aligned (a shape's header is a multiple of its ≥ 8
            // alignment); ring words a peer writes concurrently are written atomically.
            let value = unsafe { AtomicU64::from_ptr(src.wrapping_add(word * WORD).cast()) }.load(Ordering::Relaxed);
            // SAFETY: inside the first `len` bytes of `dst`.
            unsafe { out.wrapping_add(word * WORD).cast::<u64>().write_unaligned(value) };
        }
        let rest = len % WORD;
        if rest != 0 {
            // SAFETY: the last, partial word lies inside the frame (frames are rounded up to
            // their ≥ 8 alignment) and inside `capacity - header`, a multiple of 8.
            let value = unsafe { AtomicU64::from_ptr(src.wrapping_add(words * WORD).cast()) }.load(Ordering::Relaxed);
            // SAFETY: the last `rest` bytes of the first `len` of `dst`.
            unsafe {
                std::ptr::copy_nonoverlapping(value.to_ne_bytes().as_ptr(), out.wrapping_add(words * WORD), rest)
            };
        }
        len
    }

    /// Where the run of committed frames starting at position `from` ends, scanning at most
    /// one ring's worth: the true end of a ring whose publisher died after committing frames
    /// it had not yet reported. Stops at the first frame that `committed` (the protocol's
    /// Acquire check of a commit word) rejects, or whose length exceeds `max_len`.
    pub fn committed_end(
        &self,
        from: u64,
        shape: Shape,
        max_len: usize,
        committed: impl Fn(&AtomicU64, u64) -> bool,
    ) -> u64 {
        let scan_end = from.wrapping_add(self.capacity());
        let mut tail = from;
        while tail < scan_end {
            if !committed(self.commit_word(tail), tail) {
                break;
            }
            let RawHeader { len, flags, .. } = self.racing_header(tail, shape);
            let fits = match flags {
                FLAG_HOLE => len == HOLE_LEN,
                _ => len <= max_len,
            };
            if !fits {
                break;
            }
            tail += shape.len(len) as u64;
        }
        tail
    }

    /// The length of the committed frame at `pos` as its header gives it, to be validated.
    #[inline(always)]
    pub fn len_at(&self, pos: u64, shape: Shape) -> usize {
        self.racing_header(pos, shape).len
    }
}

impl<A: Access> FrameAt<A> {
    /// The word at `offset` into the frame, an 8-aligned place inside the double view for
    /// every `offset` up to `MAX_ALIGN` (a payload start) plus 8.
    #[inline(always)]
    fn word(&self, offset: usize) -> &AtomicU64 {
        debug_assert!(offset.is_multiple_of(WORD) && offset <= MAX_ALIGN + WORD);
        let at = self.at.as_ptr().wrapping_add(offset);
        // SAFETY: the frame start is 8-aligned and at most `capacity - 8` into the first
        // view (`Ring::frame`), so `offset` ≤ MAX_ALIGN + 8 ≤ capacity + 8 keeps the word
        // inside the double view, and 8-aligned (`offset` is a multiple of 8 at every call:
        // LEN_OFFSET (= TYPED_SEQ_OFFSET), SEQ_OFFSET or a shape's header). Every process
        // accesses these words atomically only, so a shared reference to an atomic is what
        // they are.
        unsafe { AtomicU64::from_ptr(at.cast()) }
    }

    /// The 32-bit field at `offset` (the length or the flags) of the frame.
    #[inline(always)]
    fn half_word(&self, offset: usize) -> &AtomicU32 {
        debug_assert!(offset == LEN_OFFSET || offset == FLAGS_OFFSET);
        let at = self.at.as_ptr().wrapping_add(offset);
        // SAFETY: as for `word`: inside the frame's first 16 bytes, 4-aligned; accessed
        // atomically only.
        unsafe { AtomicU32::from_ptr(at.cast()) }
    }

    /// The frame's commit word (orderings: `crate::protocol::ring`).
    #[inline(always)]
    pub fn commit_word(&self) -> &AtomicU64 {
        self.word(0)
    }

    /// The header of the committed frame, to be validated, as a tethered reader
    /// reads it: after its commit word was loaded with Acquire and before it releases the
    /// frame, so no honest publisher stores to it meanwhile. Its fields are loaded one by
    /// one (a `u32` load each for the length and flags, no shifting them out of one word);
    /// an overlapping `u64` store racing these loads would be a mixed-size race, which only
    /// a peer breaking the protocol can cause, and whose values are validated anyway. A
    /// reader that may race an overwrite uses [`Ring::racing_header`].
    #[inline(always)]
    pub fn header(&self, shape: Shape) -> RawHeader {
        if let Some(len) = shape.implied_len() {
            return frame::typed_ordered_header(self.word(TYPED_SEQ_OFFSET).load(Ordering::Relaxed), len);
        }
        let len = self.half_word(LEN_OFFSET).load(Ordering::Relaxed) as usize;
        if shape.ordered() {
            RawHeader {
                len,
                sequence: self.word(SEQ_OFFSET).load(Ordering::Relaxed),
                flags: self.half_word(FLAGS_OFFSET).load(Ordering::Relaxed),
            }
        } else {
            // FIFO has no hole frames: its flags read as 0.
            RawHeader {
                len,
                sequence: 0,
                flags: 0,
            }
        }
    }

    /// The count of the hole frame (its `u64` payload), to be validated.
    #[cold]
    pub fn hole_count(&self, shape: Shape) -> u64 {
        self.word(shape.header()).load(Ordering::Relaxed)
    }

    /// Asks for the cache line after the one holding the frame's commit word, where most
    /// of a frame's payload lies, so that when the commit arrives both lines are already in
    /// flight instead of one after the other.
    #[inline(always)]
    pub fn prefetch_payload(self) {
        let at = self.at.as_ptr();
        crate::prefetch::for_read(at.wrapping_add(LINE - (at as usize & (LINE - 1))));
    }

    /// The payload of the committed frame, borrowed in place.
    ///
    /// # Safety
    /// The frame must be committed (its commit word loaded with Acquire), `len` must be its
    /// length validated against the channel's geometry (so the frame lies in the double
    /// view), and no process may write the frame while the borrow lives: the caller has not
    /// released it, so no honest publisher reuses its bytes.
    #[inline(always)]
    pub unsafe fn payload<'a>(self, shape: Shape, len: usize) -> &'a [u8] {
        // SAFETY: the caller's contract: inside the double view, unwritten while borrowed.
        unsafe { std::slice::from_raw_parts(self.at.as_ptr().wrapping_add(shape.header()), len) }
    }

    /// The payload of the committed frame as a `T`.
    ///
    /// # Safety
    /// As for [`FrameAt::payload`] with `len == size_of::<T>()`; `shape`'s alignment must
    /// be at least `align_of::<T>()`, and `T` must accept any bytes and have no interior
    /// mutability.
    #[inline(always)]
    pub unsafe fn payload_as<'a, T>(self, shape: Shape) -> &'a T {
        // SAFETY: the caller's contract; the payload is aligned to the shape's alignment.
        unsafe { &*self.at.as_ptr().wrapping_add(shape.header()).cast::<T>() }
    }
}

impl Ring<Writable> {
    /// The read-only view of the same ring.
    #[cfg(any(test, salias_testing))]
    #[inline(always)]
    pub fn read_only(self) -> Ring<ReadOnly> {
        Ring {
            base: self.base,
            frame_mask: self.frame_mask,
            _access: PhantomData,
        }
    }

    /// Asks for ownership of the cache line at `pos` (a publisher about to write there).
    #[inline(always)]
    pub fn prefetch_for_write(self, pos: u64) {
        crate::prefetch::for_write(self.at(pos));
    }

    /// Writes the header of the frame at `pos` (length, flags 0, and in Ordered mode its
    /// sequence number, below `HOLE_BIT`; a typed channel's Ordered frame only the
    /// sequence); the commit word stays as it is.
    ///
    /// # Safety
    /// The frame at `pos` must be reserved by this publisher and not yet committed, so no
    /// subscriber references it.
    #[inline(always)]
    pub unsafe fn write_header(self, pos: u64, shape: Shape, len: usize, sequence: u64) {
        if shape.implied_len().is_some() {
            debug_assert!(sequence & HOLE_BIT == 0 && Some(len) == shape.implied_len());
            self.word(pos, TYPED_SEQ_OFFSET).store(sequence, Ordering::Relaxed);
            return;
        }
        self.word(pos, LEN_OFFSET)
            .store(frame::len_and_flags(len as u32, 0), Ordering::Relaxed);
        if shape.ordered() {
            self.word(pos, SEQ_OFFSET).store(sequence, Ordering::Relaxed);
        }
    }

    /// Writes the header and payload of a hole frame at `pos`: the `count` numbers from
    /// `first` on are lost. The commit word stays as it is.
    ///
    /// # Safety
    /// As for [`Ring::write_header`], for a frame of `shape.len(HOLE_LEN)` bytes.
    pub unsafe fn write_hole(self, pos: u64, shape: Shape, first: u64, count: u64) {
        if shape.implied_len().is_some() {
            self.word(pos, TYPED_SEQ_OFFSET)
                .store(first | HOLE_BIT, Ordering::Relaxed);
        } else {
            self.word(pos, LEN_OFFSET)
                .store(frame::len_and_flags(HOLE_LEN as u32, FLAG_HOLE), Ordering::Relaxed);
            self.word(pos, SEQ_OFFSET).store(first, Ordering::Relaxed);
        }
        self.word(pos, shape.header()).store(count, Ordering::Relaxed);
    }

    /// Overwrites just the length field of the frame at `pos` (fault injection).
    #[cfg(salias_testing)]
    pub fn write_len(self, pos: u64, len: u32) {
        self.word(pos, LEN_OFFSET)
            .store(frame::len_and_flags(len, 0), Ordering::Relaxed);
    }

    /// Copies `src` into the payload of the frame at `pos` so that the cache line holding
    /// the frame's commit word is written last: a subscriber polling that word then pulls
    /// the line once per message instead of once per store. Messages of whole words up to
    /// four lines are stored word by word atomically, which is also what a lossy reader
    /// racing the overwrite relies on; larger or ragged ones are copied with `memcpy` (a
    /// lossy reader racing those reads words a plain copy is writing: the same machine
    /// moves, caught by the frontier check, but outside what Rust's memory model defines
    /// until it has an atomic memcpy).
    ///
    /// # Safety
    /// The frame at `pos` must be reserved by this publisher, not yet committed, and hold
    /// `src.len()` payload bytes inside the double view.
    #[inline(always)]
    pub unsafe fn write_payload(self, pos: u64, shape: Shape, src: &[u8]) {
        let len = src.len();
        let payload = self.at(pos).wrapping_add(shape.header());
        if len.is_multiple_of(WORD) && len <= 4 * LINE {
            // Last word first, so the commit line comes last. Raw 64-byte frames gained
            // 1.5× from it over the two copies below (doc/performance-notes.md).
            for word in (0..len / WORD).rev() {
                // SAFETY: word `word` lies inside the `len` bytes of the payload (caller),
                // 8-aligned as the payload starts at a multiple of the ≥ 8 alignment.
                let place = unsafe { AtomicU64::from_ptr(payload.wrapping_add(word * WORD).cast()) };
                // SAFETY: `word * 8 + 8 ≤ len`, inside `src`.
                let value = unsafe { src.as_ptr().wrapping_add(word * WORD).cast::<u64>().read_unaligned() };
                place.store(value, Ordering::Relaxed);
            }
            return;
        }
        let frame_start = payload as usize - shape.header();
        let in_commit_line = (LINE - frame_start % LINE).saturating_sub(shape.header()).min(len);
        // SAFETY: both ranges lie inside the `len` bytes of the reserved payload (caller)
        // and of `src`. They cannot overlap: `src` is outside this ring, or (a message
        // received from this very ring) a frame a subscriber still holds, which no
        // reservation covers until it is released.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.as_ptr().wrapping_add(in_commit_line),
                payload.wrapping_add(in_commit_line),
                len - in_commit_line,
            )
        };
        // Keep the compiler from merging or reordering the two copies; x86 keeps the
        // stores in program order, elsewhere this is only a hint.
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        // SAFETY: as for the copy above: the first `in_commit_line` bytes of both.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), payload, in_commit_line) };
    }

    /// Copies `src` into the payload of the frame at `pos` in one `memcpy` (a batch, whose
    /// frames are all written before any is committed).
    ///
    /// # Safety
    /// As for [`Ring::write_payload`].
    #[inline(always)]
    pub unsafe fn copy_payload(self, pos: u64, shape: Shape, src: &[u8]) {
        // SAFETY: the reserved payload holds `src.len()` bytes (caller).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.at(pos).wrapping_add(shape.header()), src.len()) }
    }

    /// The payload of the reserved frame at `pos` as `len` writable bytes.
    ///
    /// # Safety
    /// The frame must be reserved by this publisher, not yet committed, hold `len` payload
    /// bytes inside the double view, and nothing else may reference it while the borrow
    /// lives.
    #[inline(always)]
    pub unsafe fn payload_mut<'a>(self, pos: u64, shape: Shape, len: usize) -> &'a mut [u8] {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.at(pos).wrapping_add(shape.header()), len) }
    }

    /// The payload of the reserved frame at `pos` as a writable `T`.
    ///
    /// # Safety
    /// As for [`Ring::payload_mut`] with `len == size_of::<T>()`; `shape`'s alignment must be
    /// at least `align_of::<T>()`, and `T` must accept any bytes and leave none
    /// uninitialised when written.
    #[inline(always)]
    pub unsafe fn payload_as_mut<'a, T>(self, pos: u64, shape: Shape) -> &'a mut T {
        // SAFETY: the caller's contract; the payload is aligned to the shape's alignment.
        unsafe { &mut *self.at(pos).wrapping_add(shape.header()).cast::<T>() }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A heap-backed "double view": twice the capacity, page-aligned.
    #[repr(C, align(4096))]
    struct Pages([u8; 4096]);

    fn ring(pages: &mut [Pages]) -> Ring<Writable> {
        let base = NonNull::new(pages.as_mut_ptr().cast::<u8>()).unwrap();
        // SAFETY: `pages` is 2·4096 bytes, page-aligned, and outlives the view in the test.
        let view = unsafe { Ring::new(base, 4096) };
        // SAFETY: heap memory is writable, and the test is the one writer.
        unsafe { view.writable() }
    }

    #[test]
    fn a_header_written_reads_back_and_fifo_ignores_flags() {
        let mut pages = [Pages([0; 4096]), Pages([0; 4096])];
        let ring = ring(&mut pages);
        let ordered = Shape::new(true, 8, None);
        // SAFETY: the test is the only user of the memory.
        unsafe { ring.write_header(4088, ordered, 42, 7) };
        assert_eq!(
            ring.frame(4088).header(ordered),
            RawHeader {
                len: 42,
                sequence: 7,
                flags: 0
            }
        );
        // SAFETY: as above.
        unsafe { ring.write_hole(64, ordered, 9, 3) };
        assert_eq!(
            ring.frame(64).header(ordered),
            RawHeader {
                len: HOLE_LEN,
                sequence: 9,
                flags: FLAG_HOLE
            }
        );
        assert_eq!(ring.frame(64).hole_count(ordered), 3);
        let fifo = Shape::new(false, 8, None);
        assert_eq!(ring.frame(64).header(fifo).flags, 0, "FIFO reads no flags");
    }

    #[test]
    fn a_typed_ordered_header_is_its_sequence_word_and_reads_as_the_header_it_stands_for() {
        let mut pages = [Pages([0; 4096]), Pages([0; 4096])];
        let ring = ring(&mut pages);
        let typed = Shape::new(true, 8, Some(64));
        assert_eq!((typed.header(), typed.len(64), typed.len(HOLE_LEN)), (16, 80, 32));
        // SAFETY: the test is the only user of the memory.
        unsafe { ring.write_header(4080, typed, 64, 7) };
        let message = RawHeader {
            len: 64,
            sequence: 7,
            flags: 0,
        };
        assert_eq!(ring.frame(4080).header(typed), message);
        assert_eq!(ring.read_only().racing_header(4080, typed), message);
        assert_eq!(
            ring.word(4080, TYPED_SEQ_OFFSET).load(Ordering::Relaxed),
            7,
            "no length stored"
        );
        // SAFETY: as above.
        unsafe { ring.write_hole(96, typed, 9, 3) };
        let hole = RawHeader {
            len: HOLE_LEN,
            sequence: 9,
            flags: FLAG_HOLE,
        };
        assert_eq!(ring.frame(96).header(typed), hole);
        assert_eq!(ring.read_only().racing_header(96, typed), hole);
        assert_eq!(ring.frame(96).hole_count(typed), 3);
        assert_eq!(ring.read_only().len_at(96, typed), HOLE_LEN);
        // The number itself never has the hole's mark: the largest one reads as a message.
        // SAFETY: as above.
        unsafe { ring.write_header(4080, typed, 64, frame::MAX_SEQUENCE) };
        assert_eq!(ring.frame(4080).header(typed).flags, 0);
    }

    #[test]
    fn payloads_round_trip_across_the_ring_end_and_copies_stay_in_bounds() {
        let mut pages = [Pages([0; 4096]), Pages([0; 4096])];
        let ring = ring(&mut pages);
        let shape = Shape::new(false, 8, None);
        for len in [8, 13, 64, 256, 300] {
            let src: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let pos = 4096 - 16;
            // SAFETY: the frame at the last 16 bytes reaches into the second page, which
            // this test's "double view" holds.
            unsafe { ring.write_payload(pos, shape, &src) };
            let mut out = vec![0xff; len];
            assert_eq!(ring.read_only().copy_out(pos, shape, &mut out), len);
            assert_eq!(out, src, "{len} bytes");
            // SAFETY: written above and not written again while borrowed.
            assert_eq!(unsafe { ring.frame(pos).payload(shape, len) }, &src[..]);
        }
        // A length a peer made up is cut to what the double view holds.
        let mut huge = vec![0; 10_000];
        assert_eq!(ring.read_only().copy_out(0, shape, &mut huge), 4096 - 16);
    }

    #[test]
    fn any_position_masks_to_an_aligned_frame_start() {
        let mut pages = [Pages([0; 4096]), Pages([0; 4096])];
        let ring = ring(&mut pages);
        let base = ring.at(0) as usize;
        for pos in [0u64, 3, 4095, 4096 + 9, u64::MAX] {
            let at = ring.at(pos) as usize;
            assert!(at.is_multiple_of(8) && (base..base + 4096).contains(&at), "{pos}");
        }
    }
}
