//! The bytes salias puts in shared memory. Every struct here is `#[repr(C)]`, holds
//! offsets and counts rather than pointers, and is only trusted after validation.
//!
//! # Control object layout
//!
//! ```text
//! offset 0             Header            identity, geometry, owner (written once, then READY)
//! HOT_OFFSET           Hot               global sequence, wake words: messages, room (a line each)
//! publishers_offset     PublisherSlot × P  holder line + progress line per publisher ring
//! subscribers_offset   SubscriberSlot × S
//! cursors_offset       Cursor × (S · P)  subscriber s's read position in ring p at s·P + p
//! ```
//!
//! # Ring object layout
//!
//! P rings of `capacity` bytes back to back; ring p starts at `p · capacity`. Each ring is
//! mapped twice in a row so a frame that crosses the end is contiguous in memory.
//!
//! Frames inside the rings are `super::frame`'s.

use std::sync::atomic::{AtomicU32, AtomicU64};

/// Longest channel name (the control block stores it), in bytes.
pub const MAX_NAME_LEN: usize = 64;
/// Most publisher slots a channel can have (the control block's slot tables and holder words are sized by it).
pub const MAX_PUBLISHERS: u32 = 64;
/// Most subscriber slots a channel can have.
pub const MAX_SUBSCRIBERS: u32 = 64;

/// First eight bytes of every control object.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"SALIAS\0\x01");
/// Bumped whenever anything in this file changes meaning.
pub(crate) const LAYOUT_VERSION: u32 = 10;
/// `ChannelInfo::wake_protocol` of the Linux layer: a sleeper takes an expedited
/// membarrier, so publishers look for sleepers behind a compiler fence only.
pub(crate) const WAKE_BY_BARRIER: u32 = 1;
/// `ChannelInfo::wake_protocol` of the portable layer (macOS): no barrier, so every
/// publisher and every sleeper runs a full fence of its own.
pub(crate) const WAKE_BY_FENCES: u32 = 2;

/// `Header::state` once the channel can be connected to.
pub(crate) const STATE_READY: u32 = 1;

/// Positions and sequence numbers read from shared memory must be below this; larger
/// values are corrupt (2^62 bytes at 100 GB/s is over a year of traffic), and the bound
/// keeps all arithmetic on them far from overflow.
pub(crate) const MAX_POSITION: u64 = 1 << 62;

/// Longest hugetlbfs directory path stored for connecting processes.
pub(crate) const MAX_DIR_LEN: usize = 256;
/// Longest message type name stored in the control block.
pub(crate) const MAX_TYPE_NAME_LEN: usize = 64;
/// Bytes of the control block that record a typed channel's fields (`super::fields`).
pub(crate) const MAX_FIELD_TABLE_LEN: usize = 2048;

/// Pads `T` to its own pair of cache lines so two writers never share one. 128 bytes
/// rather than 64 because x86 prefetches lines in adjacent pairs. Own type rather than
/// `crossbeam_utils::CachePadded` because shared memory needs a guaranteed `repr(C)` layout.
#[repr(C, align(128))]
pub(crate) struct CacheLine<T>(pub T);

impl<T> std::ops::Deref for CacheLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Who holds a slot, as one word so claiming, releasing and taking over from a dead holder
/// are each a single atomic step: `pid << 32 | (start_time as u32)`, or 0 when free. The
/// start time tells a live holder from a recycled pid.
#[repr(C)]
pub(crate) struct Holder {
    pub token: AtomicU64,
}

pub(crate) const SLOT_FREE: u64 = 0;

/// The message type a channel carries, as stored in the control block.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct TypeRecord {
    pub name: [u8; MAX_TYPE_NAME_LEN],
    pub name_len: u32,
    pub size: u32,
    pub align: u32,
    pub schema_version: u32,
    pub layout_hash: u64,
    /// Bytes of `field_table` in use; 0 for raw channels and types whose table did not fit.
    pub field_table_len: u32,
    pub _reserved: u32,
    /// The type's fields (`super::fields`), for tools and other languages.
    pub field_table: [u8; MAX_FIELD_TABLE_LEN],
}

