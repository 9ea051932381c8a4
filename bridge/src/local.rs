//! Every call the bridge makes on a local salias channel, and the dispatch over the four
//! kinds, which a stream only learns at run time. The hot path (`poll`, `recv_timeout`,
//! `offer`, `send_timeout`) is here and nowhere else, so a change in those signatures is
//! a change to this file alone.

use std::time::Duration;

use salias::{
    Bytes, Channel, Config, Fanout, Fifo, Mpsc, Ordered, PublishError, Publisher, ReceiveError, Subscriber,
    config::RawChannel, kind::Mode, kind::Topology, receive::MessageInfo, status::ChannelStatus, status::NameState,
};

use crate::error::{BridgeError, Result};
use crate::wire::StreamMeta;

/// A message's global sequence number, or 0 where the mode has none.
trait SequenceOf {
    fn sequence_or_zero(&self) -> u64;
}

impl SequenceOf for MessageInfo<Fifo> {
    fn sequence_or_zero(&self) -> u64 {
        0
    }
}

impl SequenceOf for MessageInfo<Ordered> {
    fn sequence_or_zero(&self) -> u64 {
        self.sequence()
    }
}

/// Applies `$body` to the handle inside whichever kind `$value` holds.
macro_rules! each_kind {
    ($enum:ident, $value:expr, $handle:pat => $body:expr) => {
        match $value {
            $enum::FifoMpsc($handle) => $body,
            $enum::FifoFanout($handle) => $body,
            $enum::OrderedMpsc($handle) => $body,
            $enum::OrderedFanout($handle) => $body,
        }
    };
}

/// The local channel an `out` bridge reads, as raw bytes.
pub(crate) enum Source {
    FifoMpsc(Subscriber<Bytes, Fifo, Mpsc>),
    FifoFanout(Subscriber<Bytes, Fifo, Fanout>),
    OrderedMpsc(Subscriber<Bytes, Ordered, Mpsc>),
    OrderedFanout(Subscriber<Bytes, Ordered, Fanout>),
}

fn subscribe<M: Mode, K: Topology>(name: &str) -> salias::Result<Subscriber<Bytes, M, K>> {
    Channel::<Bytes, M, K>::connect_as_bytes(name)?.subscriber()
}

impl Source {
    /// Connects to `name` whatever its message type, and takes a subscriber slot.
    pub(crate) fn connect(status: &ChannelStatus) -> Result<Source> {
        let name = status.name.as_str();
        let doing = || format!("subscribing to the local channel \"{name}\"");
        let source = match status.kind.as_str() {
            "FifoMpsc" => subscribe(name).map(Source::FifoMpsc),
            "FifoFanout" => subscribe(name).map(Source::FifoFanout),
            "OrderedMpsc" => subscribe(name).map(Source::OrderedMpsc),
            "OrderedFanout" => subscribe(name).map(Source::OrderedFanout),
            other => {
                return Err(BridgeError::UnknownKind {
                    channel: name.to_owned(),
                    kind: other.to_owned(),
                });
            }
        };
        source.map_err(BridgeError::salias(doing()))
    }

    /// Hands up to `max` waiting messages to `each` (publisher slot, sequence, bytes).
    /// A failure is the full error the subscriber kept (`fault`), not just its kind.
    pub(crate) fn poll(&mut self, max: usize, mut each: impl FnMut(usize, u64, &[u8])) -> salias::Result<Polled> {
        each_kind!(Source, self, s => match s
            .drain(max, |info, bytes| each(info.publisher_slot(), info.sequence_or_zero(), bytes))
        {
            Ok(got) => Ok(Polled::Messages(got)),
            Err(ReceiveError::Disconnected) => Ok(Polled::PublishersGone),
            Err(e) => Err(s.fault().unwrap_or(e.into())),
        })
    }

    /// Waits up to `timeout` for one message; `Messages(0)` if none came.
    pub(crate) fn recv_timeout(
        &mut self,
        timeout: Duration,
        each: impl FnOnce(usize, u64, &[u8]),
    ) -> salias::Result<Polled> {
        each_kind!(Source, self, s => {
            let failed = match s.recv_timeout(timeout) {
                Ok(message) => {
                    each(message.publisher_slot(), message.info().sequence_or_zero(), &message);
                    return Ok(Polled::Messages(1));
                }
                Err(ReceiveError::TimedOut) => return Ok(Polled::Messages(0)),
                Err(ReceiveError::Disconnected) => return Ok(Polled::PublishersGone),
                Err(e) => e,
            };
            Err(s.fault().unwrap_or(failed.into()))
        })
    }

    /// Whether the channel's name still leads to the channel this reads: a few system
    /// calls, for the idle path only.
    pub(crate) fn name_state(&self) -> salias::Result<NameState> {
        each_kind!(Source, self, s => s.name_state())
    }
}

/// What one receive on a [`Source`] found.
pub(crate) enum Polled {
    /// This many messages (maybe none).
    Messages(usize),
    /// Every publisher of the channel has gone and everything they committed was
    /// received (`ReceiveError::Disconnected`, once per departure); the channel stays
    /// readable for a next publisher.
    PublishersGone,
}

