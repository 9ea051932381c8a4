//! Named, zero-copy, shared-memory message channels between processes.
//!
//! A channel has a name any process can open, one ring per publisher in shared memory,
//! and subscribers that read messages in place. Publishing is a copy (or an in-place
//! write) plus one Release store; receiving is one Acquire load and a borrowed view.
//!
//! ```
//! use salias::{Config, FifoMpsc, SaliasMessage};
//!
//! #[derive(SaliasMessage, Clone, Copy, Debug, PartialEq)]
//! #[repr(C)]
//! struct Quote {
//!     instrument: u64,
//!     bid: f64,
//!     ask: f64,
//! }
//!
//! # let name = format!("doc-quickstart-{}", std::process::id());
//! // In the owning process:
//! let channel = FifoMpsc::<Quote>::create(&Config::new(&name))?;
//! let mut publisher = channel.publisher()?;
//! publisher.offer(&Quote { instrument: 7, bid: 99.5, ask: 100.5 })?;
//!
//! // In any process (here the same one): `FifoMpsc::<Quote>::connect(&name)?`.
//! let mut subscriber = channel.subscriber()?;
//! let quote = subscriber.try_recv()?.expect("one message was published");
//! assert_eq!(quote.bid, 99.5);
//! # Ok::<(), salias::Error>(())
//! ```
//!
//! # Contents
//!
//! - **Channels**: [`Channel`] and its kinds [`FifoMpsc`], [`FifoFanout`], [`OrderedMpsc`],
//!   [`OrderedFanout`]; raw bytes with [`RawFifoMpsc`]; [`remove`] for cleanup.
//! - **Kinds**: ordering [`Mode`] ([`Fifo`], [`Ordered`]) × [`Topology`] ([`Mpsc`], [`Fanout`]).
//! - **Messages**: [`Message`] and `#[derive(SaliasMessage)]`, [`Bytes`], [`Fingerprint`].
//! - **Handles**: [`Publisher`] (`offer`, `offer_batch`, `claim`, `send`), [`Subscriber`]
//!   (`try_recv`, `poll`, `recv`, `recv_timeout`), and their borrowed views.
//! - **Configuration**: [`Config`], [`HugePages`].
//! - **Waiting**: [`WaitStrategy`] with [`BusySpin`], [`SpinThenYield`], [`Adaptive`].
//! - **Trust**: [`Trust`], whose channels `connect_with` accepts beyond the caller's own.
//! - **Errors**: [`Error`], one type whose `Display` says what went wrong and what to do.
//!
//! # Shared memory is untrusted
//!
//! Everything salias reads from shared memory (geometry, positions, frame lengths) is
//! validated before use; a crashed, buggy or hostile peer yields [`Error::Corrupt`], never
//! an out-of-bounds access. A peer that truncates a channel's objects while they are
//! mapped poisons the channel (every later call returns [`Error::Corrupt`]) instead of
//! killing this process with SIGBUS. `create` reserves all of a channel's memory up front
//! ([`Error::NoSpace`] if it does not fit), `connect` refuses channels of other users
//! unless a [`Trust`] names them ([`Error::Untrusted`]), and an owner removes only the
//! objects it created. A peer that writes into a message you are reading can change its
//! bytes under you: treat message contents as input, as you would a network packet.
//!
//! # fork()
//!
//! A child made by `fork()` must not act with its parent's handles: each inherited
//! channel, publisher and subscriber returns [`Error::Inherited`] and releases nothing
//! when dropped. The child connects again to get handles of its own.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod channel;
mod config;
mod error;
mod kind;
mod layout;
mod message;
mod platform;
#[doc(hidden)]
pub mod protocol;
mod publisher;
mod shared;
mod status;
mod subscriber;
mod trust;
mod wait;

pub use channel::{
    Channel, FifoFanout, FifoMpsc, OrderedFanout, OrderedMpsc, RawFifoFanout, RawFifoMpsc, RawOrderedFanout,
    RawOrderedMpsc, Reaped, remove, remove_stale,
};
pub use config::{Config, HugePages, MAX_CAPACITY, MAX_NAME_LEN, MAX_PRODUCERS, MAX_SUBSCRIBERS, validate_name};
pub use error::{Error, NameProblem, Result, Role, TrustProblem};
pub use kind::{Fanout, Fifo, GlobalOrder, Mode, Mpsc, MultiSubscriber, Ordered, Topology};
pub use message::{Bytes, Fingerprint, Message, Payload};
pub use publisher::{Claim, ClaimBytes, Publisher};
pub use salias_derive::SaliasMessage;
pub use status::{
    ChannelStatus, PublisherStatus, SlotHolder, SubscriberStatus, channel_status, channel_status_with, list_channels,
};
pub use subscriber::{Gaps, MessageInfo, Received, ReceivedBytes, Subscriber};
pub use trust::Trust;
pub use wait::{Adaptive, BusySpin, Park, SHORT_PARK, SpinThenYield, WaitStrategy};

/// zerocopy, re-exported: derive its `FromBytes`, `IntoBytes` and `Immutable` on a type to
/// use it as a field inside a salias message.
pub use zerocopy;

/// Items the derive macro expands to; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::layout::RawOffsets;
    pub use crate::message::FieldLayout;
    pub use bytemuck;
    pub use zerocopy;

    /// Implemented for every type that may be a field of a derived message.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a field of a salias message",
        label = "this field's type is not plain data",
        note = "message fields must be plain data: integers, floats, arrays of them, or types deriving zerocopy's `FromBytes`, `IntoBytes` and `Immutable` (re-exported as `salias::zerocopy`)"
    )]
    pub trait MessageField {}
    impl<F: zerocopy::FromBytes + zerocopy::IntoBytes + zerocopy::Immutable> MessageField for F {}

    pub const fn assert_field<F: MessageField + ?Sized>() {}

    /// Sets how long `connect` waits for an owner that is still initialising (default 2 s).
    pub fn set_connect_init_wait(wait: std::time::Duration) {
        crate::shared::set_init_wait(wait);
    }

    /// The shared-memory object names behind a channel name: control block, rings. For
    /// tests and tools that inspect or forge the raw objects.
    pub fn shm_object_names(name: &str) -> [String; 2] {
        let names = crate::platform::ObjectNames::of(name);
        [names.control, names.rings]
    }
    pub const fn assert_pod<F: bytemuck::Pod>() {}
}