/// The first bytes of a control object.
#[repr(C)]
pub(crate) struct Header {
    /// 0 while the owner fills in the control block.
    /// SYNC POINT header-ready: the owner stores READY with Release after writing `info`;
    /// a connecting process loads it with Acquire before reading `info`.
    pub state: AtomicU32,
    pub _reserved: u32,
    /// The creating process; `SLOT_FREE` once the owner detached and kept the channel.
    pub owner: Holder,
    pub info: ChannelInfo,
}

/// Written once by the owner before `state` turns READY; copied out and validated by
/// everyone else, never referenced in place.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct ChannelInfo {
    pub magic: u64,
    pub layout_version: u32,
    pub mode: u32,
    pub topology: u32,
    pub publishers: u32,
    pub subscribers: u32,
    pub huge_pages: u32,
    pub frame_align: u32,
    pub max_message_len: u32,
    pub name_len: u32,
    pub hugetlbfs_dir_len: u32,
    pub capacity: u64,
    pub publication_window: u64,
    pub control_len: u64,
    pub ring_object_len: u64,
    pub name: [u8; MAX_NAME_LEN],
    pub message_type: TypeRecord,
    pub hugetlbfs_dir: [u8; MAX_DIR_LEN],
    /// The permission bits the owner created both objects with; an object granting more
    /// has been changed since, and `connect` refuses it.
    pub permissions: u32,
    /// How the creating process's platform layer keeps a publisher from missing a
    /// sleeper (`WAKE_BY_BARRIER` or `WAKE_BY_FENCES`): processes of the two layers cannot
    /// share a channel without missing wake-ups, so `connect` refuses the other one.
    pub wake_protocol: u32,
    /// Device and inode of the ring object, so removing a stale channel unlinks its own
    /// rings and not those of a channel created under the name since.
    pub ring_device: u64,
    pub ring_inode: u64,
    /// Fanout: nanoseconds a tethered subscriber may hold a publisher back before that
    /// publisher demotes it to lossy; 0 for never.
    pub tether_timeout_ns: u64,
}

/// Words every participant writes, each on its own cache line.
#[repr(C)]
pub(crate) struct Hot {
    /// The global sequence (Ordered mode).
    pub sequence: CacheLine<Sequencer>,
    pub wake: CacheLine<WakeWord>,
    /// Publishers waiting for room sleep here; subscribers wake them after releasing.
    pub room: CacheLine<WakeWord>,
}

/// Ordered mode's global sequence, and which publisher may take numbers alone
/// (`protocol::take_sequence`, `protocol::join_takers`).
#[repr(C)]
pub(crate) struct Sequencer {
    /// The next number to take.
    pub next: AtomicU64,
    /// `SOLE_NOBODY`; the slot + 1 of the publisher that takes numbers alone, with a
    /// plain load and store instead of a locked add; or `SOLE_SHARED` with the last such
    /// slot + 1 in its low bits, once numbers are shared (every publisher adds, for the
    /// rest of the channel's life).
    pub sole_taker: AtomicU64,
}

/// The words a handle sleeps on and its peers wake it through (`protocol::wake`): a
/// subscriber waiting for messages, or a publisher waiting for room.
#[repr(C)]
#[derive(Debug, Default)]
pub struct WakeWords<A> {
    /// Subscribers asleep or about to sleep.
    pub sleepers: A,
    /// The futex word: bumped by each publisher that wakes the sleepers.
    pub seq: A,
    /// Non-zero once a publisher has taken on waking everyone now asleep; each new sleeper
    /// clears it. Later publishers skip the wake (a system call) while it is set.
    pub woken: A,
}

/// Lets a handle sleep in the kernel until a peer commits (or releases).
pub(crate) type WakeWord = WakeWords<AtomicU32>;

