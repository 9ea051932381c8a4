//! The frame format: the only code that knows what a frame looks like in a ring. Reading
//! and writing frames in place is `super::ring`'s job.
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
//! aligned; at least 16 for Ordered, so its payload starts 16-aligned after the 24-byte
//! header, at +32) and occupies `HEADER + payload` rounded up to that alignment. The ordering of
//! the commit word's store and load is `crate::protocol::ring`'s.

/// A frame is committed when its first word equals its position XOR this key. The top bit
/// is set, so no reachable position maps to 0 and zeroed memory never looks committed.
pub(crate) const COMMIT_KEY: u64 = 0xA5C3_5A3C_96E1_69F0;

/// Byte offset of the length field inside a frame.
pub(crate) const LEN_OFFSET: usize = 8;
/// Byte offset of the flags word.
pub(crate) const FLAGS_OFFSET: usize = 12;
/// The flags of a hole frame; every other value but 0 is corrupt.
pub(crate) const FLAG_HOLE: u32 = 1;
/// The length field (and payload length) of a hole frame: its `u64` count.
pub(crate) const HOLE_LEN: usize = 8;
/// Byte offset of the global sequence inside an ordered frame.
pub(crate) const SEQ_OFFSET: usize = 16;
/// Header bytes of a FIFO frame: commit word, length, flags.
pub(crate) const FIFO_HEADER_LEN: usize = 16;
/// Header bytes of an Ordered frame: a FIFO header and the global sequence.
pub(crate) const ORDERED_HEADER_LEN: usize = 24;
/// Least alignment of an Ordered frame. Its payload then starts 16-aligned (at +32), as a
/// FIFO frame's does (at +16). On an AMD host the 8-aligned payload after 88-byte frames
/// cost an Ordered `offer_batch(16)` a quarter of FIFO's throughput (0.74× of FIFO against
/// 1.01× with 96-byte frames); on an Intel host the 96-byte frame's extra half line costs
/// more than the alignment gains (0.82× against 0.93×). doc/performance-notes.md has both,
/// and an 80-byte Ordered frame (FIFO's lines and alignment) measured on the Intel host.
pub(crate) const ORDERED_ALIGN: usize = 16;
/// Largest payload alignment a frame supports: the page size every mapping has.
pub(crate) const MAX_ALIGN: usize = 4096;

/// What the commit word of the frame at `pos` holds once that frame is committed.
#[inline(always)]
pub(crate) const fn commit_word(pos: u64) -> u64 {
    pos ^ COMMIT_KEY
}

pub(crate) const fn round_up(value: usize, align: usize) -> usize {
    (value + align - 1) & !(align - 1)
}

/// Bytes a frame of `payload` bytes occupies, for a mode whose header is `mode_header`
/// bytes and frames aligned to `align`. The one frame-length formula: [`Shape`] and the
/// geometry checks of channels read from shared memory both use it.
#[inline(always)]
pub(crate) const fn frame_len(mode_header: usize, payload: usize, align: usize) -> usize {
    round_up(round_up(mode_header, align) + payload, align)
}

/// The geometry of a channel's frames: whether they carry a sequence number, their
/// alignment and where their payload starts. Built only by [`Shape::new`], so the
/// alignment is a power of two from 8 to [`MAX_ALIGN`] and the payload starts at most
/// `MAX_ALIGN` bytes in, which the ring view's bounds rely on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    ordered: bool,
    align: usize,
    header: usize,
}

impl Shape {
    /// Frames of an Ordered (`ordered`) or FIFO channel whose payload needs `payload_align`.
    pub const fn new(ordered: bool, payload_align: usize) -> Shape {
        assert!(
            payload_align.is_power_of_two() && payload_align <= MAX_ALIGN,
            "salias message types may be aligned to at most 4096 bytes"
        );
        let least = if ordered { ORDERED_ALIGN } else { 8 };
        let align = if payload_align > least { payload_align } else { least };
        let mode_header = if ordered { ORDERED_HEADER_LEN } else { FIFO_HEADER_LEN };
        Shape {
            ordered,
            align,
            header: round_up(mode_header, align),
        }
    }

    /// Whether frames carry a global sequence number (and may be hole frames).
    #[inline(always)]
    pub const fn ordered(self) -> bool {
        self.ordered
    }

    /// Frames start at multiples of this; at least 8 so the commit word is always aligned.
    #[inline(always)]
    pub const fn align(self) -> usize {
        self.align
    }

    /// Offset of the payload from the frame start.
    #[inline(always)]
    pub const fn header(self) -> usize {
        self.header
    }

    /// Bytes a frame with `payload` bytes occupies in the ring.
    #[inline(always)]
    pub const fn len(self, payload: usize) -> usize {
        round_up(self.header + payload, self.align)
    }
}

/// A frame's header as read from a ring: every field still to be validated, since any
/// peer may have written it. FIFO frames read `sequence` and `flags` as 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawHeader {
    /// Payload length.
    pub len: usize,
    /// Global sequence number (Ordered).
    pub sequence: u64,
    /// 0, or `FLAG_HOLE` (Ordered).
    pub flags: u32,
}

/// The length and flags fields as the one word a publisher stores, so a reader never sees
/// one without the other.
#[inline(always)]
pub(crate) const fn len_and_flags(len: u32, flags: u32) -> u64 {
    let (len, flags) = (len.to_ne_bytes(), flags.to_ne_bytes());
    u64::from_ne_bytes([len[0], len[1], len[2], len[3], flags[0], flags[1], flags[2], flags[3]])
}

/// The inverse of [`len_and_flags`].
#[inline(always)]
pub(crate) const fn split_len_and_flags(word: u64) -> (u32, u32) {
    let b = word.to_ne_bytes();
    (
        u32::from_ne_bytes([b[0], b[1], b[2], b[3]]),
        u32::from_ne_bytes([b[4], b[5], b[6], b[7]]),
    )
}

const _: () = {
    // The length and flags share one 8-aligned word.
    assert!(LEN_OFFSET.is_multiple_of(8) && FLAGS_OFFSET == LEN_OFFSET + 4);
    assert!(SEQ_OFFSET.is_multiple_of(8) && SEQ_OFFSET + 8 == ORDERED_HEADER_LEN);
    let (len, flags) = split_len_and_flags(len_and_flags(0x1234_5678, FLAG_HOLE));
    assert!(len == 0x1234_5678 && flags == FLAG_HOLE);
};
