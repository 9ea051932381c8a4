//! Subscribers: receive a message in place and release it, wait for one, drain many.

use std::ffi::c_void;

use crate::codes::{SALIAS_EMPTY, SALIAS_OK, salias_code};
use crate::entry::{Failure, call, out};
use crate::handles::{self, Object};
use crate::kinds::{SubscriberOps, View, receive_outcome};
use crate::publisher::timeout;

/// A subscriber handle: made by `salias_channel_subscriber`, freed by
/// `salias_subscriber_free`.
#[allow(non_camel_case_types)]
pub struct salias_subscriber {
    _opaque: [u8; 0],
}

/// A received message, in place in the ring: `data` is valid until the subscriber releases
/// it (`salias_subscriber_release`, or freeing the subscriber).
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub struct salias_message {
    /// The message's bytes (a typed channel's: one struct, aligned for it).
    pub data: *const c_void,
    /// Its length in bytes.
    pub len: usize,
    /// The publisher slot that sent it.
    pub publisher_slot: u32,
    /// Ordered channels: its global sequence number; 0 on FIFO channels.
    pub sequence: u64,
    /// Ordered channels: how many sequence numbers right before it were lost because their
    /// publishers died or declared them lost; 0 almost always.
    pub gap_before: u64,
}

impl From<View> for salias_message {
    fn from(view: View) -> Self {
        salias_message {
            data: view.data.cast(),
            len: view.len,
            publisher_slot: view.publisher_slot as u32,
            sequence: view.sequence,
            gap_before: view.gap_before,
        }
    }
}

#[inline(always)]
fn subscriber<'a>(handle: *mut salias_subscriber) -> Result<&'a mut dyn SubscriberOps, Failure> {
    // SAFETY: every exported function uses the reference within its call only, and the
    // header's contract keeps other threads and frees off the handle meanwhile.
    let found = unsafe {
        handles::get(handle, "a subscriber", |object| match object {
            Object::Subscriber(subscriber) => Some(subscriber),
            _ => None,
        })
    }?;
    Ok(found.as_mut())
}

/// The next message if one is committed, stored in `*message` (`SALIAS_OK`); `SALIAS_EMPTY`
/// when there is none. Never waits. The subscriber holds the message, and refuses other
/// receives with `SALIAS_ERROR_BUSY`, until `salias_subscriber_release`.
/// `SALIAS_ERROR_DISCONNECTED` once every publisher has gone and everything was received.
///
/// # Safety
/// `message` points to writable storage for a `salias_message`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_subscriber_try_recv(
    subscriber: *mut salias_subscriber,
    message: *mut salias_message,
) -> salias_code {
    call("salias_subscriber_try_recv", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(message, "message") }?;
        match self::subscriber(subscriber)?.try_recv()? {
            Some(view) => {
                *place = view.into();
                Ok(SALIAS_OK)
            }
            None => Ok(SALIAS_EMPTY),
        }
    })
}

/// Waits for the next message with the subscriber's wait strategy, for at most
/// `timeout_ns` nanoseconds (negative: as long as it takes), and stores it in `*message`
/// as `salias_subscriber_try_recv` does; `SALIAS_TIMED_OUT` if none came.
///
/// # Safety
/// As for `salias_subscriber_try_recv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_subscriber_recv(
    subscriber: *mut salias_subscriber,
    timeout_ns: i64,
    message: *mut salias_message,
) -> salias_code {
    call("salias_subscriber_recv", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(message, "message") }?;
        match self::subscriber(subscriber)?.recv(timeout(timeout_ns)) {
            Ok(view) => {
                *place = view.into();
                Ok(SALIAS_OK)
            }
            Err(failure) => receive_outcome(failure),
        }
    })
}

/// Releases the message the subscriber holds: its `data` is no longer valid, and the room
/// it took goes back to the publisher. `SALIAS_ERROR_NOT_HELD` if it holds none.
#[unsafe(no_mangle)]
pub extern "C" fn salias_subscriber_release(subscriber: *mut salias_subscriber) -> salias_code {
    call("salias_subscriber_release", || self::subscriber(subscriber)?.release())
}

/// What `salias_subscriber_drain` calls with each message; `message` is valid during the
/// call only. It must not unwind (throw) into salias.
#[allow(non_camel_case_types)]
pub type salias_handler = Option<unsafe extern "C" fn(context: *mut c_void, message: *const salias_message)>;

