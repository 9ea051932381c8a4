//! Named, zero-copy, shared-memory message channels between processes.
//!
//! A channel has a name any process can open, one ring per publisher in shared memory,
//! and subscribers that read messages in place. Publishing is a copy (or an in-place
//! write) plus one Release store; receiving is one Acquire load and a borrowed view.
//!
//! ```
//! use salias::{Config, FifoMpsc, SaliasMessage};
//! use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
//!
//! #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
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
//! The crate root holds what a first program needs; the modules hold the rest, one
//! concern each.
//!
//! - **Channels**: [`Channel`] and its kinds [`FifoMpsc`], [`FifoFanout`], [`OrderedMpsc`],
//!   [`OrderedFanout`] (raw bytes: [`RawFifoMpsc`] and friends); [`remove`] for cleanup.
//!   More in [`channel`]: [`remove_stale`](channel::remove_stale), what `reap` and a
//!   recovering `create` report.
//! - **Handles**: [`Publisher`] (`offer`, `offer_batch`, `claim`, `send`; a [`Claim`] or
//!   [`ClaimBytes`] is written in place), [`Subscriber`] (`try_recv`, `drain`, `recv`,
//!   `recv_timeout`, handing out [`Received`] views) and [`LossySubscriber`]; what else a
//!   receive reports (origin, losses, gaps) is in [`receive`].
//! - **Messages**: [`Message`] (zerocopy's plain-data traits plus a fingerprint), derived
//!   with [`SaliasMessage`], or raw [`Bytes`]; [`zerocopy`] re-exported; the fingerprint,
//!   the payload trait and [`MessageType`](message::MessageType) (a type described at run
//!   time, as C, C++ and Python programs describe theirs) in [`message`].
//! - **Kinds**: [`Fifo`] or [`Ordered`] × [`Mpsc`] or [`Fanout`]; the traits behind them in
//!   [`kind`].
//! - **Configuration**: [`Config`]; huge pages, name rules and limits in [`config`].
//! - **Errors**: [`Error`] from setup calls, whose `Display` says what went wrong and what
//!   to do; the small `Copy` [`PublishError`] and [`ReceiveError`] from publishing and
//!   receiving, with the full error of a broken channel in the handle's `fault()`; `?`
//!   turns them into an `Error`. Their details in [`error`].
//! - **Waiting**: how a blocking call waits, [`wait::WaitStrategy`] ([`wait::Adaptive`] by
//!   default); [`wait::Batching`] with [`Subscriber::recv_batch`] for throughput.
//! - **Trust**: [`Trust`], whose channels `connect_with` accepts beyond the caller's own.
//! - **Watching**: [`status`], a channel's live state without connecting, and who is on
//!   it ([`status::NameState`], [`status::SubscriberCount`]); see When the other side goes
//!   away.
//!
//! # Event loops and async
//!
//! A [`Subscriber`] is a descriptor (`AsFd`) that is readable while it has messages to
//! receive, and a [`Publisher`] one that becomes readable when room appears after a
//! refused offer: put them in any poll loop (epoll, mio's `SourceFd`, libuv) beside sockets
//! and timers. Each time a subscriber's descriptor fires, receive until `try_recv` says
//! `None`: that empty receive re-arms it. A raw epoll loop with rustix (Linux):
//!
//! ```
//! # #[cfg(target_os = "linux")] {
//! # use salias::{Config, SaliasMessage};
//! # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
//! # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
//! # #[repr(C)]
//! # struct Tick { seq: u64 }
//! # let name = format!("doc-epoll-{}", std::process::id());
//! use std::os::fd::AsFd;
//! use std::time::Duration;
//! use rustix::buffer::spare_capacity;
//! use rustix::event::{Timespec, epoll};
//!
//! let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
//! let mut subscriber = channel.subscriber()?;
//! let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
//! epoll::add(&epoll, subscriber.as_fd(), epoll::EventData::new_u64(1), epoll::EventFlags::IN)?;
//!
//! // Three bursts, with pauses the loop sleeps through in epoll_wait.
//! let mut publisher = channel.publisher()?;
//! let sender = std::thread::spawn(move || {
//!     for seq in 0..30 {
//!         if seq % 10 == 0 {
//!             std::thread::sleep(Duration::from_millis(20));
//!         }
//!         publisher.send(&Tick { seq }).expect("send");
//!     }
//! });
//! let (mut next, mut events) = (0, Vec::with_capacity(4));
//! while next < 30 {
//!     // Drain: the receive that finds nothing arms the descriptor again.
//!     loop {
//!         match subscriber.try_recv() {
//!             Ok(Some(tick)) => {
//!                 assert_eq!(tick.seq, next);
//!                 next += 1;
//!             }
//!             Ok(None) => break,
//!             // The sender dropped its publisher after everything was received.
//!             Err(salias::ReceiveError::Disconnected) => break,
//!             Err(other) => return Err(other.into()),
//!         }
//!     }
//!     if next < 30 {
//!         let patience = Timespec { tv_sec: 30, tv_nsec: 0 };
//!         epoll::wait(&epoll, spare_capacity(&mut events), Some(&patience))?;
//!         assert!(!events.is_empty(), "a message was due, yet the descriptor never fired");
//!         events.clear();
//!     }
//! }
//! sender.join().expect("the sender thread");
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! With the `tokio` feature, `Subscriber::recv_async` (cancel-safe) and `poll_recv`, and
//! `Publisher::send_async`, await those descriptors in a tokio runtime.
//!
//! # Choosing a kind
//!
//! | kind | order | subscribers | publisher's hot path | pick it for |
//! |---|---|---|---|---|
//! | [`FifoMpsc`] | per publisher | one | a copy and one Release store | a work queue, a request channel into one server |
//! | [`FifoFanout`] | per publisher | each sees every message | the same; held back by the slowest live subscriber | market data, telemetry fanned out to several readers |
//! | [`OrderedMpsc`] | one global order | one | plus a sequence number per message or batch (a `fetch_add` once two publishers share it) | an order entry gateway feeding one matching engine |
//! | [`OrderedFanout`] | one global order | each sees every message in that order | the same, held back by the slowest | an event log that every replica applies in the same order |
//!
//! Each comes typed (`FifoMpsc<Quote>`: fixed-size [`Message`] structs,
//! read in place) or raw ([`RawFifoMpsc`] and friends: byte messages of any length up to
//! [`Config::max_message_size`]).
//!
//! # When the other side goes away
//!
//! A subscriber receives everything its publishers committed, then hears once that every
//! one of them dropped or died ([`ReceiveError::Disconnected`]); an Mpsc publisher refused
//! for room hears once that its subscriber did ([`PublishError::NoSubscriber`]). Either
//! then waits for the next peer as it did before the first: start-up order is no error.
//! A drop is heard at once, a crash within 100 ms of a waiting handle's look.
//! [`Subscriber::live_publishers`], [`Publisher::subscribers`] and `name_state` (on every
//! handle: [`NameState`](status::NameState)) say who is there and whether the name still leads here.
//!
//! ```
//! # use salias::{Config, SaliasMessage};
//! # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
//! # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
//! # #[repr(C)]
//! # struct Tick { seq: u64 }
//! # let name = format!("doc-departure-{}", std::process::id());
//! use salias::ReceiveError;
//! let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
//! let mut subscriber = channel.subscriber()?;
//! let mut publisher = channel.publisher()?;
//! publisher.offer(&Tick { seq: 1 })?;
//! drop(publisher); // the last publisher leaves
//! assert_eq!(subscriber.recv()?.seq, 1); // everything it committed first
//! assert_eq!(subscriber.recv().map(|t| t.seq), Err(ReceiveError::Disconnected));
//! assert!(subscriber.try_recv()?.is_none()); // said once; a next publisher is received as usual
//! # Ok::<(), salias::Error>(())
//! ```
//!
//! # Crash and hostile-peer guarantees
//!
//! Each line is proved by a test in the repository's `tests/` folder, which CI runs.
//!
//! - **A process dies** (`tests/crash.rs`): a publisher killed mid-write leaves no half
//!   message (its frame has no commit word) and its slot is taken over where it stopped; an
//!   ordered publisher killed holding a sequence number makes subscribers report the gap
//!   ([`Subscriber::gaps`], [`Received::gap_before`]) instead of waiting, exactly as for
//!   numbers a live publisher declares lost ([`Publisher::publish_gap`]); a dead fanout
//!   subscriber is reaped so it holds no one back; a dead owner's channel is reported as
//!   [`Error::Stale`] and recovered by the next `create`.
//! - **A peer writes garbage** (`tests/hostile.rs`, `tests/fuzz_corpus.rs`): everything
//!   read from shared memory (geometry, positions, frame lengths, sequence numbers) is
//!   validated before use: a `Corrupt` error ([`ReceiveError::Corrupt`], with the
//!   details in [`Subscriber::fault`]; [`Error::Corrupt`] from setup calls) or a skipped
//!   frame, never an out-of-bounds access or a hang.
//! - **A peer truncates the objects** (`tests/truncation.rs`): a SIGBUS handler installed
//!   once per process maps a zero page over the lost page and poisons the channel; every
//!   later call on it returns [`PublishError::Truncated`] or [`ReceiveError::Truncated`]
//!   (setup calls [`Error::Corrupt`]) instead of the process dying.
//! - **/dev/shm is too small** (`tests/full_shm.rs`): `create` reserves every page up front
//!   and fails with [`Error::NoSpace`] (bytes needed and free, and the fix), leaving nothing
//!   behind.
//! - **Another user made the channel** (`tests/other_users.rs`): `connect` refuses it with
//!   [`Error::Untrusted`] unless a [`Trust`] names that user; symlinks at an object's name
//!   are never followed; objects whose mode was widened after creation are refused.
//! - **A name changes hands** (`tests/name_reuse.rs`): an owner's drop and
//!   [`remove_stale`](channel::remove_stale) unlink only the objects they created, never a newer channel's.
//! - **The process forks** (`tests/fork.rs`): in the child every inherited handle returns
//!   `Inherited` ([`PublishError::Inherited`], [`ReceiveError::Inherited`],
//!   [`Error::Inherited`]) and releases nothing, and the inherited mappings are private
//!   zero pages, so nothing reaches the parent's channels; the child connects again.
//! - **The hot paths** (`tests/no_alloc.rs`, `tests/no_syscall.rs`): no publish or receive
//!   path allocates or makes a system call; the two waiting paths that check liveness and
//!   truncation do so at most once a millisecond.
//!
//! A peer that writes into a message you are reading can change its bytes under you:
//! treat message contents as input, as you would a network packet. A process allowed to
//! write a channel's objects can always stop that channel from working; it cannot crash or
//! fool the others.
//!
//! # What a borrowed message assumes about peers
//!
//! A received message is a `&T` (or `&[u8]`) into the ring, and a claim a `&mut T`: that is
//! what makes salias zero-copy. Such a reference is sound while every process follows the
//! protocol: a publisher writes a frame only while it owns the room (between its
//! reservation and its commit, before which no subscriber reads it), and does not write it
//! again until every subscriber has released it. salias itself never breaks that rule, and
//! everything it *reads* to decide (commit words, lengths, positions) is loaded atomically
//! or copied and validated, never trusted through a reference. A peer that breaks the rule
//! (a buggy or hostile writer of the same memory) can change the bytes behind a borrowed
//! message; Rust's memory model calls that a data race, so salias narrows what it can do:
//! a message type is plain data that accepts every bit pattern (`Message`), so the worst a
//! reader sees is wrong values, never an invalid `T`, and no reference to bytes a peer may
//! write ever reaches salias's own bookkeeping. Who can write at all is narrowed too: each
//! process maps every ring read-only except the one whose publisher slot it holds, so a
//! subscriber, or a publisher of another ring, that writes a ring by mistake faults instead
//! of changing a frame. The `SAFETY` comments that hand out such references cite this
//! section.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![deny(clippy::multiple_unsafe_ops_per_block, clippy::missing_safety_doc)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
compile_error!(
    "salias runs on Linux and macOS (aarch64-apple-darwin, x86_64-apple-darwin): it needs POSIX shared memory and a futex or wait-on-address; this target has neither in the form salias uses"
);

