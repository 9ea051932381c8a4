//! The `out` side: reads a local channel and publishes its messages on a zenoh key, in
//! batches, with the stream's metadata attached to every sample.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use salias::status::{ChannelStatus, NameState, RecordedType};
use zenoh::Wait;
use zenoh::bytes::ZBytes;
use zenoh::liveliness::LivelinessToken;
use zenoh::qos::CongestionControl;

use crate::error::{BridgeError, Result};
use crate::local::{Polled, Source};
use crate::session::{ZenohConfig, liveliness_key};
use crate::wire::{BATCH_HEADER, BatchWriter, StreamMeta};

/// What zenoh does with a sample when its transmission queue is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Congestion {
    /// Wait for room: backpressure reaches the local channel, nothing is lost.
    #[default]
    Block,
    /// Drop the sample; the far side reports the loss (a gap), never a silent hole.
    Drop,
}

/// Settings of an `out` bridge.
#[derive(Clone, Debug)]
pub struct OutConfig {
    /// The local channel to read (any kind, typed or raw).
    pub channel: String,
    /// The zenoh key expression to publish on.
    pub key: String,
    /// Most messages in one zenoh sample (default 64).
    pub batch_messages: usize,
    /// A sample is sent once it holds this many bytes (default 32 KiB; one message may
    /// take it past).
    pub batch_bytes: usize,
    /// How long a partly filled batch waits for more messages (default 0: send as soon
    /// as the channel has nothing more; a backlog still fills batches).
    pub linger: Duration,
    /// What zenoh does when it cannot send (default block).
    pub congestion: Congestion,
    /// Read the local channel only while a far side subscribes, so that messages wait in
    /// it (and its publishers feel backpressure) rather than go to nobody (default true).
    pub wait_for_subscriber: bool,
    /// How to join zenoh.
    pub zenoh: ZenohConfig,
    /// When the local channel is removed, or replaced by a new channel of the same name,
    /// stop with [`BridgeError::ChannelGone`] instead of following the name to the new
    /// channel (default false: follow it).
    pub exit_on_removal: bool,
    /// Test hook: batch numbers built but never sent, as if zenoh lost them.
    #[doc(hidden)]
    pub drop_batches: Vec<u64>,
}

impl OutConfig {
    /// Reads `channel`, publishes on `key`, with the defaults above.
    pub fn new(channel: &str, key: &str, zenoh: ZenohConfig) -> OutConfig {
        OutConfig {
            channel: channel.to_owned(),
            key: key.to_owned(),
            batch_messages: 64,
            batch_bytes: 32 << 10,
            linger: Duration::ZERO,
            congestion: Congestion::Block,
            wait_for_subscriber: true,
            zenoh,
            exit_on_removal: false,
            drop_batches: Vec::new(),
        }
    }

    fn check(&self) -> Result<()> {
        let invalid = |field, reason: &str| {
            Err(BridgeError::InvalidConfig {
                field,
                reason: reason.to_owned(),
            })
        };
        if self.batch_messages == 0 {
            return invalid("batch_messages", "it is 0; use 1 to send every message alone");
        }
        if self.batch_bytes < BATCH_HEADER + 1 {
            return invalid("batch_bytes", "it is smaller than one batch header; use 1024 or more");
        }
        Ok(())
    }
}

/// What an `out` bridge has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutStats {
    /// Messages taken from the local channel.
    pub messages: u64,
    /// zenoh samples published.
    pub samples: u64,
    /// Payload bytes published (batch headers included).
    pub bytes: u64,
    /// Times the local channel was replaced by a new one of the same name, which the
    /// bridge then read as a new stream ([`OutEvent::Reattached`]).
    pub reattached: u64,
    /// Times every publisher of the local channel went away ([`OutEvent::PublishersGone`]).
    pub publishers_gone: u64,
}