/// Progress a publisher reports about its ring; written only by the slot's holder.
#[repr(C)]
pub(crate) struct Progress {
    /// Position after the last committed frame (may lag the ring by frames in flight).
    pub tail: AtomicU64,
    /// Messages committed.
    pub published: AtomicU64,
    /// Offers refused for lack of space.
    pub backpressured: AtomicU64,
    /// Ordered mode: the first global sequence number this publisher has taken but not yet
    /// committed, `PENDING_NONE`, or `PENDING_TAKING` while its `fetch_add` is in flight.
    /// Lets a subscriber tell a number a live publisher is about to commit from one a dead
    /// publisher took with it.
    pub pending: AtomicU64,
    /// How many numbers from `pending` on are taken (a batch takes several).
    pub pending_count: AtomicU64,
}

pub(crate) const PENDING_NONE: u64 = u64::MAX;
pub(crate) const PENDING_TAKING: u64 = u64::MAX - 1;

/// `Sequencer::sole_taker` while no publisher takes numbers alone (a new channel's zeros).
pub(crate) const SOLE_NOBODY: u64 = 0;
/// `Sequencer::sole_taker`'s flag once numbers are shared.
pub(crate) const SOLE_SHARED: u64 = 1 << 63;

/// What a lossy subscriber of a ring needs to know about what its publisher may have
/// overwritten (`protocol::overrun`); written by the slot's holder once per limit refresh.
#[repr(C)]
#[derive(Debug, Default)]
pub struct OverwriteWords<A> {
    /// Positions below `frontier - capacity` may have been overwritten.
    pub frontier: A,
    /// Seqlock version of the mark below: odd while it is being written.
    pub version: A,
    /// A frame boundary (the tail at the last refresh) ...
    pub mark_position: A,
    /// ... and how many messages lie before it in the ring.
    pub mark_count: A,
}

#[repr(C)]
pub(crate) struct PublisherSlot {
    pub holder: CacheLine<Holder>,
    pub progress: CacheLine<Progress>,
    pub overwrite: CacheLine<OverwriteWords<AtomicU64>>,
}

#[repr(C)]
pub(crate) struct SubscriberSlot {
    pub holder: CacheLine<Holder>,
    /// Ordered mode: the next global sequence this slot expects, saved when a subscriber
    /// leaves an Mpsc channel so the next one resumes exactly where it stopped.
    pub next_sequence: CacheLine<AtomicU64>,
    /// Fanout: how this slot's subscriber reads (`SUBSCRIBER_TETHERED` ...) and what it missed.
    pub flow: CacheLine<FlowWords>,
}

/// A subscriber slot's kind and losses, written by its holder (and, to demote it, by a
/// publisher it held back), read by monitors.
#[repr(C)]
pub(crate) struct FlowWords {
    /// `SUBSCRIBER_TETHERED`, `SUBSCRIBER_LOSSY` or `SUBSCRIBER_DEMOTED`.
    pub kind: AtomicU64,
    /// Messages (FIFO) or sequence numbers (Ordered) it reported missing.
    pub missed: AtomicU64,
}

/// A subscriber that holds publishers back and loses nothing (the default).
pub(crate) const SUBSCRIBER_TETHERED: u64 = 0;
/// A subscriber publishers never wait for: it may be overrun, and reports what it missed.
pub(crate) const SUBSCRIBER_LOSSY: u64 = 1;
/// A tethered subscriber a publisher demoted to lossy after `tether_timeout`.
pub(crate) const SUBSCRIBER_DEMOTED: u64 = 2;

/// Cursor value of a fanout subscriber slot nobody holds: publishers skip it.
pub(crate) const CURSOR_IDLE: u64 = u64::MAX;
/// Set in the cursor of a lossy fanout subscriber (its position in the other bits, for
/// monitors): publishers skip every cursor at or above this, idle ones included, with the
/// one comparison they always made.
pub(crate) const CURSOR_UNTETHERED: u64 = 1 << 63;

