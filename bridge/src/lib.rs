//! Carries a salias channel across hosts over [zenoh](https://zenoh.io).
//!
//! An `out` bridge reads a local channel (any kind, typed or raw, through
//! `connect_as_bytes`) and publishes its messages on a zenoh key in batches; an `in`
//! bridge on another host subscribes to that key and publishes the messages into a local
//! channel of the same kind. What the far channel is travels with every sample (its kind,
//! largest message and type fingerprint), and the `in` side refuses a local channel that
//! differs with the error a local `connect` would give (`TypeMismatch`, `KindMismatch`).
//!
//! Guarantees across the hop:
//!
//! - **Per-publisher FIFO order** is kept: the `out` side forwards messages in the order
//!   its subscriber receives them, over one zenoh publisher, and the `in` side publishes
//!   them in arrival order from one publisher.
//! - **Ordered streams** carry each message's global sequence number; the `in` side
//!   reports every missing number as a gap ([`InStats::gaps`], [`InEvent::Gap`]), in the
//!   same [`salias::receive::Gaps`] a local Ordered subscriber keeps: a number lost because a far
//!   publisher died, and a batch that zenoh lost, are both reported, never a silent hole.
//!   It also declares each gap in the near channel ([`salias::Publisher::publish_gap`]),
//!   whose subscribers then report it in their own `gaps()` and `gap_before()`.
//!   FIFO streams number their messages too, so a lost batch is a reported gap there as
//!   well, in the bridge's stats and events only (a FIFO channel has no numbers).
//! - **A far `out` that dies** (its process, or its host) is reported by the `in` side
//!   ([`InEvent::OutLost`]) once zenoh closes the session: at once when the peer's
//!   socket closes, within zenoh's lease (10 s by default) when its host vanishes.
//! - **A killed `in`**, restarted with its state record (a small file named after the
//!   near channel and the key), reports exactly which messages of the stream it never
//!   delivered ([`InEvent::Undelivered`], [`InStats::undelivered`]); on an Ordered channel
//!   they are declared there as a gap. The record says where each run of published
//!   messages began and the near publisher slot's commit count then, which the near
//!   channel keeps after the publisher dies.
//! - **A far channel removed or replaced** under its name is noticed while `out` is idle
//!   ([`OutEvent`]): `out` follows the name to the new channel as a new stream, or stops
//!   with [`BridgeError::ChannelGone`] ([`OutConfig::exit_on_removal`]).
//! - **Backpressure** on the `in` side is a choice ([`Backpressure`]): block zenoh's
//!   callback (and so the far side), or drop and count; a near Mpsc channel left without
//!   a subscriber is waited for, or dropped into, the same way.
//!
//! ```no_run
//! use salias_bridge::{Bridge, InConfig, OutConfig, ZenohConfig};
//! // Host A: publish the local channel "quotes" on the zenoh key "desk/quotes".
//! let out = Bridge::out(OutConfig::new("quotes", "desk/quotes", ZenohConfig::explicit(&["tcp/0.0.0.0:7447"], &[])))?;
//! // Host B: feed the local channel "quotes" from it.
//! let inbound = Bridge::inbound(InConfig::new("desk/quotes", "quotes", ZenohConfig::explicit(&[], &["tcp/192.0.2.7:7447"])))?;
//! // "messages=… samples=… bytes=…" and "samples=… messages=… delivered=…"
//! println!("{} {}", out.stats(), inbound.stats());
//! # Ok::<(), salias_bridge::BridgeError>(())
//! ```

mod error;
mod inbound;
mod ledger;
mod local;
mod outbound;
mod report;
mod session;
mod wire;

pub use error::{BridgeError, Result};
pub use inbound::{Backpressure, InConfig, InEvent, InStats, Inbound};
pub use outbound::{Congestion, OutConfig, OutEvent, OutStats, Outbound};
pub use session::ZenohConfig;
pub use wire::StreamMeta;

/// Starts bridges. Each runs until its handle is stopped or dropped.
pub struct Bridge;

impl Bridge {
    /// Starts an `out` bridge: reads `config.channel` and publishes on `config.key`.
    ///
    /// Fails at once if the local channel cannot be read or zenoh cannot be joined.
    pub fn out(config: OutConfig) -> Result<Outbound> {
        Outbound::start(config)
    }

    /// Starts an `in` bridge (`in` is a Rust keyword): subscribes to `config.key` and
    /// publishes into `config.channel`, which it connects to, or creates for a raw stream,
    /// when the first sample says what the far channel is.
    #[doc(alias = "in")]
    pub fn inbound(config: InConfig) -> Result<Inbound> {
        Inbound::start(config)
    }
}

/// A stream id: random per `out` bridge, so a restarted one is told apart.
pub(crate) fn random_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish().max(1)
}