/// Something the `out` side noticed about its local channel, in the order it noticed it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutEvent {
    /// Nothing is at the channel's name any more (or, while no far side subscribes and
    /// so nothing is read, a new channel is). The bridge keeps reading the old channel
    /// (publishers still attached to it may write) and takes up a new one of the name
    /// once it has read the old one empty (or stops, with [`OutConfig::exit_on_removal`]).
    ChannelRemoved {
        /// The channel name.
        channel: String,
    },
    /// A new channel took the name; the bridge read the old one empty and now reads the
    /// new one, as a new stream (the far `in` checks it against its channel afresh).
    Reattached {
        /// The stream of the old channel.
        previous: u64,
        /// The new stream.
        stream: StreamMeta,
    },
    /// Every publisher of the local channel went away (dropped, or their processes died)
    /// and everything they committed was read; the bridge waits for a next one.
    PublishersGone {
        /// The channel name.
        channel: String,
    },
}

#[derive(Default)]
struct Counters {
    messages: AtomicU64,
    samples: AtomicU64,
    bytes: AtomicU64,
    reattached: AtomicU64,
    publishers_gone: AtomicU64,
}

/// A running `out` bridge; its thread stops when this is stopped or dropped.
pub struct Outbound {
    meta: StreamMeta,
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
    events: Receiver<OutEvent>,
    thread: Option<JoinHandle<Result<()>>>,
}