/// Hands up to `max` committed messages to `handler` (with `context`), each released after
/// its call, and stores how many in `*handled` (0 when there were none: `SALIAS_OK` still).
/// Never waits.
///
/// # Safety
/// `handler` is a function that may be called with `context`; `handled` points to a
/// writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_subscriber_drain(
    subscriber: *mut salias_subscriber,
    max: usize,
    handler: salias_handler,
    context: *mut c_void,
    handled: *mut usize,
) -> salias_code {
    call("salias_subscriber_drain", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(handled, "handled") }?;
        *place = 0;
        let handler = handler.ok_or_else(|| Failure::argument("handler is a null function pointer"))?;
        *place = self::subscriber(subscriber)?.drain(max, &mut |view| {
            let message = salias_message::from(view);
            // SAFETY: the caller's contract for `handler` and `context`; `message` lives
            // through the call.
            unsafe { handler(context, &message) };
        })?;
        Ok(SALIAS_OK)
    })
}

/// Copies up to `capacity` fixed-size messages (`size` bytes each, a typed channel's type
/// size) into the array at `messages`, one after another, and stores how many in `*count`.
/// Never waits. A message of another size (a raw channel's) stops the copy with
/// `SALIAS_ERROR_WRONG_MESSAGE_SIZE`, after the ones before it.
///
/// # Safety
/// `messages` points to `capacity * size` writable bytes; `count` points to a writable
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_subscriber_drain_into(
    subscriber: *mut salias_subscriber,
    messages: *mut c_void,
    size: usize,
    capacity: usize,
    count: *mut usize,
) -> salias_code {
    call("salias_subscriber_drain_into", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(count, "count") }?;
        *place = 0;
        let total = size.checked_mul(capacity).ok_or_else(|| {
            Failure::argument(format!(
                "{capacity} messages of {size} bytes overflow the address space"
            ))
        })?;
        if total == 0 {
            return Ok(SALIAS_OK);
        }
        if messages.is_null() {
            return Err(Failure::argument("messages is a null pointer"));
        }
        let subscriber = self::subscriber(subscriber)?;
        let mut copied = 0;
        let mut wrong = None;
        subscriber.drain(capacity, &mut |view| {
            if wrong.is_some() {
                return;
            }
            if view.len != size {
                wrong = Some(view.len);
                return;
            }
            // SAFETY: `copied < capacity` (drain hands at most `capacity`), so the target
            // is inside the caller's `capacity * size` bytes; the source is the message's
            // `size` bytes in the ring.
            unsafe {
                std::ptr::copy_nonoverlapping(view.data, messages.cast::<u8>().add(copied * size), size);
            }
            copied += 1;
        })?;
        *place = copied;
        if let Some(len) = wrong {
            return Err(Failure::new(
                crate::codes::SALIAS_ERROR_WRONG_MESSAGE_SIZE,
                format!(
                    "a message of {len} bytes does not fit the array's {size}-byte elements; it was consumed unread after {copied} copied. Use drain_into on typed channels only"
                ),
            ));
        }
        Ok(SALIAS_OK)
    })
}

/// The subscriber's readiness descriptor: readable when a message may be waiting, for
/// `poll`, `epoll` or an event loop (then `salias_subscriber_try_recv` until
/// `SALIAS_EMPTY`). Stores it in `*fd`; it stays the subscriber's (do not close it). Made
/// on the first call (`SALIAS_ERROR_BUSY` if that call comes while a message is held): from
/// then on every empty look arms it, a few system calls, so a subscriber that spins should
/// not ask for it.
///
/// # Safety
/// `fd` points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_subscriber_fd(
    subscriber: *mut salias_subscriber,
    fd: *mut std::ffi::c_int,
) -> salias_code {
    call("salias_subscriber_fd", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(fd, "fd") }?;
        *place = self::subscriber(subscriber)?.readiness_fd()?;
        Ok(SALIAS_OK)
    })
}

/// What the subscriber did so far.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Default)]
pub struct salias_subscriber_info {
    /// The subscriber slot it holds.
    pub slot: u32,
    /// Messages received.
    pub received: u64,
    /// Publisher slots held by a live process now (checks each holder: for monitoring,
    /// not for every receive).
    pub live_publishers: u32,
}

/// The subscriber's slot, count and live publishers. `SALIAS_ERROR_BUSY` while it holds a
/// message.
///
/// # Safety
/// `info` points to writable storage for a `salias_subscriber_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_subscriber_info_get(
    subscriber: *mut salias_subscriber,
    info: *mut salias_subscriber_info,
) -> salias_code {
    call("salias_subscriber_info_get", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(info, "info") }?;
        let subscriber = self::subscriber(subscriber)?;
        *place = salias_subscriber_info {
            slot: subscriber.slot()? as u32,
            received: subscriber.received()?,
            live_publishers: subscriber.live_publishers()?,
        };
        Ok(SALIAS_OK)
    })
}

/// Frees a subscriber handle (releasing a message it holds) and its slot.
#[unsafe(no_mangle)]
pub extern "C" fn salias_subscriber_free(subscriber: *mut salias_subscriber) -> salias_code {
    call("salias_subscriber_free", || {
        handles::remove(subscriber, "a subscriber", |object| {
            matches!(object, Object::Subscriber(_))
        })?;
        Ok(SALIAS_OK)
    })
}
