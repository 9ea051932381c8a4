//! Channels: create, connect, free, claim publisher and subscriber slots, and the
//! functions on names (status, remove).

use std::ffi::c_char;

use salias::kind::Topology;
use salias::message::MessageType;
use salias::{Bytes, Channel, Fanout, Fifo, Mpsc, Ordered};

use crate::codes::{SALIAS_ERROR_INVALID_CONFIG, SALIAS_OK, salias_code};
use crate::config::{salias_config, salias_message_type, to_config, to_message_type};
use crate::entry::{Failure, Outcome, call, out, string};
use crate::handles::{self, Object};
use crate::kinds::{ChannelOps, Numbers};
use crate::publisher::salias_publisher;
use crate::subscriber::salias_subscriber;

/// Per-publisher FIFO order, one subscriber.
pub const SALIAS_FIFO_MPSC: u32 = 0;
/// Per-publisher FIFO order, every subscriber sees every message.
pub const SALIAS_FIFO_FANOUT: u32 = 1;
/// One global order across publishers, one subscriber.
pub const SALIAS_ORDERED_MPSC: u32 = 2;
/// One global order across publishers, every subscriber sees every message in that order.
pub const SALIAS_ORDERED_FANOUT: u32 = 3;

/// A channel handle: made by `salias_channel_create` or `_connect`, freed by
/// `salias_channel_free`. Publishers and subscribers made from it outlive it.
#[allow(non_camel_case_types)]
pub struct salias_channel {
    _opaque: [u8; 0],
}

/// What `salias_channel_info` reports.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Default)]
pub struct salias_channel_info {
    /// Bytes of ring per publisher.
    pub capacity: usize,
    /// The largest message in bytes (a typed channel's: its type's size).
    pub max_message_size: usize,
    /// Publisher slots.
    pub publishers: u32,
    /// Subscriber slots.
    pub subscribers: u32,
    /// Whether this handle created the channel (freeing it removes the name unless kept).
    pub is_owner: bool,
}

/// Calls `$f::<Mode, Topology>($args)` for the kind number `$kind`.
macro_rules! by_kind {
    ($kind:expr, $f:ident($($arg:expr),*)) => {
        match $kind {
            SALIAS_FIFO_MPSC => $f::<Fifo, Mpsc>($($arg),*),
            SALIAS_FIFO_FANOUT => $f::<Fifo, Fanout>($($arg),*),
            SALIAS_ORDERED_MPSC => $f::<Ordered, Mpsc>($($arg),*),
            SALIAS_ORDERED_FANOUT => $f::<Ordered, Fanout>($($arg),*),
            other => Err(Failure::argument(format!(
                "kind {other} is not a channel kind; use SALIAS_FIFO_MPSC, SALIAS_FIFO_FANOUT, SALIAS_ORDERED_MPSC or SALIAS_ORDERED_FANOUT"
            ))),
        }
    };
}

fn create<M: Numbers, K: Topology>(
    config: &salias::Config,
    max_message_size: usize,
    message_type: Option<&MessageType>,
) -> Result<Box<dyn ChannelOps>, Failure>
where
    Channel<Bytes, M, K>: ChannelOps + 'static,
{
    Ok(match message_type {
        Some(message_type) => {
            if max_message_size != 0 && max_message_size != message_type.size() {
                return Err(Failure::new(
                    SALIAS_ERROR_INVALID_CONFIG,
                    format!(
                        "config.max_message_size is {max_message_size}, but a typed channel's messages are its type's {} bytes; leave it 0",
                        message_type.size()
                    ),
                ));
            }
            Box::new(Channel::<Bytes, M, K>::create_typed(config, message_type)?)
        }
        None => {
            let max = if max_message_size == 0 { 4096 } else { max_message_size };
            Box::new(Channel::<Bytes, M, K>::create(&config.clone().max_message_size(max))?)
        }
    })
}

/// How `connect` checks the channel's message type.
pub enum Expect<'a> {
    /// A raw-bytes channel.
    Raw,
    /// A typed channel of exactly this type.
    Typed(&'a MessageType),
    /// Any channel, a typed one's messages as their bytes.
    AnyType,
}