/// A control-block struct that may be referenced in place: made of atomics only, so
/// every process reads and writes it through atomic operations and a shared reference to
/// it is sound whatever peers do. Sealed: raw ring bytes, or any struct with a plain
/// field, cannot be pointed at with a [`ShmPtr`].
///
/// # Safety
/// Every byte of the type must belong to an atomic (or padding no code reads), and the
/// type must be `#[repr(C)]` or `#[repr(transparent)]` over such fields.
pub(crate) unsafe trait InPlace: Sync + sealed::Sealed {}

mod sealed {
    pub(crate) trait Sealed {}
}

macro_rules! in_place {
    ($($type:ty),* $(,)?) => {$(
        impl sealed::Sealed for $type {}
        // SAFETY: atomics only (see each type's definition in this file or in std).
        unsafe impl InPlace for $type {}
    )*};
}
in_place!(
    AtomicU32,
    AtomicU64,
    Holder,
    Progress,
    WakeWord,
    Hot,
    PublisherSlot,
    SubscriberSlot,
    FlowWords,
    OverwriteWords<AtomicU64>,
);

impl<T: InPlace> sealed::Sealed for CacheLine<T> {}
// SAFETY: `CacheLine` is `#[repr(C, align(128))]` around one `T`: the padding is never read.
unsafe impl<T: InPlace> InPlace for CacheLine<T> {}

/// A pointer to an atomics-only control-block struct ([`InPlace`]), held by a handle that
/// also holds the `Arc<Shared>` owning that mapping, so the target outlives the pointer.
/// Plain `&'static` would lie about the lifetime; a raw pointer would need an `unsafe`
/// block at every use.
pub(crate) struct ShmPtr<T: InPlace>(std::ptr::NonNull<T>);

impl<T: InPlace> ShmPtr<T> {
    /// # Safety
    /// `target` must live in a mapping that outlives every use of the returned pointer.
    pub(crate) unsafe fn new(target: &T) -> Self {
        ShmPtr(std::ptr::NonNull::from(target))
    }

    #[inline(always)]
    pub(crate) fn get(&self) -> &T {
        // SAFETY: `new`'s contract: the mapping outlives this pointer; `T: InPlace` is
        // atomics only, so the shared reference aliases nothing a peer writes plainly.
        unsafe { self.0.as_ref() }
    }
}

// SAFETY: `T` is atomics-only shared-memory state (`InPlace: Sync`), reachable from any
// thread.
unsafe impl<T: InPlace> Send for ShmPtr<T> {}
// SAFETY: as above.
unsafe impl<T: InPlace> Sync for ShmPtr<T> {}

/// Makes a handle `!Sync`: its methods take `&mut self` and it must have one user at a
/// time (one writer per ring, one reader per subscriber slot).
pub(crate) type SingleUser = std::marker::PhantomData<std::cell::Cell<()>>;

/// A subscriber's read position in one ring: everything before it has been released.
pub(crate) type Cursor = CacheLine<AtomicU64>;

pub(crate) const HOT_OFFSET: usize = size_of::<Header>().next_multiple_of(128);

/// Where each table lives in a control object with `publishers` × `subscribers` slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ControlLayout {
    pub publishers_offset: usize,
    pub subscribers_offset: usize,
    pub cursors_offset: usize,
    pub len: usize,
}

impl ControlLayout {
    pub(crate) fn new(publishers: u32, subscribers: u32) -> Self {
        debug_assert!(publishers <= MAX_PUBLISHERS && subscribers <= MAX_SUBSCRIBERS);
        let publishers_offset = HOT_OFFSET + size_of::<Hot>();
        let subscribers_offset = publishers_offset + publishers as usize * size_of::<PublisherSlot>();
        let cursors_offset = subscribers_offset + subscribers as usize * size_of::<SubscriberSlot>();
        let len = cursors_offset + (publishers as usize * subscribers as usize) * size_of::<Cursor>();
        ControlLayout {
            publishers_offset,
            subscribers_offset,
            cursors_offset,
            len,
        }
    }
}

