//! A channel's live state read by name without connecting, as `salias top` shows it: who
//! holds which slot, how far each publisher got, how far behind each subscriber is.

use std::ffi::c_char;

use salias::status::{ChannelStatus, PublisherStatus, SlotHolder, SubscriberKind, SubscriberStatus};

use crate::channel::{SALIAS_FIFO_FANOUT, SALIAS_FIFO_MPSC, SALIAS_ORDERED_FANOUT, SALIAS_ORDERED_MPSC};
use crate::codes::{SALIAS_OK, salias_code};
use crate::entry::{Failure, call, out, string};

/// Bytes of `salias_status.type_name`: the longest type name (64 bytes) and its NUL.
pub const SALIAS_TYPE_NAME_CAPACITY: usize = 65;

/// `salias_status.kind` of a channel whose creation never finished.
pub const SALIAS_KIND_UNKNOWN: u32 = 255;

/// Nobody holds the slot (or, for the owner: it kept the channel and left).
pub const SALIAS_SLOT_FREE: u32 = 0;
/// A process that still runs holds it.
pub const SALIAS_SLOT_ALIVE: u32 = 1;
/// A process that exited without giving it back holds it; a reap or the next claim frees it.
pub const SALIAS_SLOT_DEAD: u32 = 2;

/// What `salias_channel_status` reports about the channel as a whole.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub struct salias_status {
    /// False when the owner died while creating the channel: then only `owner_state` and
    /// `owner_pid` say anything.
    pub initialised: bool,
    /// Whether the owner died without removing the channel (`salias_remove` clears it).
    pub stale: bool,
    /// `SALIAS_FIFO_MPSC`, …, or `SALIAS_KIND_UNKNOWN` when not initialised.
    pub kind: u32,
    /// Whether the channel carries a described message type (else raw bytes).
    pub typed: bool,
    /// A typed channel's type name, NUL-terminated; empty for raw bytes.
    pub type_name: [c_char; SALIAS_TYPE_NAME_CAPACITY],
    /// A typed channel's message size in bytes; 0 for raw bytes.
    pub message_size: usize,
    /// Its schema version (typed channels).
    pub schema_version: u32,
    /// Bytes of ring per publisher.
    pub capacity: usize,
    /// The largest message in bytes.
    pub max_message_size: usize,
    /// `SALIAS_SLOT_FREE`, `_ALIVE` or `_DEAD`: the creating process's state.
    pub owner_state: u32,
    /// The creating process's id (0 when free).
    pub owner_pid: u32,
    /// The user owning the channel's shared memory.
    pub owner_uid: u32,
    /// Its permission bits, e.g. 0600.
    pub mode: u32,
    /// Ordered channels: global sequence numbers taken so far (`has_sequence`).
    pub sequence: u64,
    /// Whether `sequence` means anything (Ordered kinds).
    pub has_sequence: bool,
    /// Publisher slots; `publishers` arrays up to this long are filled.
    pub publisher_slots: u32,
    /// Subscriber slots; `subscribers` arrays up to this long are filled.
    pub subscriber_slots: u32,
}

/// One publisher slot.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Default)]
pub struct salias_publisher_status {
    /// `SALIAS_SLOT_FREE`, `_ALIVE` or `_DEAD`.
    pub state: u32,
    /// The holding process (0 when free).
    pub pid: u32,
    /// Messages committed.
    pub published: u64,
    /// Offers refused for lack of room.
    pub backpressured: u64,
    /// Bytes committed to its ring so far.
    pub position: u64,
    /// Ordered: the first sequence number taken and not yet committed (`has_pending`).
    pub pending: u64,
    /// Whether `pending` means anything.
    pub has_pending: bool,
}

/// One subscriber slot.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Default)]
pub struct salias_subscriber_status {
    /// `SALIAS_SLOT_FREE`, `_ALIVE` or `_DEAD`.
    pub state: u32,
    /// The holding process (0 when free).
    pub pid: u32,
    /// Bytes published and not yet released by it, over every ring.
    pub backlog_bytes: u64,
    /// Whether publishers overrun it rather than wait (Fanout).
    pub lossy: bool,
    /// A tethered subscriber demoted to lossy after the tether timeout.
    pub demoted: bool,
    /// Messages (FIFO) or sequence numbers (Ordered) it reported missing.
    pub missed: u64,
}

fn holder(holder: SlotHolder) -> (u32, u32) {
    match holder {
        SlotHolder::Free => (SALIAS_SLOT_FREE, 0),
        SlotHolder::Alive { pid } => (SALIAS_SLOT_ALIVE, pid),
        SlotHolder::Dead { pid } => (SALIAS_SLOT_DEAD, pid),
    }
}

