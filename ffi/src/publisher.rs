//! Publishers: offer, batch offer, blocking send, claim and commit.

use std::ffi::c_void;
use std::time::Duration;

use crate::codes::{SALIAS_OK, salias_code};
use crate::entry::{Failure, Outcome, call, out};
use crate::handles::{self, Object};
use crate::kinds::PublisherOps;

/// A publisher handle: made by `salias_channel_publisher`, freed by `salias_publisher_free`.
#[allow(non_camel_case_types)]
pub struct salias_publisher {
    _opaque: [u8; 0],
}

/// One message of a batch: `len` bytes at `data`.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub struct salias_bytes {
    /// The message's bytes (may be null when `len` is 0).
    pub data: *const c_void,
    /// Its length in bytes.
    pub len: usize,
}

#[inline(always)]
fn publisher<'a>(handle: *mut salias_publisher) -> Result<&'a mut dyn PublisherOps, Failure> {
    // SAFETY: every exported function uses the reference within its call only, and the
    // header's contract keeps other threads and frees off the handle meanwhile.
    let found = unsafe {
        handles::get(handle, "a publisher", |object| match object {
            Object::Publisher(publisher) => Some(publisher),
            _ => None,
        })
    }?;
    Ok(found.as_mut())
}

/// `len` bytes at `data` as a slice.
///
/// # Safety
/// `data` is null with `len` 0, or points to `len` readable bytes valid for `'a`.
unsafe fn bytes<'a>(data: *const c_void, len: usize, what: &str) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(Failure::argument(format!("{what} is a null pointer with length {len}")));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
}

/// A timeout in nanoseconds; negative: none (wait as long as it takes).
pub(crate) fn timeout(nanoseconds: i64) -> Option<Duration> {
    u64::try_from(nanoseconds).ok().map(Duration::from_nanos)
}

/// Copies `len` bytes at `data` into the ring as one message: `SALIAS_OK`, or
/// `SALIAS_BACKPRESSURED` when there is no room (nothing written). A typed channel's
/// messages must be exactly its type's size (`SALIAS_ERROR_WRONG_MESSAGE_SIZE`).
///
/// # Safety
/// `data` points to `len` readable bytes (or is null with `len` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_publisher_offer(
    publisher: *mut salias_publisher,
    data: *const c_void,
    len: usize,
) -> salias_code {
    call("salias_publisher_offer", || {
        // SAFETY: the caller's contract.
        let message = unsafe { bytes(data, len, "data") }?;
        self::publisher(publisher)?.offer(message)
    })
}

/// Publishes as many of the `count` messages as fit, in order, as one batch, and stores how
/// many in `*published` (0 and `SALIAS_BACKPRESSURED` when none fit). A message that is too
/// large for the channel publishes none of them.
///
/// # Safety
/// `messages` points to `count` `salias_bytes` whose data are readable; `published` points
/// to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_publisher_offer_batch(
    publisher: *mut salias_publisher,
    messages: *const salias_bytes,
    count: usize,
    published: *mut usize,
) -> salias_code {
    call("salias_publisher_offer_batch", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(published, "published") }?;
        *place = 0;
        if count == 0 {
            return Ok(SALIAS_OK);
        }
        if messages.is_null() {
            return Err(Failure::argument(format!(
                "messages is a null pointer with count {count}"
            )));
        }
        // SAFETY: the caller's contract: `count` descriptions at `messages`.
        let messages = unsafe { std::slice::from_raw_parts(messages, count) };
        let publisher = self::publisher(publisher)?;
        offer_in_groups(publisher, messages.chunks(GROUP), place, |group, slices| {
            for (slice, message) in slices.iter_mut().zip(group) {
                // SAFETY: the caller's contract.
                *slice = unsafe { bytes(message.data, message.len, "a message's data") }?;
            }
            Ok(group.len())
        })
    })
}

/// Messages per `offer_batch` call of the batch functions: their slices live on the stack,
/// so a call allocates nothing.
const GROUP: usize = 64;

/// Offers each group `fill` turns into slices (returning how many), counting into `*place`,
/// until one is not taken whole: `SALIAS_BACKPRESSURED` if none was published.
fn offer_in_groups<'a, G>(
    publisher: &mut dyn PublisherOps,
    groups: impl Iterator<Item = G>,
    place: &mut usize,
    mut fill: impl FnMut(G, &mut [&'a [u8]; GROUP]) -> Result<usize, Failure>,
) -> Outcome {
    let mut slices: [&[u8]; GROUP] = [&[]; GROUP];
    for group in groups {
        let n = fill(group, &mut slices)?;
        let sent = publisher.offer_batch(&slices[..n])?;
        *place += sent;
        if sent < n {
            break;
        }
    }
    Ok(if *place == 0 {
        crate::codes::SALIAS_BACKPRESSURED
    } else {
        SALIAS_OK
    })
}

/// Publishes `count` fixed-size messages lying one after another at `messages` (`size`
/// bytes each, as an array of a typed channel's structs), as many as fit, in order; stores
/// how many in `*published` (0 and `SALIAS_BACKPRESSURED` when none fit).
///
/// # Safety
/// `messages` points to `count * size` readable bytes; `published` points to a writable
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_publisher_offer_array(
    publisher: *mut salias_publisher,
    messages: *const c_void,
    size: usize,
    count: usize,
    published: *mut usize,
) -> salias_code {
    call("salias_publisher_offer_array", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(published, "published") }?;
        *place = 0;
        let total = size
            .checked_mul(count)
            .ok_or_else(|| Failure::argument(format!("{count} messages of {size} bytes overflow the address space")))?;
        // SAFETY: the caller's contract.
        let all = unsafe { bytes(messages, total, "messages") }?;
        if count == 0 {
            return Ok(SALIAS_OK);
        }
        if size == 0 {
            return Err(Failure::argument("size is 0; give each message's size in bytes"));
        }
        let publisher = self::publisher(publisher)?;
        // One packed batch: one length check for all, no per-message slices.
        *place = publisher.offer_packed(all, size)?;
        Ok(if *place == 0 {
            crate::codes::SALIAS_BACKPRESSURED
        } else {
            SALIAS_OK
        })
    })
}