/// A publisher into the local channel an `in` bridge feeds, and the channel itself when
/// the bridge created it (so it stays alive while the bridge runs).
pub(crate) enum Sink {
    FifoMpsc(Feed<Fifo, Mpsc>),
    FifoFanout(Feed<Fifo, Fanout>),
    OrderedMpsc(Feed<Ordered, Mpsc>),
    OrderedFanout(Feed<Ordered, Fanout>),
}

pub(crate) struct Feed<M: Mode, K: Topology> {
    publisher: Publisher<Bytes, M, K>,
    _owned: Option<Channel<Bytes, M, K>>,
}

/// How one offer ended.
pub(crate) enum Offered {
    Published,
    /// Refused for lack of room (drop mode), or still refused after waiting (block mode).
    Backpressured,
    /// Mpsc: the ring is full and the channel has no subscriber to release room
    /// (`PublishError::NoSubscriber`); returned at once, without waiting.
    NoSubscriber,
}

fn feed<M: Mode, K: Topology>(name: &str, create: Option<&Config<RawChannel>>) -> salias::Result<Feed<M, K>> {
    Ok(match create {
        Some(config) => {
            let channel = Channel::<Bytes, M, K>::create(config)?;
            Feed {
                publisher: channel.publisher()?,
                _owned: Some(channel),
            }
        }
        None => Feed {
            publisher: Channel::<Bytes, M, K>::connect_as_bytes(name)?.publisher()?,
            _owned: None,
        },
    })
}

impl Sink {
    /// Connects to the local channel `name` as raw bytes with the stream's kind (which
    /// refuses another kind with `KindMismatch`), or creates it from `create`.
    pub(crate) fn open(name: &str, meta: &StreamMeta, create: Option<&Config<RawChannel>>) -> salias::Result<Sink> {
        Ok(match (meta.ordered, meta.fanout) {
            (false, false) => Sink::FifoMpsc(feed(name, create)?),
            (false, true) => Sink::FifoFanout(feed(name, create)?),
            (true, false) => Sink::OrderedMpsc(feed(name, create)?),
            (true, true) => Sink::OrderedFanout(feed(name, create)?),
        })
    }

    /// Publishes `bytes`; with `wait`, waits up to that long for room.
    pub(crate) fn offer(&mut self, bytes: &[u8], wait: Option<Duration>) -> salias::Result<Offered> {
        each_kind!(Sink, self, f => {
            let outcome = match wait {
                None => f.publisher.offer(bytes),
                Some(timeout) => f.publisher.send_timeout(bytes, timeout),
            };
            match outcome {
                Ok(()) => Ok(Offered::Published),
                Err(PublishError::Backpressured | PublishError::TimedOut) => Ok(Offered::Backpressured),
                Err(PublishError::NoSubscriber) => Ok(Offered::NoSubscriber),
                Err(e) => Err(f.publisher.fault().unwrap_or(e.into())),
            }
        })
    }

    /// The near channel's publisher slot this sink publishes from.
    pub(crate) fn slot(&self) -> usize {
        each_kind!(Sink, self, f => f.publisher.slot())
    }

    /// Messages that slot has committed, by this publisher and earlier holders: what
    /// `PublisherStatus::published` shows after this process dies.
    pub(crate) fn published(&self) -> u64 {
        each_kind!(Sink, self, f => f.publisher.published())
    }

    /// Declares `count` (at most `salias::error::MAX_GAP`) sequence numbers lost in the local
    /// channel, so its subscribers report them as a gap; with `wait`, waits up to that
    /// long for room. Only Ordered channels have numbers: on a FIFO channel there is
    /// nothing to declare, and the bridge's own stats are the only report.
    pub(crate) fn publish_gap(&mut self, count: u64, wait: Option<Duration>) -> salias::Result<Offered> {
        match self {
            Sink::OrderedMpsc(f) => gap_into(&mut f.publisher, count, wait),
            Sink::OrderedFanout(f) => gap_into(&mut f.publisher, count, wait),
            Sink::FifoMpsc(_) | Sink::FifoFanout(_) => Ok(Offered::Published),
        }
    }
}

/// `Sink::publish_gap` on one Ordered publisher. A gap is rare: waiting for room naps
/// rather than blocking in the library.
fn gap_into<K: Topology>(
    publisher: &mut Publisher<Bytes, Ordered, K>,
    count: u64,
    wait: Option<Duration>,
) -> salias::Result<Offered> {
    let deadline = wait.map(|wait| std::time::Instant::now() + wait);
    loop {
        match publisher.publish_gap(count) {
            Ok(()) => return Ok(Offered::Published),
            // No subscriber to make room is the same wait here: a gap is rare.
            Err(PublishError::Backpressured | PublishError::NoSubscriber)
                if deadline.is_some_and(|d| std::time::Instant::now() < d) =>
            {
                std::thread::sleep(Duration::from_micros(100));
            }
            Err(PublishError::Backpressured | PublishError::NoSubscriber) => return Ok(Offered::Backpressured),
            Err(e) => return Err(publisher.fault().unwrap_or(e.into())),
        }
    }
}