// The README's code blocks, compiled and run as doc tests (with the `tokio` feature, which
// one of them needs: `cargo test --features tokio --doc ReadmeDoctests`).
#[cfg(all(doctest, feature = "tokio"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(feature = "tokio")]
mod asynchronous;
pub mod channel;
pub mod config;
pub mod error;
mod fault;
mod fnv;
mod handle_error;
pub mod kind;
mod latest;
pub mod message;
mod platform;
mod prefetch;
/// Public only for the loom models and the Miri and fault-injection tests (`--cfg
/// salias_testing`): not API.
#[cfg(any(loom, salias_testing))]
#[doc(hidden)]
pub mod protocol;
// Reached through `protocol` and `__private` in the test builds only.
#[cfg(not(any(loom, salias_testing)))]
#[allow(unreachable_pub, reason = "public in the test builds (--cfg salias_testing)")]
mod protocol;
mod publisher;
mod readiness;
mod region;
pub mod status;
mod subscriber;
mod trust;
pub mod wait;
#[cfg_attr(
    not(salias_testing),
    allow(
        unreachable_pub,
        reason = "the ring views are public in the test builds (--cfg salias_testing)"
    )
)]
mod wire;

// What a first program needs, at the root; the rest in the modules above and `receive`.
pub use channel::{
    Channel, FifoFanout, FifoMpsc, OrderedFanout, OrderedMpsc, RawFifoFanout, RawFifoMpsc, RawOrderedFanout,
    RawOrderedMpsc, remove,
};
pub use config::Config;
pub use error::{Error, PublishError, ReceiveError, Result};
pub use kind::{Fanout, Fifo, Mpsc, Ordered};
pub use message::{Bytes, Message};
pub use publisher::{Claim, ClaimBytes, Publisher};
pub use subscriber::{LossySubscriber, Received, ReceivedBytes, Subscriber};
pub use trust::Trust;

