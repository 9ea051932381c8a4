//! The `in` side: subscribes to a zenoh key and publishes what arrives into a local
//! channel of the same kind, checking the stream's metadata against that channel first,
//! and reporting every loss (a missing sample, a sequence gap) and every far `out` that
//! goes away.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use salias::{Config, receive::Gaps};
use zenoh::Wait;
use zenoh::sample::{Sample, SampleKind};

use crate::error::{BridgeError, Result};
use crate::ledger::{Ledger, Record, Resume};
use crate::local::{Offered, Sink};
use crate::session::{ZenohConfig, liveliness_key};
use crate::wire::{Batch, StreamMeta};

/// What the `in` side does when the local channel has no room for a message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backpressure {
    /// Hold zenoh's callback until there is room (so zenoh holds the far `out`, whose
    /// congestion control then blocks too): nothing is lost, and a slow local subscriber
    /// slows the whole path. Waits are counted in [`InStats::waited`].
    #[default]
    Block,
    /// Drop the message and count it in [`InStats::dropped`]; zenoh never waits.
    Drop,
}

/// Settings of an `in` bridge.
#[derive(Clone, Debug)]
pub struct InConfig {
    /// The zenoh key expression to subscribe to.
    pub key: String,
    /// The local channel to publish into. If it does not exist and the stream is raw
    /// bytes, the bridge creates it (and owns it while it runs).
    pub channel: String,
    /// What to do when the local channel is full (default block).
    pub backpressure: Backpressure,
    /// Ring bytes per publisher of a channel the bridge creates (default 1 MiB).
    pub capacity: usize,
    /// How to join zenoh.
    pub zenoh: ZenohConfig,
    /// Where the bridge keeps its state record (what it delivered, so that a restarted
    /// `in` reports what it missed); default /dev/shm, else `$XDG_RUNTIME_DIR`, else the
    /// temporary directory. The file is named after the channel and the key.
    pub state_dir: Option<PathBuf>,
}

impl InConfig {
    /// Subscribes to `key`, publishes into `channel`, with the defaults above.
    pub fn new(key: &str, channel: &str, zenoh: ZenohConfig) -> InConfig {
        InConfig {
            key: key.to_owned(),
            channel: channel.to_owned(),
            backpressure: Backpressure::Block,
            capacity: 1 << 20,
            zenoh,
            state_dir: None,
        }
    }
}

/// What an `in` bridge has seen so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InStats {
    /// zenoh samples received.
    pub samples: u64,
    /// Messages received in them.
    pub messages: u64,
    /// Messages published into the local channel.
    pub delivered: u64,
    /// Messages dropped because the local channel was full ([`Backpressure::Drop`]).
    pub dropped: u64,
    /// Messages that had to wait for room ([`Backpressure::Block`]).
    pub waited: u64,
    /// Samples that never arrived (their batch numbers were skipped).
    pub lost_samples: u64,
    /// Numbers missing from the stream, as a local Ordered subscriber counts them: global
    /// sequence numbers on Ordered streams, the stream's message indices on FIFO ones.
    pub gaps: Gaps,
    /// Samples that did not decode (not from a salias bridge, or damaged).
    pub malformed: u64,
    /// Samples refused because the local channel does not match the stream.
    pub refused: u64,
    /// Far `out` sides that went away (stopped, or their process or host died).
    pub outs_lost: u64,
    /// Messages of a stream that an earlier `in` (killed, or stopped) never delivered,
    /// found when this one took the stream up again ([`InEvent::Undelivered`]); also
    /// counted in `gaps`, as message indices on FIFO streams and as the sequence numbers
    /// they leave out on Ordered ones.
    pub undelivered: u64,
    /// Messages an earlier `in` was publishing as it died whose arrival cannot be told.
    pub in_doubt: u64,
    /// Runs of messages whose state record could not be written.
    pub unrecorded: u64,
    /// Messages the near channel refused at least once because it is Mpsc, its ring is
    /// full and it has no subscriber (`PublishError::NoSubscriber`): in block mode they
    /// wait for a subscriber to join (and count in `waited`), in drop mode they are
    /// dropped (and count in `dropped`).
    pub no_subscriber: u64,
}

