//! What a publish or a receive returns when it fails: [`PublishError`] and
//! [`ReceiveError`], small `Copy` values, and [`Broken`], what both say of a broken
//! channel.
//!
//! The hot path moves no strings: a refused offer is one byte, and the sentence saying
//! what a peer broke, and where, is built only on the cold failure path and kept by the
//! handle (`crate::fault`). `?` turns either into an [`Error`](crate::Error), which
//! holds them; nothing here uses it.

use std::fmt;

/// Most numbers one `publish_gap` call declares lost: far below the counter's range, so a
/// caller's arithmetic slip cannot exhaust the channel's sequence numbers; and the most
/// one hole frame may declare, which subscribers check.
pub const MAX_GAP: u64 = u32::MAX as u64;

/// Why a publish failed (`offer`, `offer_batch`, `claim`, `send`, `send_timeout`,
/// `ClaimBytes::commit_len`, and with the `tokio` feature `send_async`). `Copy` and at most 16 bytes, so returning it costs the hot
/// path nothing; `Display` says what was wrong and what to do.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-publish-error-{}", std::process::id());
/// use salias::PublishError;
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).capacity(4096))?;
/// let mut publisher = channel.publisher()?;
/// loop {
///     match publisher.offer(&Tick { seq: 0 }) {
///         Ok(()) => {}
///         Err(PublishError::Backpressured) => break, // full: retry later, or `send`
///         // A broken channel: the handle keeps the details.
///         Err(PublishError::Corrupt) => panic!("{:?}", publisher.fault()),
///         Err(other) => return Err(other.into()), // `?` works too
///     }
/// }
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PublishError {
    /// The ring has no room for the message now; nothing was written. Retry later.
    Backpressured,
    /// A blocking send gave up after its timeout; nothing was written.
    TimedOut,
    /// Mpsc: the ring is full and the subscriber has gone (dropped, or its process died),
    /// so nobody will release room; nothing was written. `send`, `send_timeout` and
    /// `send_async` return it instead of waiting. Reported once per departure: the next
    /// call waits for a next subscriber, which resumes where the last one stopped, as a
    /// publisher that started before any subscriber waits for the first
    /// ([`Publisher::subscribers`](crate::Publisher::subscribers) says who is there).
    NoSubscriber,
    /// A raw message is larger than the channel (or the claim) accepts.
    MessageTooLarge {
        /// The message length in bytes.
        len: usize,
        /// The largest length accepted, in bytes.
        max: u32,
    },
    /// A raw message for a typed channel does not have the type's exact size.
    WrongMessageSize {
        /// The message length in bytes.
        len: usize,
        /// The channel's message type size in bytes.
        expected: u32,
    },
    /// `Publisher::offer_packed` was given bytes that are not a whole number of messages
    /// of the size it was told.
    PackedLength {
        /// The bytes given.
        len: usize,
        /// The size of each message, in bytes.
        size: u32,
    },
    /// `Publisher::publish_gap` was asked to declare more numbers lost in one call than
    /// it accepts ([`MAX_GAP`](crate::error::MAX_GAP)).
    GapTooLarge {
        /// The count asked for.
        count: u64,
    },
    /// Shared memory holds a value that breaks the protocol (a crashed, buggy or hostile
    /// peer); `fault()` on the handle says what and where.
    Corrupt,
    /// Another process truncated the channel's shared memory while it was mapped here.
    Truncated,
    /// The handle was inherited across `fork()`: its slot belongs to the parent process.
    Inherited,
    /// `send_async` was polled outside a tokio runtime (the `tokio` feature).
    NoRuntime,
    /// The tokio runtime `send_async` waited in is shutting down (the `tokio` feature).
    RuntimeShutDown,
    /// tokio's reactor refused to watch the handle's readiness descriptor (the `tokio`
    /// feature): epoll's watch limit or memory ran out.
    Reactor,
}

/// Why a receive failed (`try_recv`, `drain`, `recv`, `recv_timeout`, and with the `tokio`
/// feature `recv_async`, `poll_recv`). `Copy` and at most 12 bytes; `Display` says what
/// was wrong and what to do.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-receive-error-{}", std::process::id());
/// use std::time::Duration;
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut subscriber = channel.subscriber()?;
/// let nothing = subscriber.recv_timeout(Duration::from_millis(1)).map(|t| t.seq);
/// assert_eq!(nothing, Err(salias::ReceiveError::TimedOut));
/// assert!(subscriber.fault().is_none()); // a timeout breaks nothing
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReceiveError {
    /// A blocking receive gave up after its timeout.
    TimedOut,
    /// Shared memory holds a value that breaks the protocol (a crashed, buggy or hostile
    /// peer); `fault()` on the handle says what and where.
    Corrupt,
    /// Another process truncated the channel's shared memory while it was mapped here.
    Truncated,
    /// The handle was inherited across `fork()`: its slot belongs to the parent process.
    Inherited,
    /// `recv_async` or `poll_recv` was polled outside a tokio runtime (the `tokio` feature).
    NoRuntime,
    /// The tokio runtime the receive waited in is shutting down (the `tokio` feature).
    RuntimeShutDown,
    /// tokio's reactor refused to watch the handle's readiness descriptor (the `tokio`
    /// feature): epoll's watch limit or memory ran out.
    Reactor,
    /// A publisher demoted this tethered subscriber to lossy: it held the publisher back for
    /// longer than the channel's `tether_timeout`. Messages it had not released may be
    /// overwritten, so it hands out no more borrowed views; go on with
    /// [`Subscriber::into_lossy`](crate::Subscriber::into_lossy).
    Demoted,
    /// Every publisher has gone (dropped, or its process died) and everything they
    /// committed has been received. Reported once per departure: the next receive waits
    /// for (or, `try_recv`, looks for) a next publisher, whose messages arrive as usual.
    /// A subscriber that joined before any publisher waits for the first without this.
    Disconnected,
    /// A raw lossy receive found a message longer than the caller's buffer; nothing was
    /// received. Call again with a buffer of the channel's `max_message_size`.
    BufferTooSmall {
        /// The message length in bytes.
        len: u32,
        /// The buffer's length in bytes (at most `u32::MAX` shown).
        buffer: u32,
    },
}