/// What a receive hands out besides the message: its [`MessageInfo`](receive::MessageInfo)
/// (publisher slot, sequence number, the gap before it), a lossy subscriber's
/// [`Copied`](receive::Copied) messages and [`Losses`](receive::Losses), and a subscriber's
/// [`Gaps`](receive::Gaps).
pub mod receive {
    pub use crate::subscriber::{Copied, Gaps, Loss, Losses, MessageInfo, Start};
}

/// Makes a `#[repr(C)]` struct that derives zerocopy's `FromBytes`, `IntoBytes`,
/// `Immutable` and `KnownLayout` a [`Message`], recording its fingerprint; refuses, at
/// compile time and saying what to use instead, pointers, references, heap types, `bool`,
/// `char`, enums, generics and a missing `#[repr(C)]` (zerocopy's derives check padding
/// and the other fields). Option `#[salias(name = "...", version = N, crate = "...")]`.
///
/// ```
/// use salias::{Message, SaliasMessage};
/// use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
///
/// #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
/// #[repr(C)]
/// #[salias(name = "Quote", version = 2)] // what every process must agree on
/// struct Quote {
///     instrument: u64,
///     bid: f64,
///     ask: f64,
/// }
/// assert_eq!((Quote::FINGERPRINT.name, Quote::FINGERPRINT.schema_version), ("Quote", 2));
/// ```
pub use salias_derive::SaliasMessage;