/// Something the `in` side noticed, in the order it noticed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InEvent {
    /// A stream started (or a far `out` restarted): its metadata matched the local channel.
    Stream(StreamMeta),
    /// The local channel does not match the stream; its samples are refused.
    Refused {
        /// The stream.
        stream_id: u64,
        /// Why, in salias's own words for a type or kind mismatch.
        error: String,
    },
    /// Numbers missing from the stream (see [`InStats::gaps`]).
    Gap {
        /// The stream.
        stream_id: u64,
        /// The missing numbers.
        missing: Range<u64>,
        /// Whether they are global sequence numbers (else stream message indices).
        ordered: bool,
    },
    /// A far `out` side appeared.
    OutJoined {
        /// Its stream.
        stream_id: u64,
    },
    /// A far `out` side went away.
    OutLost {
        /// Its stream.
        stream_id: u64,
    },
    /// A sample did not decode.
    Malformed {
        /// What was wrong.
        reason: String,
    },
    /// This `in` took up a stream an earlier `in` of the same channel and key had fed
    /// (it was killed or stopped): what that one never delivered into the near channel,
    /// from its state record and the near channel's own commit count. Reported at the
    /// stream's first sample after the restart, when anything is missing or in doubt.
    Undelivered {
        /// The stream.
        stream_id: u64,
        /// Stream message indices that never reached the near channel.
        messages: Range<u64>,
        /// Ordered: the far sequence numbers missing there, declared as one gap in the
        /// near channel (`Publisher::publish_gap`); `None` on FIFO streams.
        sequences: Option<Range<u64>>,
        /// Messages the earlier `in` was publishing as it died of which none, some or all
        /// reached the near channel (it could not be read, or another process took the
        /// publisher slot); not in `messages`. Empty when the report is exact.
        in_doubt: Range<u64>,
        /// Ordered: how many of `sequences`' first numbers the earlier `in` was declaring
        /// lost as it died; the near channel may hold that declaration twice.
        gap_in_doubt: u64,
    },
    /// The state record could not be written (reported once): until it can, a
    /// restarted `in` may report as undelivered messages that this one delivered.
    Unrecorded {
        /// The system's error and the file.
        error: String,
    },
}

struct State {
    config: InConfig,
    sink: Option<Sink>,
    /// The attachment of the stream being delivered, as received.
    accepted: Vec<u8>,
    /// The attachment of a stream that was refused, so its samples are refused cheaply.
    refused: Vec<u8>,
    meta: Option<StreamMeta>,
    next_batch: Option<u64>,
    next_index: Option<u64>,
    next_sequence: Option<u64>,
    stats: InStats,
    /// The state record, rewritten at the start of every run of messages.
    ledger: Ledger,
    /// What an earlier `in` left, until the first stream arrives.
    resume: Option<Resume>,
    /// The resumed stream's first batch is still to come.
    resuming: Option<Resume>,
    /// Whether the record describes the run now being published: a drop, a skipped
    /// message, a gap or a new batch ends a run.
    run_open: bool,
    unrecorded_reported: bool,
    /// What `Inbound::stats` reads: copied after every sample, so a delivery blocked on a
    /// full channel never blocks a caller asking for counts.
    published: Arc<Mutex<InStats>>,
    events: SyncSender<InEvent>,
}

/// A running `in` bridge; dropping it leaves zenoh and closes the local publisher.
pub struct Inbound {
    stats: Arc<Mutex<InStats>>,
    events: Receiver<InEvent>,
    stop: Arc<AtomicBool>,
    state_path: PathBuf,
    _subscriber: zenoh::pubsub::Subscriber<()>,
    _liveliness: zenoh::pubsub::Subscriber<()>,
    _session: zenoh::Session,
}

/// Events kept for a caller that does not read them; beyond this they are only counted.
const EVENT_QUEUE: usize = 1024;
/// How long one blocked delivery waits before it looks at the stop flag again.
const BLOCK_SLICE: Duration = Duration::from_millis(50);
/// How long a delivery naps when the near channel is full and has no subscriber: the
/// library refuses at once then, so block mode retries at this pace until one joins.
const NO_SUBSCRIBER_NAP: Duration = Duration::from_millis(10);

