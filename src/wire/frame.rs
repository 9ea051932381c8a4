//! The frame format: the only code that knows what a frame looks like in a ring. Reading
//! and writing frames in place is `super::ring`'s job.
//!
//! A FIFO frame, and an Ordered frame of a raw channel (messages of any length):
//!
//! ```text
//! +0   commit  u64   position ^ COMMIT_KEY, stored last with Release
//! +8   len     u32   payload length
//! +12  flags   u32   0, or FLAG_HOLE (Ordered only)
//! +16  seq     u64   global sequence (Ordered only)
//! +HEADER            payload, aligned to the frame alignment
//! ```
//!
//! An Ordered frame of a typed channel, whose messages all have the type's length, stores
//! no length: its header is FIFO's 16 bytes, so a 64-byte message takes FIFO's 80-byte
//! frame (1.25 cache lines, not 1.5) with its payload 16-aligned at +16.
//!
//! ```text
//! +0   commit  u64   position ^ COMMIT_KEY, stored last with Release
//! +8   seq     u64   global sequence, with HOLE_BIT set in a hole frame
//! +16                payload: a message of the type's length, or a hole's count
//! ```
//!
//! A hole frame (Ordered only: `flags == FLAG_HOLE`, or `HOLE_BIT` in a typed channel's
//! sequence word) is no message: it says that the `count` numbers from `seq` on are lost.
//! Its payload is that `count`, a `u64`, and its length is `HOLE_LEN` whatever the
//! channel's message size. Sequence numbers stay below `HOLE_BIT` (a publisher refuses
//! numbers past [`MAX_SEQUENCE`]), so the bit never belongs to a number.
//!
//! A frame starts at a multiple of its alignment (at least 8, so the commit word is
//! aligned; at least 16 for Ordered, so its payload starts 16-aligned: at +16 in a typed
//! channel, at +32 after a raw channel's 24-byte header) and occupies `HEADER + payload`
//! rounded up to that alignment. The ordering of the commit word's store and load is
//! `crate::protocol::ring`'s.

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
/// Byte offset of the global sequence inside an Ordered frame of a raw channel.
pub(crate) const SEQ_OFFSET: usize = 16;
/// Byte offset of the sequence word (the number, and `HOLE_BIT`) inside an Ordered frame
/// of a typed channel: where other frames have their length and flags.
pub(crate) const TYPED_SEQ_OFFSET: usize = 8;
/// Set in a typed channel's sequence word when the frame is a hole frame.
pub(crate) const HOLE_BIT: u64 = 1 << 63;
/// The largest sequence number a publisher takes: numbers stay below `HOLE_BIT`. At a
/// billion messages a second they last 292 years; only a corrupted counter gets there.
pub(crate) const MAX_SEQUENCE: u64 = HOLE_BIT - 1;
/// Header bytes of a FIFO frame: commit word, length, flags.
pub(crate) const FIFO_HEADER_LEN: usize = 16;
/// Header bytes of an Ordered frame of a raw channel: a FIFO header and the global sequence.
pub(crate) const ORDERED_HEADER_LEN: usize = 24;
/// Header bytes of an Ordered frame of a typed channel: the commit word and the sequence
/// word, the length being the type's.
pub(crate) const TYPED_ORDERED_HEADER_LEN: usize = 16;
/// Least alignment of an Ordered frame. Its payload then starts 16-aligned, as a FIFO
/// frame's does (at +16). On an AMD host the 8-aligned payload after 88-byte frames cost
/// an Ordered `offer_batch(16)` a quarter of FIFO's throughput (0.74× of FIFO against
/// 1.01× with 96-byte frames); on an Intel host the 96-byte frame's extra half line cost
/// more than the alignment gained (0.82× against 0.93×). A typed channel's 80-byte frame
/// has neither cost; doc/performance-notes.md has the measurements.
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

/// The header bytes (before alignment) of the frames of a channel: FIFO, or Ordered with
/// `typed` messages of one length (no length field) or raw ones. The one rule, for
/// [`Shape`] and for the geometry of channels read from shared memory.
pub(crate) const fn mode_header_len(ordered: bool, typed: bool) -> usize {
    match (ordered, typed) {
        (false, _) => FIFO_HEADER_LEN,
        (true, true) => TYPED_ORDERED_HEADER_LEN,
        (true, false) => ORDERED_HEADER_LEN,
    }
}

/// The geometry of a channel's frames: whether they carry a sequence number, whether they
/// store their length, their alignment and where their payload starts. Built only by
/// [`Shape::new`], so the alignment is a power of two from 8 to [`MAX_ALIGN`] and the
/// payload starts at most `MAX_ALIGN` bytes in, which the ring view's bounds rely on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    ordered: bool,
    /// Ordered frames of a typed channel: every message's length, which no frame stores.
    implied_len: Option<usize>,
    align: usize,
    header: usize,
}

impl Shape {
    /// Frames of an Ordered (`ordered`) or FIFO channel whose payload needs `payload_align`,
    /// of messages all `fixed_len` bytes long (a typed channel) or of any length (`None`).
    pub const fn new(ordered: bool, payload_align: usize, fixed_len: Option<usize>) -> Shape {
        assert!(
            payload_align.is_power_of_two() && payload_align <= MAX_ALIGN,
            "salias message types may be aligned to at most 4096 bytes"
        );
        let least = if ordered { ORDERED_ALIGN } else { 8 };
        let align = if payload_align > least { payload_align } else { least };
        Shape {
            ordered,
            implied_len: if ordered { fixed_len } else { None },
            align,
            header: round_up(mode_header_len(ordered, fixed_len.is_some()), align),
        }
    }

    /// Whether frames carry a global sequence number (and may be hole frames).
    #[inline(always)]
    pub const fn ordered(self) -> bool {
        self.ordered
    }

    /// `Some(len)` for Ordered frames of a typed channel, which store no length: a message
    /// frame's payload is `len` bytes, a hole frame's `HOLE_LEN`.
    #[inline(always)]
    pub const fn implied_len(self) -> Option<usize> {
        self.implied_len
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
/// peer may have written it. FIFO frames read `sequence` and `flags` as 0; an Ordered frame
/// of a typed channel reads as the header it stands for (`len` the type's, or `HOLE_LEN`
/// and `FLAG_HOLE` for a hole), so readers validate one kind of header.
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

/// The header a typed channel's Ordered frame stands for, from its sequence word.
#[inline(always)]
pub(crate) const fn typed_ordered_header(word: u64, len: usize) -> RawHeader {
    if word & HOLE_BIT == 0 {
        RawHeader {
            len,
            sequence: word,
            flags: 0,
        }
    } else {
        RawHeader {
            len: HOLE_LEN,
            sequence: word & !HOLE_BIT,
            flags: FLAG_HOLE,
        }
    }
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
    // A typed channel's sequence word is where other frames have their length and flags.
    assert!(TYPED_SEQ_OFFSET == LEN_OFFSET && TYPED_SEQ_OFFSET + 8 == TYPED_ORDERED_HEADER_LEN);
    // A 64-byte message takes FIFO's 80-byte frame in both modes of a typed channel.
    assert!(Shape::new(true, 8, Some(64)).len(64) == 80 && Shape::new(false, 8, Some(64)).len(64) == 80);
    assert!(Shape::new(true, 16, Some(64)).header() == 16 && Shape::new(true, 1, None).header() == 32);
    let (len, flags) = split_len_and_flags(len_and_flags(0x1234_5678, FLAG_HOLE));
    assert!(len == 0x1234_5678 && flags == FLAG_HOLE);
};