const _: () = assert!(size_of::<PublishError>() <= 16 && size_of::<ReceiveError>() <= 12);

const CORRUPT: &str = "the channel holds data that breaks the salias protocol: a peer process crashed mid-write, is buggy, or is hostile; `fault()` on this handle says what was found and where";
const TRUNCATED: &str = "another process truncated the channel's shared memory while it was mapped here; what was in it is gone, so recreate the channel and find out which process shrank it";
const INHERITED: &str = "this handle was inherited across fork(): its slot belongs to the parent process; in the child, connect to the channel again";
const DEMOTED: &str = "a publisher demoted this subscriber to lossy: it held the publisher back for longer than the channel's tether_timeout, so messages it has not released may be overwritten and it hands out no more borrowed views; call `into_lossy()` and go on receiving copies, with every loss counted (or raise tether_timeout)";
const DISCONNECTED: &str = "every publisher of the channel has gone (dropped, or its process died) and everything they sent was received; receive again to wait for a next publisher, or stop";
const TIMED_OUT: &str = "the blocking call timed out before it could complete";
const NO_RUNTIME: &str = "the async call was polled outside a tokio runtime: await it in a task of a runtime built with IO enabled (`#[tokio::main]`, or `Builder::enable_io`)";
const RUNTIME_SHUT_DOWN: &str = "the tokio runtime this handle was waiting in is shutting down; nothing was received or written: await the call again in a running runtime";
const REACTOR: &str = "tokio's reactor could not watch this handle's readiness descriptor: epoll refused it, for lack of memory or because the per-user limit `fs.epoll.max_user_watches` is reached; raise the limit or close other watched descriptors";

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PublishError::Backpressured => f.write_str(
                "the ring is full: subscribers have not released enough space; nothing was written, retry later or use a blocking send",
            ),
            PublishError::TimedOut => f.write_str(TIMED_OUT),
            PublishError::NoSubscriber => f.write_str(
                "the ring is full and the channel's subscriber has gone (dropped, or its process died), so nobody will release room; nothing was written: what is in the ring waits for a next subscriber, so publish again to wait for one, or stop",
            ),
            PublishError::MessageTooLarge { len, max } => write!(
                f,
                "message of {len} bytes is larger than the channel's maximum of {max} bytes; split it or create the channel with a larger `max_message_size`"
            ),
            PublishError::WrongMessageSize { len, expected } => write!(
                f,
                "raw message of {len} bytes does not fit this typed channel, whose messages are exactly {expected} bytes"
            ),
            PublishError::PackedLength { len, size } => write!(
                f,
                "{len} bytes of packed messages are not a whole number of {size}-byte messages; pass the messages' exact size and only whole messages"
            ),
            PublishError::GapTooLarge { count } => write!(
                f,
                "a gap of {count} sequence numbers is more than one `publish_gap` call declares (at most {}); declare it in several calls",
                MAX_GAP
            ),
            PublishError::Corrupt => f.write_str(CORRUPT),
            PublishError::Truncated => f.write_str(TRUNCATED),
            PublishError::Inherited => f.write_str(INHERITED),
            PublishError::NoRuntime => f.write_str(NO_RUNTIME),
            PublishError::RuntimeShutDown => f.write_str(RUNTIME_SHUT_DOWN),
            PublishError::Reactor => f.write_str(REACTOR),
        }
    }
}

impl fmt::Display for ReceiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match *self {
            ReceiveError::TimedOut => TIMED_OUT,
            ReceiveError::Corrupt => CORRUPT,
            ReceiveError::Truncated => TRUNCATED,
            ReceiveError::Inherited => INHERITED,
            ReceiveError::NoRuntime => NO_RUNTIME,
            ReceiveError::RuntimeShutDown => RUNTIME_SHUT_DOWN,
            ReceiveError::Reactor => REACTOR,
            ReceiveError::Demoted => DEMOTED,
            ReceiveError::Disconnected => DISCONNECTED,
            ReceiveError::BufferTooSmall { len, buffer } => {
                return write!(
                    f,
                    "the next message is {len} bytes, longer than the {buffer}-byte buffer given; nothing was received: pass a buffer of the channel's max_message_size"
                );
            }
        })
    }
}

impl std::error::Error for PublishError {}
impl std::error::Error for ReceiveError {}

/// How a channel broke under a handle: what both error types share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Broken {
    Corrupt,
    Truncated,
    Inherited,
}

impl From<Broken> for PublishError {
    #[inline(always)]
    fn from(broken: Broken) -> Self {
        match broken {
            Broken::Corrupt => PublishError::Corrupt,
            Broken::Truncated => PublishError::Truncated,
            Broken::Inherited => PublishError::Inherited,
        }
    }
}

impl From<Broken> for ReceiveError {
    #[inline(always)]
    fn from(broken: Broken) -> Self {
        match broken {
            Broken::Corrupt => ReceiveError::Corrupt,
            Broken::Truncated => ReceiveError::Truncated,
            Broken::Inherited => ReceiveError::Inherited,
        }
    }
}