/// Like `salias_publisher_offer`, but waits for room with the publisher's wait strategy,
/// for at most `timeout_ns` nanoseconds (negative: as long as it takes): `SALIAS_OK`,
/// `SALIAS_TIMED_OUT`, or `SALIAS_ERROR_NO_SUBSCRIBER` when an Mpsc channel's subscriber
/// has gone with the ring full.
///
/// # Safety
/// As for `salias_publisher_offer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_publisher_send(
    publisher: *mut salias_publisher,
    data: *const c_void,
    len: usize,
    timeout_ns: i64,
) -> salias_code {
    call("salias_publisher_send", || {
        // SAFETY: the caller's contract.
        let message = unsafe { bytes(data, len, "data") }?;
        self::publisher(publisher)?.send(message, timeout(timeout_ns))
    })
}

/// Reserves room for a message of `len` bytes in the ring and stores where to write it in
/// `*data`: write the message there, then `salias_publisher_commit` (or `_abandon`). The
/// publisher holds the claim until then and refuses other calls with `SALIAS_ERROR_BUSY`.
/// `SALIAS_BACKPRESSURED` when there is no room.
///
/// # Safety
/// `data` points to writable storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_publisher_claim(
    publisher: *mut salias_publisher,
    len: usize,
    data: *mut *mut c_void,
) -> salias_code {
    call("salias_publisher_claim", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(data, "data") }?;
        match self::publisher(publisher)?.claim(len)? {
            Some(claimed) => {
                *place = claimed.cast();
                Ok(SALIAS_OK)
            }
            None => Ok(crate::codes::SALIAS_BACKPRESSURED),
        }
    })
}

/// Publishes the claim's first `len` bytes (at most what was claimed; a typed channel's:
/// exactly its size).
#[unsafe(no_mangle)]
pub extern "C" fn salias_publisher_commit(publisher: *mut salias_publisher, len: usize) -> salias_code {
    call("salias_publisher_commit", || {
        self::publisher(publisher)?.commit(Some(len))
    })
}

/// Abandons the claim: nothing is published.
#[unsafe(no_mangle)]
pub extern "C" fn salias_publisher_abandon(publisher: *mut salias_publisher) -> salias_code {
    call("salias_publisher_abandon", || self::publisher(publisher)?.abandon())
}

/// The publisher's readiness descriptor: readable when a send waiting for room could
/// proceed, for `poll`, `epoll` or an event loop. Stores it in `*fd`; it stays the
/// publisher's (do not close it). Made on the first call (`SALIAS_ERROR_BUSY` if that call
/// comes while a claim is held): from then on every refused offer arms it, a few system
/// calls, so a publisher that never waits in an event loop should not ask for it.
///
/// # Safety
/// `fd` points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_publisher_fd(
    publisher: *mut salias_publisher,
    fd: *mut std::ffi::c_int,
) -> salias_code {
    call("salias_publisher_fd", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(fd, "fd") }?;
        *place = self::publisher(publisher)?.readiness_fd()?;
        Ok(SALIAS_OK)
    })
}

/// What the publisher did so far: its slot, the messages it committed.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Default)]
pub struct salias_publisher_info {
    /// The publisher slot it holds.
    pub slot: u32,
    /// Messages committed.
    pub published: u64,
    /// Tethered subscribers (an Mpsc channel's one, and Fanout's default).
    pub tethered_subscribers: u32,
    /// Lossy Fanout subscribers.
    pub lossy_subscribers: u32,
}

/// The publisher's slot, count and subscribers.
///
/// # Safety
/// `info` points to writable storage for a `salias_publisher_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_publisher_info_get(
    publisher: *mut salias_publisher,
    info: *mut salias_publisher_info,
) -> salias_code {
    call("salias_publisher_info_get", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(info, "info") }?;
        let publisher = self::publisher(publisher)?;
        let subscribers = publisher.subscribers()?;
        *place = salias_publisher_info {
            slot: publisher.slot()? as u32,
            published: publisher.published()?,
            tethered_subscribers: subscribers.tethered,
            lossy_subscribers: subscribers.lossy,
        };
        Ok(SALIAS_OK)
    })
}

/// Frees a publisher handle (abandoning a claim it holds) and its slot.
#[unsafe(no_mangle)]
pub extern "C" fn salias_publisher_free(publisher: *mut salias_publisher) -> salias_code {
    call("salias_publisher_free", || {
        handles::remove(publisher, "a publisher", |object| {
            matches!(object, Object::Publisher(_))
        })?;
        Ok(SALIAS_OK)
    })
}