impl Inbound {
    pub(crate) fn start(config: InConfig) -> Result<Inbound> {
        salias::config::validate_name(&config.channel).map_err(BridgeError::salias(format!(
            "checking the channel name \"{}\"",
            config.channel
        )))?;
        // Before zenoh, so no sample arrives first, and before this process takes a
        // publisher slot in the near channel: the slot's count is the predecessor's.
        let dir = config.state_dir.clone().unwrap_or_else(crate::ledger::default_dir);
        let (ledger, previous) = Ledger::open(&dir, &config.channel, &config.key)?;
        let state_path = ledger.path().to_owned();
        let resume = previous.map(|record| Resume::from(&record, salias::status::channel_status(&config.channel)));
        let session = config.zenoh.open()?;
        let (sender, events) = sync_channel(EVENT_QUEUE);
        let key = config.key.clone();
        let stats = Arc::new(Mutex::new(InStats::default()));
        let live_events = sender.clone();
        let state = Arc::new(Mutex::new(State {
            config,
            sink: None,
            accepted: Vec::new(),
            refused: Vec::new(),
            meta: None,
            next_batch: None,
            next_index: None,
            next_sequence: None,
            stats: InStats::default(),
            ledger,
            resume,
            resuming: None,
            run_open: false,
            unrecorded_reported: false,
            published: stats.clone(),
            events: sender,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (data_state, data_stop) = (state.clone(), stop.clone());
        let subscriber = session
            .declare_subscriber(key.clone())
            .callback(move |sample: Sample| {
                let mut state = lock(&data_state);
                state.receive(&sample, &data_stop);
                let mut counts = state.stats.clone();
                let mut published = lock(&state.published);
                // Counted by the liveliness callback alone.
                counts.outs_lost = published.outs_lost;
                *published = counts;
            })
            .wait()
            .map_err(BridgeError::zenoh(format!("subscribing to \"{key}\"")))?;
        let live_stats = stats.clone();
        let liveliness = session
            .liveliness()
            .declare_subscriber(liveliness_key(&key, None))
            .history(true)
            .callback(move |sample: Sample| liveliness(&sample, &live_stats, &live_events))
            .wait()
            .map_err(BridgeError::zenoh("watching the far bridges' liveliness"))?;
        drop(state);
        Ok(Inbound {
            stats,
            events,
            stop,
            state_path,
            _subscriber: subscriber,
            _liveliness: liveliness,
            _session: session,
        })
    }

    /// Counts so far.
    pub fn stats(&self) -> InStats {
        lock(&self.stats).clone()
    }

    /// What the bridge noticed, oldest first (up to 1024 unread are kept).
    pub fn events(&self) -> &Receiver<InEvent> {
        &self.events
    }

    /// The file holding this bridge's state record.
    pub fn state_path(&self) -> &Path {
        &self.state_path
    }
}

impl Drop for Inbound {
    fn drop(&mut self) {
        // A delivery blocked on a full channel gives up, so zenoh's callback returns.
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn lock<T>(state: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in a callback leaves counts that are still worth reading.
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A far `out` side's token appeared or went away. Apart from the data path's state, so
/// a delivery blocked on a full channel does not delay it.
fn liveliness(sample: &Sample, stats: &Mutex<InStats>, events: &SyncSender<InEvent>) {
    let key = sample.key_expr().as_str();
    let Some(stream_id) = key.rsplit('/').next().and_then(|id| u64::from_str_radix(id, 16).ok()) else {
        return;
    };
    let event = match sample.kind() {
        SampleKind::Put => InEvent::OutJoined { stream_id },
        SampleKind::Delete => {
            lock(stats).outs_lost += 1;
            InEvent::OutLost { stream_id }
        }
    };
    let _ = events.try_send(event);
}

/// Where a run of published messages starts: its first message's stream index and far
/// sequence number, and how many messages of its batch remain from there.
#[derive(Clone, Copy)]
struct Run {
    index: u64,
    count: u64,
    sequence: u64,
}

impl State {
    fn event(&self, event: InEvent) {
        let _ = self.events.try_send(event);
    }

    fn malformed(&mut self, reason: String) {
        self.stats.malformed += 1;
        self.event(InEvent::Malformed { reason });
    }

    fn receive(&mut self, sample: &Sample, stop: &AtomicBool) {
        self.stats.samples += 1;
        let Some(attachment) = sample.attachment() else {
            return self.malformed(format!("a sample on {} has no stream metadata", sample.key_expr()));
        };
        let attachment = attachment.to_bytes();
        if *attachment == *self.refused {
            self.stats.refused += 1;
            return;
        }
        if *attachment != *self.accepted && !self.start_stream(&attachment) {
            self.stats.refused += 1;
            return;
        }
        let payload = sample.payload().to_bytes();
        let (ordered, stream_id) = match &self.meta {
            Some(meta) => (meta.ordered, meta.stream_id),
            None => return,
        };
        let batch = match Batch::parse(&payload, ordered) {
            Ok(batch) => batch,
            Err(reason) => return self.malformed(format!("a batch of stream {stream_id:016x}: {reason}")),
        };
        if let Some(expected) = self.next_batch {
            if batch.number < expected {
                return self.malformed(format!(
                    "stream {stream_id:016x} sent batch {} again after {expected}",
                    batch.number
                ));
            }
            self.stats.lost_samples += batch.number - expected;
        }
        // Numbers come from the network: never trusted not to overflow.
        self.next_batch = Some(batch.number.saturating_add(1));
        let wait = match self.config.backpressure {
            Backpressure::Block => Some(BLOCK_SLICE),
            Backpressure::Drop => None,
        };
        self.run_open = false;
        if let Some(resume) = self.resuming.take() {
            match self.take_up(resume, &batch, stream_id, ordered, wait, stop) {
                Ok(true) => {}
                Ok(false) => return,
                Err(error) => return self.refuse(&attachment, stream_id, error.to_string()),
            }
        }
        if !ordered {
            if let Some(expected) = self.next_index
                && batch.first_index > expected
            {
                self.gap(stream_id, expected..batch.first_index, false);
            }
            self.next_index = Some(batch.first_index.saturating_add(u64::from(batch.count)));
        }
        let mut failure = None;
        let mut position = 0u64;
        let parsed = batch.for_each(|message| {
            let run = Run {
                index: batch.first_index.saturating_add(position),
                count: u64::from(batch.count) - position,
                sequence: message.sequence,
            };
            position += 1;
            if ordered {
                match self.next_sequence {
                    Some(expected) if message.sequence < expected => {
                        // A stream's numbers only grow: this one is damaged, not late.
                        self.malformed(format!(
                            "stream {stream_id:016x} sent sequence number {} after {expected}",
                            message.sequence
                        ));
                        self.run_open = false;
                        return true;
                    }
                    Some(expected) if message.sequence > expected => {
                        self.gap(stream_id, expected..message.sequence, true);
                        if let Err(e) = self.declare_gap(message.sequence - expected, run, wait, stop) {
                            failure = Some(e);
                            return false;
                        }
                    }
                    _ => {}
                }
                self.next_sequence = Some(message.sequence.saturating_add(1));
            }
            self.stats.messages += 1;
            if !self.run_open {
                self.record(run, 0);
            }
            match self.deliver(message.bytes, wait, stop) {
                Ok(()) => true,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        });
        if let Err(reason) = parsed {
            self.malformed(format!("a batch of stream {stream_id:016x}: {reason}"));
        }
        if let Some(error) = failure {
            // The local channel broke (e.g. its owner truncated it): refuse this stream.
            self.refuse(&attachment, stream_id, error.to_string());
        }
    }

    fn deliver(&mut self, bytes: &[u8], wait: Option<Duration>, stop: &AtomicBool) -> salias::Result<()> {
        let Some(sink) = self.sink.as_mut() else {
            return Ok(());
        };
        let mut waited = false;
        let mut unsubscribed = false;
        loop {
            match sink.offer(bytes, wait)? {
                Offered::Published => {
                    self.stats.delivered += 1;
                    self.stats.waited += u64::from(waited);
                    return Ok(());
                }
                Offered::Backpressured if wait.is_some() && !stop.load(Ordering::Relaxed) => waited = true,
                Offered::NoSubscriber => {
                    self.stats.no_subscriber += u64::from(!unsubscribed);
                    unsubscribed = true;
                    if wait.is_some() && !stop.load(Ordering::Relaxed) {
                        waited = true;
                        std::thread::sleep(NO_SUBSCRIBER_NAP);
                    } else {
                        self.stats.dropped += 1;
                        self.run_open = false;
                        return Ok(());
                    }
                }
                Offered::Backpressured => {
                    self.stats.dropped += 1;
                    // The record's run is the messages published one after another.
                    self.run_open = false;
                    return Ok(());
                }
            }
        }
    }

    /// Rewrites the state record: the run starting at `run` is about to be published,
    /// after declaring `gap_before` numbers lost. One write, no allocation; a failure is
    /// counted and reported once.
    fn record(&mut self, run: Run, gap_before: u64) {
        let Some(sink) = self.sink.as_ref() else {
            return;
        };
        let record = Record {
            stream_id: self.meta.as_ref().map_or(0, |meta| meta.stream_id),
            next_batch: self.next_batch.unwrap_or(0),
            index: run.index,
            count: run.count,
            sequence: run.sequence,
            gap_before,
            slot: sink.slot() as u64,
            pid: u64::from(std::process::id()),
            published: sink.published(),
        };
        self.run_open = true;
        if let Err(error) = self.ledger.write(&record) {
            self.stats.unrecorded += 1;
            if !self.unrecorded_reported {
                self.unrecorded_reported = true;
                let error = format!("writing {}: {error}", self.ledger.path().display());
                self.event(InEvent::Unrecorded { error });
            }
        }
    }

    /// The first batch of a stream an earlier `in` fed: reports what that one never
    /// delivered (and, Ordered, declares it in the near channel). Returns whether the
    /// batch is to be delivered.
    fn take_up(
        &mut self,
        resume: Resume,
        batch: &Batch,
        stream_id: u64,
        ordered: bool,
        wait: Option<Duration>,
        stop: &AtomicBool,
    ) -> salias::Result<bool> {
        if batch.first_index < resume.next_index {
            self.malformed(format!(
                "stream {stream_id:016x} sent message {} again after {} were delivered",
                batch.first_index, resume.next_index
            ));
            return Ok(false);
        }
        let messages = resume.next_index..batch.first_index;
        let first = batch.first_sequence().filter(|_| ordered);
        let sequences = first.map(|first| resume.next_sequence..first.max(resume.next_sequence));
        let numbers = sequences.clone().unwrap_or(messages.clone());
        if !numbers.is_empty() {
            let gaps = &mut self.stats.gaps;
            gaps.events += 1;
            gaps.missing += numbers.end - numbers.start;
            gaps.last = Some(numbers.clone());
        }
        self.stats.undelivered += messages.end - messages.start;
        self.stats.in_doubt += resume.in_doubt.end - resume.in_doubt.start;
        if !numbers.is_empty() || !messages.is_empty() || !resume.in_doubt.is_empty() || resume.gap_in_doubt > 0 {
            self.event(InEvent::Undelivered {
                stream_id,
                messages,
                sequences: sequences.clone(),
                in_doubt: resume.in_doubt,
                gap_in_doubt: resume.gap_in_doubt,
            });
        }
        self.next_index = Some(batch.first_index);
        if let (Some(first), Some(sequences)) = (first, sequences) {
            let run = Run {
                index: batch.first_index,
                count: u64::from(batch.count),
                sequence: first,
            };
            self.declare_gap(sequences.end - sequences.start, run, wait, stop)?;
            self.next_sequence = Some(first);
        }
        Ok(true)
    }

    /// Declares `count` numbers lost in the local Ordered channel, so that its subscribers
    /// report the gap as a local one's would (`Subscriber::gaps`, `gap_before`). A stream
    /// jumping past what one declaration takes is damaged: the jump is still declared, up
    /// to that bound, and reported as malformed.
    ///
    /// The record says the gap is being declared before `run`, and then that it was: a
    /// restart in between knows the declaration is in doubt.
    fn declare_gap(&mut self, count: u64, run: Run, wait: Option<Duration>, stop: &AtomicBool) -> salias::Result<()> {
        if count == 0 {
            return Ok(());
        }
        if count > salias::error::MAX_GAP {
            self.malformed(format!(
                "a stream skipped {count} sequence numbers, more than the {} one gap declares",
                salias::error::MAX_GAP
            ));
        }
        if self.sink.is_none() {
            return Ok(());
        }
        self.record(run, count);
        loop {
            let Some(sink) = self.sink.as_mut() else {
                return Ok(());
            };
            match sink.publish_gap(count.min(salias::error::MAX_GAP), wait)? {
                Offered::Published => break,
                Offered::Backpressured | Offered::NoSubscriber if wait.is_some() && !stop.load(Ordering::Relaxed) => {}
                Offered::Backpressured | Offered::NoSubscriber => {
                    // Drop mode: the gap goes where dropped messages go, into the counts.
                    self.stats.dropped += 1;
                    break;
                }
            }
        }
        self.record(run, 0);
        Ok(())
    }

    fn gap(&mut self, stream_id: u64, missing: Range<u64>, ordered: bool) {
        let gaps = &mut self.stats.gaps;
        gaps.events += 1;
        gaps.missing += missing.end - missing.start;
        gaps.last = Some(missing.clone());
        self.event(InEvent::Gap {
            stream_id,
            missing,
            ordered,
        });
    }

    fn refuse(&mut self, attachment: &[u8], stream_id: u64, error: String) {
        self.sink = None;
        self.meta = None;
        self.accepted.clear();
        self.refused = attachment.to_vec();
        self.event(InEvent::Refused { stream_id, error });
    }

    /// A sample of a stream not seen before: checks its metadata against the local
    /// channel. Returns whether its samples are to be delivered.
    fn start_stream(&mut self, attachment: &[u8]) -> bool {
        let meta = match StreamMeta::decode(attachment) {
            Ok(meta) => meta,
            Err(reason) => {
                self.malformed(format!("a sample's metadata: {reason}"));
                return false;
            }
        };
        // A restarted `out` of the same channel keeps the local publisher.
        let same_channel = self.meta.as_ref().is_some_and(|old| {
            (old.ordered, old.fanout, old.max_message_size, &old.message_type)
                == (meta.ordered, meta.fanout, meta.max_message_size, &meta.message_type)
        });
        if !same_channel {
            self.sink = None;
            match open_sink(&self.config, &meta) {
                Ok(sink) => self.sink = Some(sink),
                Err(error) => {
                    self.refuse(attachment, meta.stream_id, error.to_string());
                    return false;
                }
            }
        }
        self.accepted = attachment.to_vec();
        (self.next_batch, self.next_index, self.next_sequence) = (None, None, None);
        // The stream an earlier `in` fed, taken up where that one's record says it
        // stopped; any other stream starts afresh (and the record is then its own).
        self.resuming = self.resume.take().filter(|resume| resume.stream_id == meta.stream_id);
        if let Some(resume) = &self.resuming {
            self.next_batch = Some(resume.next_batch);
            self.next_index = Some(resume.next_index);
            self.next_sequence = meta.ordered.then_some(resume.next_sequence);
        }
        self.event(InEvent::Stream(meta.clone()));
        self.meta = Some(meta);
        true
    }
}

/// The local channel for `meta`: connected if it exists (and refused, in salias's words,
/// if its kind or type differs), created if it does not and the stream is raw bytes.
fn open_sink(config: &InConfig, meta: &StreamMeta) -> Result<Sink> {
    let name = config.channel.as_str();
    let doing = format!("connecting to the local channel \"{name}\"");
    let status = match salias::status::channel_status(name) {
        Err(salias::Error::NotFound { .. }) => {
            if meta.message_type.is_some() {
                return Err(BridgeError::NeedsTypedChannel {
                    channel: name.to_owned(),
                    stream_type: meta.describe_type(),
                    kind: meta.kind().to_owned(),
                });
            }
            return create_sink(config, meta);
        }
        other => other.map_err(BridgeError::salias(doing.as_str()))?,
    };
    // The kind first, as `connect` checks it: connecting with the stream's kind refuses
    // another with `KindMismatch`.
    let sink = match Sink::open(name, meta, None) {
        // A raw channel whose creator died, such as a killed `in`: `create` recovers it.
        // (A typed one's creator is the application, which must recreate it.)
        Err(salias::Error::Stale { .. }) if meta.message_type.is_none() => return create_sink(config, meta),
        other => other.map_err(BridgeError::salias(doing.as_str()))?,
    };
    // The stream carries the type's fingerprint, not its fields: compare what it carries.
    let local_type = (status.recorded_type.clone()).map(|recorded| salias::status::RecordedType {
        fields: None,
        ..recorded
    });
    if local_type != meta.message_type {
        return Err(BridgeError::Salias {
            doing,
            source: salias::Error::TypeMismatch {
                name: name.to_owned(),
                channel_type: status
                    .recorded_type
                    .as_ref()
                    .map_or_else(|| "raw bytes".to_owned(), ToString::to_string),
                requested_type: meta.describe_type(),
            },
        });
    }
    if meta.message_type.is_none() && status.max_message_size < meta.max_message_size as usize {
        return Err(BridgeError::MessagesTooLarge {
            channel: name.to_owned(),
            local_max: status.max_message_size,
            stream_max: meta.max_message_size as usize,
        });
    }
    Ok(sink)
}

/// Creates the raw local channel for `meta` (owned by the bridge while it runs).
fn create_sink(config: &InConfig, meta: &StreamMeta) -> Result<Sink> {
    let name = config.channel.as_str();
    let create = Config::new(name)
        .capacity(config.capacity)
        .max_message_size(meta.max_message_size as usize);
    Sink::open(name, meta, Some(&create)).map_err(BridgeError::salias(format!("creating the local channel \"{name}\"")))
}
