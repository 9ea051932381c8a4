//! The frame format: the only code that knows what a frame looks like in a ring.
//!
//! ```text
//! +0   commit  u64   position ^ COMMIT_KEY, stored last with Release
//! +8   len     u32   payload length
//! +12  flags   u32   0, or FLAG_HOLE (Ordered only)
//! +16  seq     u64   global sequence (Ordered only)
//! +HEADER            payload, aligned to the frame alignment
//! ```
//!
//! A hole frame (Ordered only, `flags == FLAG_HOLE`) is no message: it says that the
//! `count` numbers from `seq` on are lost. Its payload is that `count`, a `u64`, and its
//! length field is `HOLE_LEN` whatever the channel's message size.
//!
//! A frame starts at a multiple of its alignment (at least 8, so the commit word is
//! aligned) and occupies `HEADER + payload` rounded up to that alignment. The ordering of
//! the commit word's store and load is `crate::protocol::ring`'s.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::kind::Mode;
use crate::message::Payload;

/// A frame is committed when its first word equals its position XOR this key. The top bit
/// is set, so no reachable position maps to 0 and zeroed memory never looks committed.
pub(crate) const COMMIT_KEY: u64 = 0xA5C3_5A3C_96E1_69F0;

/// Byte offset of the length field inside a frame.
pub(crate) const LEN_OFFSET: usize = 8;
/// Byte offset of the flags word.
const FLAGS_OFFSET: usize = 12;
/// The flags of a hole frame; every other value but 0 is corrupt.
pub(crate) const FLAG_HOLE: u32 = 1;
/// The length field (and payload length) of a hole frame: its `u64` count.
pub(crate) const HOLE_LEN: usize = 8;
/// Byte offset of the global sequence inside an ordered frame.
pub(crate) const SEQ_OFFSET: usize = 16;

/// What the commit word of the frame at `pos` holds once that frame is committed.
#[inline(always)]
pub(crate) const fn commit_word(pos: u64) -> u64 {
    pos ^ COMMIT_KEY
}

pub(crate) const fn round_up(value: usize, align: usize) -> usize {
    (value + align - 1) & !(align - 1)
}

/// Bytes a frame of `payload` bytes occupies, for a mode whose header is `mode_header`
/// bytes and frames aligned to `align`. The one frame-length formula: [`Frame`] and the
/// geometry checks of channels read from shared memory both use it.
#[inline(always)]
pub(crate) const fn frame_len(mode_header: usize, payload: usize, align: usize) -> usize {
    round_up(round_up(mode_header, align) + payload, align)
}

/// Compile-time frame geometry for a payload type in a mode.
pub(crate) struct Frame<T: Payload, M: Mode>(core::marker::PhantomData<(fn() -> T, M)>);

impl<T: Payload, M: Mode> Frame<T, M> {
    /// Frames start at multiples of this; at least 8 so the commit word is always aligned.
    pub(crate) const ALIGN: usize = {
        assert!(
            T::ALIGN <= 4096,
            "salias message types may be aligned to at most 4096 bytes"
        );
        if T::ALIGN > 8 { T::ALIGN } else { 8 }
    };
    /// Offset of the payload from the frame start.
    pub(crate) const HEADER: usize = round_up(M::HEADER_LEN, Self::ALIGN);

    /// Bytes a frame with `payload` bytes occupies in the ring.
    #[inline(always)]
    pub(crate) const fn len(payload: usize) -> usize {
        frame_len(M::HEADER_LEN, payload, Self::ALIGN)
    }
}

/// The commit word of the frame at `at`.
///
/// # Safety
/// `at` must be the 8-aligned start of a frame inside a live ring mapping.
#[inline(always)]
pub(crate) unsafe fn commit_word_at<'a>(at: *const u8) -> &'a AtomicU64 {
    // SAFETY: the caller vouches for an aligned frame start inside a mapping that outlives
    // the use; the commit word is only ever accessed atomically.
    unsafe { &*at.cast::<AtomicU64>() }
}