fn kind_code(kind: &str) -> u32 {
    match kind {
        "FifoMpsc" => SALIAS_FIFO_MPSC,
        "FifoFanout" => SALIAS_FIFO_FANOUT,
        "OrderedMpsc" => SALIAS_ORDERED_MPSC,
        "OrderedFanout" => SALIAS_ORDERED_FANOUT,
        _ => SALIAS_KIND_UNKNOWN,
    }
}

fn summary(status: &ChannelStatus) -> salias_status {
    let (owner_state, owner_pid) = holder(status.owner);
    let mut type_name = [0; SALIAS_TYPE_NAME_CAPACITY];
    // The recorded name is at most 64 bytes (validated when read), so the NUL always fits.
    if let Some(recorded) = &status.recorded_type {
        for (place, byte) in type_name
            .iter_mut()
            .zip(recorded.name.bytes().take(SALIAS_TYPE_NAME_CAPACITY - 1))
        {
            *place = byte as c_char;
        }
    }
    salias_status {
        initialised: status.initialised,
        stale: status.is_stale(),
        kind: kind_code(&status.kind),
        typed: status.recorded_type.is_some(),
        type_name,
        message_size: status.message_type.as_ref().map_or(0, |(_, size)| *size),
        schema_version: status
            .recorded_type
            .as_ref()
            .map_or(0, |recorded| recorded.schema_version),
        capacity: status.capacity,
        max_message_size: status.max_message_size,
        owner_state,
        owner_pid,
        owner_uid: status.owner_uid,
        mode: status.mode,
        sequence: status.sequence.unwrap_or(0),
        has_sequence: status.sequence.is_some(),
        publisher_slots: status.publishers.len() as u32,
        subscriber_slots: status.subscribers.len() as u32,
    }
}

fn publisher(slot: &PublisherStatus) -> salias_publisher_status {
    let (state, pid) = holder(slot.holder);
    salias_publisher_status {
        state,
        pid,
        published: slot.published,
        backpressured: slot.backpressured,
        position: slot.position,
        pending: slot.pending.unwrap_or(0),
        has_pending: slot.pending.is_some(),
    }
}

fn subscriber(slot: &SubscriberStatus) -> salias_subscriber_status {
    let (state, pid) = holder(slot.holder);
    salias_subscriber_status {
        state,
        pid,
        backlog_bytes: slot.backlog_bytes,
        lossy: slot.kind == SubscriberKind::Lossy,
        demoted: slot.demoted,
        missed: slot.missed,
    }
}

/// Copies `slots` into the caller's array of `len` entries at `array` (null when `len` is 0).
///
/// # Safety
/// `array` is null or points to `len` writable entries.
unsafe fn fill<S, T>(slots: &[S], array: *mut T, len: usize, what: &str, convert: fn(&S) -> T) -> Result<(), Failure> {
    if len == 0 {
        return Ok(());
    }
    if array.is_null() {
        return Err(Failure::argument(format!("{what} is a null pointer with length {len}")));
    }
    // SAFETY: the caller's contract: `len` writable entries at `array`.
    let array = unsafe { std::slice::from_raw_parts_mut(array, len) };
    for (place, slot) in array.iter_mut().zip(slots) {
        *place = convert(slot);
    }
    Ok(())
}

/// Reads the live state of channel `name` without connecting to it (no slot taken, nothing
/// changed) into `*status`, and its first `publishers_len` publisher slots and first
/// `subscribers_len` subscriber slots into the arrays given (either may be null with length
/// 0). `status->publisher_slots` and `->subscriber_slots` say how many there are: call
/// again with longer arrays to see them all. Fails like `salias_channel_connect` for a name
/// that is not a channel, one still being created or one another user owns.
///
/// # Safety
/// `name` is a NUL-terminated string; `status` points to a writable `salias_status`;
/// `publishers` and `subscribers` are null or point to as many writable entries as their
/// lengths say.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_channel_status(
    name: *const c_char,
    status: *mut salias_status,
    publishers: *mut salias_publisher_status,
    publishers_len: usize,
    subscribers: *mut salias_subscriber_status,
    subscribers_len: usize,
) -> salias_code {
    call("salias_channel_status", || {
        // SAFETY: the caller's contract.
        let name = unsafe { string(name, "name") }?;
        // SAFETY: the caller's contract.
        let place = unsafe { out(status, "status") }?;
        let found = salias::status::channel_status(name)?;
        // SAFETY: the caller's contract for both arrays.
        unsafe {
            fill(
                &found.publishers,
                publishers,
                publishers_len,
                "publishers",
                self::publisher,
            )?;
            fill(
                &found.subscribers,
                subscribers,
                subscribers_len,
                "subscribers",
                self::subscriber,
            )?;
        }
        *place = summary(&found);
        Ok(SALIAS_OK)
    })
}