/// Creates a channel of kind `kind` (`SALIAS_FIFO_MPSC`, …): typed when `message_type` is
/// given, else raw with messages of up to `max_message_size` bytes (0: 4096).
pub fn create_kind(
    kind: u32,
    config: &salias::Config,
    max_message_size: usize,
    message_type: Option<&MessageType>,
) -> Result<Box<dyn ChannelOps>, Failure> {
    by_kind!(kind, create(config, max_message_size, message_type))
}

/// Connects to the channel `name` of kind `kind`, checking its message type as `expect` says.
pub fn connect_kind(kind: u32, name: &str, expect: Expect<'_>) -> Result<Box<dyn ChannelOps>, Failure> {
    by_kind!(kind, connect(name, expect))
}

fn connect<M: Numbers, K: Topology>(name: &str, expect: Expect<'_>) -> Result<Box<dyn ChannelOps>, Failure>
where
    Channel<Bytes, M, K>: ChannelOps + 'static,
{
    Ok(match expect {
        Expect::Raw => Box::new(Channel::<Bytes, M, K>::connect(name)?),
        Expect::Typed(message_type) => Box::new(Channel::<Bytes, M, K>::connect_typed(name, message_type)?),
        Expect::AnyType => Box::new(Channel::<Bytes, M, K>::connect_as_bytes(name)?),
    })
}

fn store(channel: Box<dyn ChannelOps>, place: &mut *mut salias_channel) -> Outcome {
    *place = handles::insert(Object::Channel(channel))?;
    Ok(SALIAS_OK)
}

/// The channel a handle names.
pub(crate) fn channel<'a>(handle: *mut salias_channel) -> Result<&'a mut dyn ChannelOps, Failure> {
    // SAFETY: every exported function uses the reference within its call only, and the
    // header's contract keeps other threads and frees off the handle meanwhile.
    let found = unsafe {
        handles::get(handle, "a channel", |object| match object {
            Object::Channel(channel) => Some(channel),
            _ => None,
        })
    }?;
    Ok(found.as_mut())
}

/// Creates the channel `config` describes, of kind `kind` (`SALIAS_FIFO_MPSC`, …), carrying
/// messages of `message_type` (null: raw byte messages of up to `config->max_message_size`
/// bytes), and stores its handle in `*channel`. The name is taken until the handle is freed
/// (or for good with `keep_on_drop`).
///
/// # Safety
/// `config` points to a config whose strings are valid; `message_type` is null or points to
/// a valid description; `channel` points to writable storage for a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_channel_create(
    kind: u32,
    config: *const salias_config,
    message_type: *const salias_message_type,
    channel: *mut *mut salias_channel,
) -> salias_code {
    call("salias_channel_create", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(channel, "channel") }?;
        // SAFETY: the caller's contract.
        let config = unsafe { config.as_ref() }.ok_or_else(|| Failure::argument("config is a null pointer"))?;
        // SAFETY: the caller's contract.
        let (rust, max_message_size) = unsafe { to_config(config) }?;
        // SAFETY: the caller's contract.
        let message_type = match unsafe { message_type.as_ref() } {
            // SAFETY: the caller's contract.
            Some(described) => Some(unsafe { to_message_type(described) }?),
            None => None,
        };
        let made = create_kind(kind, &rust, max_message_size, message_type.as_ref())?;
        store(made, place)
    })
}

/// Connects to the channel called `name`, checking that it is of kind `kind` and carries
/// messages of `message_type` (null: raw byte messages), and stores its handle in
/// `*channel`. A channel of another kind or type is refused (`SALIAS_ERROR_KIND_MISMATCH`,
/// `SALIAS_ERROR_TYPE_MISMATCH`), as is one another user created.
///
/// # Safety
/// `name` is a NUL-terminated string; `message_type` is null or points to a valid
/// description; `channel` points to writable storage for a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_channel_connect(
    kind: u32,
    name: *const c_char,
    message_type: *const salias_message_type,
    channel: *mut *mut salias_channel,
) -> salias_code {
    call("salias_channel_connect", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(channel, "channel") }?;
        // SAFETY: the caller's contract.
        let name = unsafe { string(name, "name") }?;
        // SAFETY: the caller's contract.
        let made = match unsafe { message_type.as_ref() } {
            Some(described) => {
                // SAFETY: the caller's contract.
                let described = unsafe { to_message_type(described) }?;
                connect_kind(kind, name, Expect::Typed(&described))
            }
            None => connect_kind(kind, name, Expect::Raw),
        }?;
        store(made, place)
    })
}