impl Outbound {
    pub(crate) fn start(config: OutConfig) -> Result<Outbound> {
        config.check()?;
        let status = salias::status::channel_status(&config.channel).map_err(BridgeError::salias(format!(
            "reading the local channel \"{}\"",
            config.channel
        )))?;
        let source = Source::connect(&status)?;
        let meta = meta_of(&status);
        let session = config.zenoh.open()?;
        let congestion = match config.congestion {
            Congestion::Block => CongestionControl::Block,
            Congestion::Drop => CongestionControl::Drop,
        };
        let publisher = session
            .declare_publisher(config.key.clone())
            .congestion_control(congestion)
            .wait()
            .map_err(BridgeError::zenoh(format!(
                "declaring a publisher on \"{}\"",
                config.key
            )))?;
        let token = session
            .liveliness()
            .declare_token(liveliness_key(&config.key, Some(meta.stream_id)))
            .wait()
            .map_err(BridgeError::zenoh("declaring the bridge's liveliness token"))?;
        let matched = Arc::new(AtomicBool::new(false));
        let flag = matched.clone();
        let listener = publisher
            .matching_listener()
            .callback(move |status| flag.store(status.matching(), Ordering::Relaxed))
            .wait()
            .map_err(BridgeError::zenoh("watching for far subscribers"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let (sender, events) = sync_channel(EVENT_QUEUE);
        let mut pump = Pump {
            matched,
            _listener: listener,
            token,
            session: session.clone(),
            events: sender,
            stream_id: meta.stream_id,
            checked_at: Instant::now(),
            removed: false,
            writer: BatchWriter::new(meta.ordered, config.batch_bytes + BATCH_HEADER),
            attachment: ZBytes::from(meta.encode()),
            config,
            source,
            publisher,
            counters: counters.clone(),
            batch: 0,
            index: 0,
        };
        let stop_flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("salias-bridge-out".into())
            .spawn(move || {
                let outcome = pump.run(&stop_flag);
                drop(pump);
                drop(session);
                outcome
            })
            .map_err(|e| BridgeError::Thread {
                what: format!("could not be started: {e}"),
            })?;
        Ok(Outbound {
            meta,
            stop,
            counters,
            events,
            thread: Some(thread),
        })
    }

    /// The stream's metadata at the start: what the far side checks its channel against.
    /// A channel replaced under the same name is a new stream, announced in
    /// [`OutEvent::Reattached`].
    pub fn meta(&self) -> &StreamMeta {
        &self.meta
    }

    /// What the bridge noticed about its local channel, oldest first (up to 1024 unread
    /// are kept).
    pub fn events(&self) -> &Receiver<OutEvent> {
        &self.events
    }

    /// Counts so far.
    pub fn stats(&self) -> OutStats {
        OutStats {
            messages: self.counters.messages.load(Ordering::Relaxed),
            samples: self.counters.samples.load(Ordering::Relaxed),
            bytes: self.counters.bytes.load(Ordering::Relaxed),
            reattached: self.counters.reattached.load(Ordering::Relaxed),
            publishers_gone: self.counters.publishers_gone.load(Ordering::Relaxed),
        }
    }

    /// Whether the bridge thread has ended (after an error: see [`stop`](Self::stop)).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Sends what is batched, stops, and returns the final counts or the error that ended it.
    pub fn stop(mut self) -> Result<OutStats> {
        self.finish()?;
        Ok(self.stats())
    }

    fn finish(&mut self) -> Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) => Err(BridgeError::Thread {
                what: "panicked; please report it with the bridge's stderr".into(),
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Outbound {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// The stream metadata of the local channel `status` describes, under a new stream id.
fn meta_of(status: &ChannelStatus) -> StreamMeta {
    StreamMeta {
        stream_id: crate::random_id(),
        ordered: status.kind.starts_with("Ordered"),
        fanout: status.kind.ends_with("Fanout"),
        max_message_size: status.max_message_size as u32,
        // What the stream's metadata carries of the type: its fingerprint, not its columns.
        message_type: (status.recorded_type.clone()).map(|recorded| RecordedType {
            fields: None,
            ..recorded
        }),
        channel: status.name.clone(),
    }
}

struct Pump {
    /// Whether a far subscriber matches the key now (zenoh's matching listener).
    matched: Arc<AtomicBool>,
    _listener: zenoh::matching::MatchingListener<()>,
    /// The stream's liveliness token, replaced with the stream.
    token: LivelinessToken,
    session: zenoh::Session,
    events: SyncSender<OutEvent>,
    stream_id: u64,
    /// When the channel's name was last checked.
    checked_at: Instant,
    /// The removal was reported; the name is watched for a new channel.
    removed: bool,
    config: OutConfig,
    source: Source,
    publisher: zenoh::pubsub::Publisher<'static>,
    writer: BatchWriter,
    attachment: ZBytes,
    counters: Arc<Counters>,
    batch: u64,
    index: u64,
}

/// How long an idle bridge waits on the channel before it looks at its stop flag again.
const IDLE_WAIT: Duration = Duration::from_millis(10);
/// How often an idle bridge checks that its channel's name still leads to its channel: a
/// few system calls, never on the per-message path.
const NAME_CHECK: Duration = Duration::from_millis(250);
/// Events kept for a caller that does not read them; beyond this they are only counted.
const EVENT_QUEUE: usize = 1024;

impl Pump {
    fn run(&mut self, stop: &AtomicBool) -> Result<()> {
        let mut first_at = Instant::now();
        let doing = format!("reading the local channel \"{}\"", self.config.channel);
        while !stop.load(Ordering::Relaxed) {
            if self.config.wait_for_subscriber && !self.matched.load(Ordering::Relaxed) {
                std::thread::sleep(IDLE_WAIT);
                // Not reading: the old channel may still hold messages, so a new one
                // at the name is left for the reading path, once this one is empty.
                self.check_name(false)?;
                continue;
            }
            let room = self.config.batch_messages - self.writer.count as usize;
            let was_empty = self.writer.count == 0;
            let writer = &mut self.writer;
            let got = match self
                .source
                .poll(room, |slot, sequence, bytes| writer.push(slot, sequence, bytes))
                .map_err(BridgeError::salias(doing.as_str()))?
            {
                Polled::Messages(got) => got,
                Polled::PublishersGone => {
                    self.publishers_gone();
                    0
                }
            };
            if was_empty && got > 0 {
                first_at = Instant::now();
            }
            if self.full() {
                self.flush()?;
                continue;
            }
            let pending = self.writer.count > 0;
            let left = self.config.linger.saturating_sub(first_at.elapsed());
            if pending && left.is_zero() {
                self.flush()?;
            } else if got == 0 {
                let wait = if pending { left } else { IDLE_WAIT };
                let writer = &mut self.writer;
                let came = match self
                    .source
                    .recv_timeout(wait, |slot, sequence, bytes| writer.push(slot, sequence, bytes))
                    .map_err(BridgeError::salias(doing.as_str()))?
                {
                    Polled::Messages(came) => came > 0,
                    Polled::PublishersGone => {
                        self.publishers_gone();
                        false
                    }
                };
                if came && !pending {
                    first_at = Instant::now();
                } else if !came && !pending {
                    // Idle, the channel read empty, nothing batched: a new channel at the
                    // name can take over without leaving a message behind.
                    self.check_name(true)?;
                }
            }
        }
        if self.writer.count > 0 {
            self.flush()?;
        }
        Ok(())
    }

    fn event(&self, event: OutEvent) {
        let _ = self.events.try_send(event);
    }

    fn publishers_gone(&mut self) {
        self.counters.publishers_gone.fetch_add(1, Ordering::Relaxed);
        self.event(OutEvent::PublishersGone {
            channel: self.config.channel.clone(),
        });
    }

    /// At most every `NAME_CHECK`, and only while idle with nothing batched: whether the
    /// channel's name still leads to the channel being read. A removed channel is read on
    /// (its attached publishers may still write); a replaced one, when `may_reattach`
    /// (it was just read empty), is left for the new one, else reported as removed.
    fn check_name(&mut self, may_reattach: bool) -> Result<()> {
        if self.checked_at.elapsed() < NAME_CHECK {
            return Ok(());
        }
        self.checked_at = Instant::now();
        let channel = self.config.channel.as_str();
        let state = self.source.name_state().map_err(BridgeError::salias(format!(
            "checking that the name \"{channel}\" still leads to the channel being read"
        )))?;
        match state {
            NameState::Current => Ok(()),
            NameState::Removed | NameState::Replaced if self.config.exit_on_removal => Err(BridgeError::ChannelGone {
                channel: channel.to_owned(),
                state,
            }),
            NameState::Replaced if may_reattach => self.reattach(),
            NameState::Removed | NameState::Replaced => {
                if !self.removed {
                    self.removed = true;
                    self.event(OutEvent::ChannelRemoved {
                        channel: channel.to_owned(),
                    });
                }
                Ok(())
            }
        }
    }

    /// Reads the new channel at the name from now on, as a new stream with its own
    /// metadata, numbers and liveliness token. A channel still being created, or gone
    /// again, is looked at again at the next check.
    fn reattach(&mut self) -> Result<()> {
        let channel = self.config.channel.clone();
        let status = match salias::status::channel_status(&channel) {
            Ok(status) if status.initialised => status,
            Ok(_) | Err(salias::Error::NotFound { .. } | salias::Error::Initializing { .. }) => return Ok(()),
            Err(e) => return Err(BridgeError::salias(format!("reading the new channel \"{channel}\""))(e)),
        };
        let source = Source::connect(&status)?;
        let meta = meta_of(&status);
        let token = self
            .session
            .liveliness()
            .declare_token(liveliness_key(&self.config.key, Some(meta.stream_id)))
            .wait()
            .map_err(BridgeError::zenoh("declaring the bridge's liveliness token"))?;
        // The old stream's token goes: the far side sees that stream end.
        drop(std::mem::replace(&mut self.token, token));
        self.source = source;
        self.writer = BatchWriter::new(meta.ordered, self.config.batch_bytes + BATCH_HEADER);
        self.attachment = ZBytes::from(meta.encode());
        (self.batch, self.index) = (0, 0);
        self.removed = false;
        let previous = std::mem::replace(&mut self.stream_id, meta.stream_id);
        self.counters.reattached.fetch_add(1, Ordering::Relaxed);
        self.event(OutEvent::Reattached { previous, stream: meta });
        Ok(())
    }

    fn full(&self) -> bool {
        self.writer.count as usize >= self.config.batch_messages || self.writer.buf.len() >= self.config.batch_bytes
    }

    /// Publishes the batch and starts the next. The buffer goes to zenoh without a copy
    /// (`ZBytes` takes the `Vec`): one allocation per batch, none per message.
    fn flush(&mut self) -> Result<()> {
        let count = self.writer.count as u64;
        let bytes = self.writer.buf.len() as u64;
        if !self.config.drop_batches.contains(&self.batch) {
            let buf = std::mem::replace(
                &mut self.writer.buf,
                Vec::with_capacity(self.config.batch_bytes + BATCH_HEADER),
            );
            self.publisher
                .put(ZBytes::from(buf))
                .attachment(self.attachment.clone())
                .wait()
                .map_err(BridgeError::zenoh(format!("publishing on \"{}\"", self.config.key)))?;
            self.counters.samples.fetch_add(1, Ordering::Relaxed);
            self.counters.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
        self.counters.messages.fetch_add(count, Ordering::Relaxed);
        self.index += count;
        self.batch += 1;
        self.writer.reset(self.batch, self.index);
        Ok(())
    }
}