/// Writes the header of the frame at `at` (length, flags, and in Ordered mode its
/// sequence number); the commit word stays as it is.
///
/// # Safety
/// `at` must be the 8-aligned start of a frame this publisher reserved, with its header
/// inside the ring's double view, and no subscriber may read the header before the commit
/// word says so.
#[inline(always)]
pub(crate) unsafe fn write_header<M: Mode>(at: *mut u8, len: usize, sequence: u64) {
    // SAFETY: the fields lie inside the reserved frame's header (caller), 4- and 8-aligned
    // as the frame start is 8-aligned.
    unsafe {
        at.add(LEN_OFFSET).cast::<u32>().write(len as u32);
        at.add(FLAGS_OFFSET).cast::<u32>().write(0);
        if M::ORDERED {
            at.add(SEQ_OFFSET).cast::<u64>().write(sequence);
        }
    }
}

/// The length field of the frame at `at`, still to be validated.
///
/// # Safety
/// As for [`read_header`].
#[inline(always)]
pub(crate) unsafe fn read_len(at: *const u8) -> usize {
    // SAFETY: as for `read_header`.
    unsafe { at.add(LEN_OFFSET).cast::<u32>().read_volatile() as usize }
}

/// Overwrites just the length field of the frame at `at` (fault injection and tests).
///
/// # Safety
/// As for [`write_header`].
#[cfg(feature = "testing")]
pub(crate) unsafe fn write_len(at: *mut u8, len: u32) {
    // SAFETY: as for `write_header`.
    unsafe { at.add(LEN_OFFSET).cast::<u32>().write(len) };
}

/// Reads the header of the committed frame at `at`: its payload length, (Ordered) its
/// sequence number and flags, all still to be validated (any peer may have written them).
/// FIFO has no hole frames: its flags read as 0.
///
/// # Safety
/// `at` must be the 8-aligned start of a frame inside the ring's double view whose commit
/// word was loaded (with Acquire) and found committed.
#[inline(always)]
pub(crate) unsafe fn read_header<M: Mode>(at: *const u8) -> (usize, u64, u32) {
    // SAFETY: the fields lie inside the frame header within the double view (caller);
    // volatile because a peer may be writing them: the values are validated, never trusted.
    unsafe {
        if M::ORDERED {
            (
                at.add(LEN_OFFSET).cast::<u32>().read_volatile() as usize,
                at.add(SEQ_OFFSET).cast::<u64>().read_volatile(),
                at.add(FLAGS_OFFSET).cast::<u32>().read_volatile(),
            )
        } else {
            (at.add(LEN_OFFSET).cast::<u32>().read_volatile() as usize, 0, 0)
        }
    }
}

/// Writes the header and payload of a hole frame at `at`: the `count` numbers from
/// `first` on are lost. The commit word stays as it is.
///
/// # Safety
/// As for [`write_header`], and the frame reserved must be `Frame::<T, M>::len(HOLE_LEN)`
/// bytes long.
pub(crate) unsafe fn write_hole<T: Payload, M: Mode>(at: *mut u8, first: u64, count: u64) {
    // SAFETY: the header fields as in `write_header`; the count is the frame's 8-byte
    // payload, 8-aligned as the header length rounds to the (≥ 8) frame alignment.
    unsafe {
        write_header::<M>(at, HOLE_LEN, first);
        at.add(FLAGS_OFFSET).cast::<u32>().write(FLAG_HOLE);
        at.add(Frame::<T, M>::HEADER).cast::<u64>().write(count);
    }
}

/// The count of the committed hole frame at `at`, still to be validated.
///
/// # Safety
/// As for [`read_header`], and the frame's flags must have read `FLAG_HOLE` with its
/// length `HOLE_LEN`, so its payload lies inside the double view.
#[cold]
pub(crate) unsafe fn read_hole_count<T: Payload, M: Mode>(at: *const u8) -> u64 {
    // SAFETY: the 8-byte payload of the frame (caller), 8-aligned as in `write_hole`.
    unsafe { at.add(Frame::<T, M>::HEADER).cast::<u64>().read_volatile() }
}

