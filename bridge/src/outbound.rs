//! The `out` side: reads a local channel and publishes its messages on a zenoh key, in
//! batches, with the stream's metadata attached to every sample.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use zenoh::Wait;
use zenoh::bytes::ZBytes;
use zenoh::qos::CongestionControl;

use crate::error::{BridgeError, Result};
use crate::local::Source;
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
}

#[derive(Default)]
struct Counters {
    messages: AtomicU64,
    samples: AtomicU64,
    bytes: AtomicU64,
}

/// A running `out` bridge; its thread stops when this is stopped or dropped.
pub struct Outbound {
    meta: StreamMeta,
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
    thread: Option<JoinHandle<Result<()>>>,
}

impl Outbound {
    pub(crate) fn start(config: OutConfig) -> Result<Outbound> {
        config.check()?;
        let status = salias::channel_status(&config.channel).map_err(BridgeError::salias(format!(
            "reading the local channel \"{}\"",
            config.channel
        )))?;
        let source = Source::connect(&status)?;
        let meta = StreamMeta {
            stream_id: crate::random_id(),
            ordered: status.kind.starts_with("Ordered"),
            fanout: status.kind.ends_with("Fanout"),
            max_message_size: status.max_message_size as u32,
            message_type: status.recorded_type.clone(),
            channel: config.channel.clone(),
        };
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
        let mut pump = Pump {
            matched,
            _listener: listener,
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
                drop(token);
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
            thread: Some(thread),
        })
    }

    /// The stream's metadata: what the far side checks its channel against.
    pub fn meta(&self) -> &StreamMeta {
        &self.meta
    }

    /// Counts so far.
    pub fn stats(&self) -> OutStats {
        OutStats {
            messages: self.counters.messages.load(Ordering::Relaxed),
            samples: self.counters.samples.load(Ordering::Relaxed),
            bytes: self.counters.bytes.load(Ordering::Relaxed),
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

struct Pump {
    /// Whether a far subscriber matches the key now (zenoh's matching listener).
    matched: Arc<AtomicBool>,
    _listener: zenoh::matching::MatchingListener<()>,
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

impl Pump {
    fn run(&mut self, stop: &AtomicBool) -> Result<()> {
        let mut first_at = Instant::now();
        let doing = format!("reading the local channel \"{}\"", self.config.channel);
        while !stop.load(Ordering::Relaxed) {
            if self.config.wait_for_subscriber && !self.matched.load(Ordering::Relaxed) {
                std::thread::sleep(IDLE_WAIT);
                continue;
            }
            let room = self.config.batch_messages - self.writer.count as usize;
            let was_empty = self.writer.count == 0;
            let writer = &mut self.writer;
            let got = self
                .source
                .poll(room, |slot, sequence, bytes| writer.push(slot, sequence, bytes))
                .map_err(BridgeError::salias(doing.as_str()))?;
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
                let came = self
                    .source
                    .recv_timeout(wait, |slot, sequence, bytes| writer.push(slot, sequence, bytes))
                    .map_err(BridgeError::salias(doing.as_str()))?;
                if came && !pending {
                    first_at = Instant::now();
                }
            }
        }
        if self.writer.count > 0 {
            self.flush()?;
        }
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