/// Byte offsets of what hostile-memory tests and inspection tools poke at.
#[cfg(salias_testing)]
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct RawOffsets {
    pub state: usize,
    pub owner: usize,
    pub magic: usize,
    pub layout_version: usize,
    pub wake_protocol: usize,
    pub capacity: usize,
    pub publishers: usize,
    pub control_len: usize,
    pub huge_pages: usize,
    pub name_len: usize,
    /// The message type's field table and its length (`super::fields`).
    pub field_table: usize,
    pub field_table_len: usize,
    pub sequence: usize,
    pub sole_taker: usize,
    pub publisher_slot: usize,
    pub publisher_slot_size: usize,
    /// Within a publisher slot.
    pub progress_tail: usize,
    pub progress_pending: usize,
    pub cursors: usize,
    pub cursor_size: usize,
    pub frame_len: usize,
    /// The sequence of an Ordered frame of a raw channel.
    pub frame_sequence: usize,
    /// The sequence word (the number, and the hole's mark) of an Ordered frame of a typed
    /// channel.
    pub typed_frame_sequence: usize,
    /// The hole's mark in that word.
    pub typed_hole_bit: u64,
    /// Where the payload of an Ordered frame of a typed channel of an 8-aligned type
    /// starts (a hole frame's count).
    pub ordered_payload: usize,
    pub len: usize,
}

#[cfg(salias_testing)]
impl RawOffsets {
    pub fn new(publishers: u32, subscribers: u32) -> Self {
        use std::mem::offset_of;
        let layout = ControlLayout::new(publishers, subscribers);
        let info = offset_of!(Header, info);
        RawOffsets {
            state: offset_of!(Header, state),
            owner: offset_of!(Header, owner),
            magic: info + offset_of!(ChannelInfo, magic),
            layout_version: info + offset_of!(ChannelInfo, layout_version),
            wake_protocol: info + offset_of!(ChannelInfo, wake_protocol),
            capacity: info + offset_of!(ChannelInfo, capacity),
            publishers: info + offset_of!(ChannelInfo, publishers),
            control_len: info + offset_of!(ChannelInfo, control_len),
            huge_pages: info + offset_of!(ChannelInfo, huge_pages),
            name_len: info + offset_of!(ChannelInfo, name_len),
            field_table: info + offset_of!(ChannelInfo, message_type) + offset_of!(TypeRecord, field_table),
            field_table_len: info + offset_of!(ChannelInfo, message_type) + offset_of!(TypeRecord, field_table_len),
            sequence: HOT_OFFSET + offset_of!(Hot, sequence) + offset_of!(Sequencer, next),
            sole_taker: HOT_OFFSET + offset_of!(Hot, sequence) + offset_of!(Sequencer, sole_taker),
            publisher_slot: layout.publishers_offset,
            publisher_slot_size: size_of::<PublisherSlot>(),
            progress_tail: offset_of!(PublisherSlot, progress) + offset_of!(Progress, tail),
            progress_pending: offset_of!(PublisherSlot, progress) + offset_of!(Progress, pending),
            cursors: layout.cursors_offset,
            cursor_size: size_of::<Cursor>(),
            frame_len: super::frame::LEN_OFFSET,
            frame_sequence: super::frame::SEQ_OFFSET,
            typed_frame_sequence: super::frame::TYPED_SEQ_OFFSET,
            typed_hole_bit: super::frame::HOLE_BIT,
            ordered_payload: super::frame::Shape::new(true, 8, Some(8)).header(),
            len: layout.len,
        }
    }
}

const _: () = {
    assert!(size_of::<CacheLine<Holder>>() == 128);
    assert!(std::mem::offset_of!(Header, info) == 16);
    assert!(size_of::<PublisherSlot>() == 384);
    assert!(size_of::<SubscriberSlot>() == 384);
    // Idle cursors are skipped as untethered ones are; no position reaches the flag.
    assert!(CURSOR_IDLE & CURSOR_UNTETHERED != 0 && MAX_POSITION < CURSOR_UNTETHERED);
    assert!(size_of::<Cursor>() == 128);
    assert!(size_of::<Hot>() == 384);
    assert!(HOT_OFFSET.is_multiple_of(128));
};