/// Copies a payload of `len` bytes into its frame so that the cache line holding the
/// frame's commit word is written last: a subscriber polling that word then pulls the
/// line once per message instead of once per store.
///
/// # Safety
/// `src` must be readable and `payload` writable for `len` bytes, not overlapping, and
/// `payload` must be the payload start of a frame of `Frame::<T, M>` geometry.
#[inline(always)]
pub(crate) unsafe fn write_payload<T: Payload, M: Mode>(src: *const u8, payload: *mut u8, len: usize) {
    const LINE: usize = 64;
    const WORD: usize = 8;
    if len.is_multiple_of(WORD) && len <= 4 * LINE {
        // A small message of whole words (typed, or raw of such a length): last word
        // first, so the commit line comes last. Volatile keeps the compiler from
        // reordering or merging the stores. Raw 64-byte frames gained 1.5× from it over
        // the two copies below (doc/performance-notes.md).
        for word in (0..len / WORD).rev() {
            // SAFETY: word `word` lies inside the `len` bytes of both ranges (`len` is a
            // multiple of 8). The source is read unaligned; the destination is 8-aligned,
            // as frames start 8-aligned and every mode's header (16 or 24 bytes, rounded
            // to the frame alignment) is a multiple of 8.
            unsafe {
                let value = src.add(word * WORD).cast::<u64>().read_unaligned();
                payload.add(word * WORD).cast::<u64>().write_volatile(value);
            }
        }
        return;
    }
    let frame_start = payload as usize - Frame::<T, M>::HEADER;
    let in_commit_line = (LINE - frame_start % LINE)
        .saturating_sub(Frame::<T, M>::HEADER)
        .min(len);
    // SAFETY: both ranges lie inside the `len` bytes the caller vouches for.
    unsafe {
        std::ptr::copy_nonoverlapping(
            src.add(in_commit_line),
            payload.add(in_commit_line),
            len - in_commit_line,
        );
        // Keep the compiler from merging or reordering the two copies; x86 keeps the
        // stores in program order, elsewhere this is only a hint.
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        std::ptr::copy_nonoverlapping(src, payload, in_commit_line);
    }
}

/// Where the run of committed frames starting at position `from` ends, scanning at most
/// one ring's worth: the true end of a ring whose publisher died after committing frames
/// it had not yet reported. Stops at the first frame that `committed` (the protocol's
/// Acquire check of a commit word) rejects, or whose length exceeds `max_len`.
///
/// # Safety
/// `ring` must be the base of a live double-mapped ring of `capacity` bytes (a power of
/// two), `from` a multiple of `align`, and `align` at least 8.
pub(crate) unsafe fn committed_end(
    ring: *const u8,
    capacity: usize,
    from: u64,
    (max_len, header_len, align): (usize, usize, usize),
    committed: impl Fn(&AtomicU64, u64) -> bool,
) -> u64 {
    let mask = capacity as u64 - 1;
    let scan_end = from.wrapping_add(capacity as u64);
    let mut tail = from;
    while tail < scan_end {
        // SAFETY: `tail & mask` < capacity and frames are 8-aligned (caller), so the frame
        // starts inside the first view with its commit word aligned.
        let at = unsafe { ring.add((tail & mask) as usize) };
        // SAFETY: as above.
        if !committed(unsafe { commit_word_at(at) }, tail) {
            break;
        }
        // SAFETY: a committed frame inside the double view.
        let (len, flags) = unsafe { (read_len(at), at.add(FLAGS_OFFSET).cast::<u32>().read_volatile()) };
        let fits = match flags {
            FLAG_HOLE => len == HOLE_LEN,
            _ => len <= max_len,
        };
        if !fits {
            break;
        }
        tail += frame_len(header_len, len, align) as u64;
    }
    tail
}