/// Connects to the channel called `name` of kind `kind`, whatever its message type, as raw
/// bytes (every message is the type's bytes; offers must be exactly its size): for tools
/// that do not know the type.
///
/// # Safety
/// `name` is a NUL-terminated string; `channel` points to writable storage for a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_channel_connect_as_bytes(
    kind: u32,
    name: *const c_char,
    channel: *mut *mut salias_channel,
) -> salias_code {
    call("salias_channel_connect_as_bytes", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(channel, "channel") }?;
        // SAFETY: the caller's contract.
        let name = unsafe { string(name, "name") }?;
        let made = connect_kind(kind, name, Expect::AnyType)?;
        store(made, place)
    })
}

/// Frees a channel handle; the owner's removes the channel's name (unless it was created
/// with `keep_on_drop`). Publishers and subscribers made from it keep working. A second
/// free is refused with `SALIAS_ERROR_BAD_HANDLE`.
#[unsafe(no_mangle)]
pub extern "C" fn salias_channel_free(channel: *mut salias_channel) -> salias_code {
    call("salias_channel_free", || {
        handles::remove(channel, "a channel", |object| matches!(object, Object::Channel(_)))?;
        Ok(SALIAS_OK)
    })
}

/// Claims a publisher slot of the channel and stores the publisher's handle in
/// `*publisher`; `SALIAS_ERROR_NO_FREE_SLOT` when every slot is held.
///
/// # Safety
/// `publisher` points to writable storage for a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_channel_publisher(
    channel: *mut salias_channel,
    publisher: *mut *mut salias_publisher,
) -> salias_code {
    call("salias_channel_publisher", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(publisher, "publisher") }?;
        let made = self::channel(channel)?.publisher()?;
        *place = handles::insert(Object::Publisher(made))?;
        Ok(SALIAS_OK)
    })
}

/// Claims a subscriber slot of the channel and stores the subscriber's handle in
/// `*subscriber`. A Fanout subscriber joins at the current end of every ring; an Mpsc one
/// resumes where the previous subscriber stopped.
///
/// # Safety
/// `subscriber` points to writable storage for a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_channel_subscriber(
    channel: *mut salias_channel,
    subscriber: *mut *mut salias_subscriber,
) -> salias_code {
    call("salias_channel_subscriber", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(subscriber, "subscriber") }?;
        let made = self::channel(channel)?.subscriber()?;
        *place = handles::insert(Object::Subscriber(made))?;
        Ok(SALIAS_OK)
    })
}

/// The channel's geometry and whether this handle owns it.
///
/// # Safety
/// `info` points to writable storage for a `salias_channel_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_channel_info_get(
    channel: *mut salias_channel,
    info: *mut salias_channel_info,
) -> salias_code {
    call("salias_channel_info_get", || {
        // SAFETY: the caller's contract.
        let place = unsafe { out(info, "info") }?;
        let channel = self::channel(channel)?;
        *place = salias_channel_info {
            capacity: channel.capacity(),
            max_message_size: channel.max_message_size(),
            publishers: channel.publishers(),
            subscribers: channel.subscribers(),
            is_owner: channel.is_owner(),
        };
        Ok(SALIAS_OK)
    })
}

/// Frees the slots of publishers and subscribers whose processes died; stores how many of
/// each in `*publishers` and `*subscribers` (either may be null).
///
/// # Safety
/// `publishers` and `subscribers` are null or point to writable `uint32_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_channel_reap(
    channel: *mut salias_channel,
    publishers: *mut u32,
    subscribers: *mut u32,
) -> salias_code {
    call("salias_channel_reap", || {
        let reaped = self::channel(channel)?.reap();
        // SAFETY: the caller's contract: null or writable.
        if let Some(place) = unsafe { publishers.as_mut() } {
            *place = reaped.publishers;
        }
        // SAFETY: as above.
        if let Some(place) = unsafe { subscribers.as_mut() } {
            *place = reaped.subscribers;
        }
        Ok(SALIAS_OK)
    })
}

/// Removes the channel's names whatever state it is in; processes that have it open keep
/// working, new connects fail with `SALIAS_ERROR_NOT_FOUND`.
///
/// # Safety
/// `name` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_remove(name: *const c_char) -> salias_code {
    call("salias_remove", || {
        // SAFETY: the caller's contract.
        let name = unsafe { string(name, "name") }?;
        salias::remove(name)?;
        Ok(SALIAS_OK)
    })
}