/// zerocopy, re-exported: a message type derives its `FromBytes`, `IntoBytes`, `Immutable`
/// and `KnownLayout` (see [`Message`]), and so does a type used as a field inside one. Its
/// derives need zerocopy's `derive` feature and name `::zerocopy`: depend on it directly,
/// `zerocopy = { version = "0.8", features = ["derive"] }`.
pub use zerocopy;

/// Items the derive macro expands to (always), and the test hooks of `--cfg salias_testing`;
/// not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::message::Fingerprint;
    pub use crate::message::derived::{DerivedMessage, FieldLayout, PlainData, assert_plain_data};
    #[cfg(salias_testing)]
    pub use crate::wire::layout::RawOffsets;
    /// The ring views and frame geometry, for the Miri models of the protocol on a
    /// heap-backed ring (`tests/miri.rs`).
    #[cfg(salias_testing)]
    pub use crate::wire::{
        frame::{RawHeader, Shape},
        ring::{ReadOnly, Ring, Writable},
    };

    /// Sets how long `connect` waits for an owner that is still initialising (default 2 s).
    #[cfg(salias_testing)]
    pub fn set_connect_init_wait(wait: std::time::Duration) {
        crate::region::set_init_wait(wait);
    }

    /// How many times subscribers of this process have woken publishers waiting for
    /// room: each is one futex call on a release.
    #[cfg(salias_testing)]
    pub fn room_wakes() -> u64 {
        crate::readiness::room_wakes()
    }

    /// The shared-memory object names behind a channel name: control block, rings. For
    /// tests and tools that inspect or forge the raw objects.
    #[cfg(salias_testing)]
    pub fn shm_object_names(name: &str) -> [String; 2] {
        let names = crate::platform::ObjectNames::of(name);
        [names.control, names.rings]
    }
}
