//! `salias replay FILE.mcap NAME`: publishes a recording's messages into a channel, in the
//! order they were recorded, at the recorded pace (`--rate 1`), scaled (`--rate 2` is twice
//! as fast) or as fast as the channel takes them (`--fast`).
//!
//! The file is read through once before anything is published: a file that is not a whole
//! salias recording (truncated, corrupt, another tool's) is refused with what is wrong, and
//! nothing is published. The channel is connected to if it exists — with the recording's
//! kind and, for typed messages, its type, so one of another kind or type is refused with
//! the library's own error — or created with the recorded kind, type, capacity and slots.
//! Each recorded publisher slot is replayed by a publisher of its own (`--one-publisher`:
//! all by one), so FIFO subscribers see each publisher's stream as it was; an Ordered
//! recording is published in its recorded order, which the channel's sequence numbers then
//! follow. Publishing waits for room, so a subscriber that keeps up loses nothing.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::time::{Duration, Instant};

use salias::kind::{Fanout, Fifo, Mode, Mpsc, Ordered, Topology};
use salias::{Bytes, Channel, Config, Error, PublishError, Publisher, Trust};

use crate::commands::Done;
use crate::recording::{self, Schema};

/// What `replay` was asked for.
pub(crate) struct Replay<'a> {
    pub file: &'a Path,
    /// Recorded time is divided by this; `None`: as fast as possible.
    pub rate: Option<f64>,
    pub one_publisher: bool,
    /// Subscribers to wait for before publishing.
    pub wait_for_subscribers: u32,
}

/// What the first reading of the file found.
struct Scanned {
    topic: String,
    kind: String,
    schema: Option<Schema>,
    capacity: usize,
    max_message_size: usize,
    publishers: u32,
    subscribers: u32,
    /// Messages per recorded publisher slot.
    slots: BTreeMap<usize, u64>,
    messages: u64,
}

pub(crate) fn replay(name: &str, trust: &Trust, asked: &Replay<'_>) -> Result<Done, String> {
    let file = asked.file;
    let Some(scanned) = scan(file)? else {
        eprintln!("salias: {} holds no messages; nothing replayed", file.display());
        return Ok(Done::Clean);
    };
    let replayed = match scanned.kind.as_str() {
        "FifoMpsc" => publish::<Fifo, Mpsc>(name, trust, asked, &scanned),
        "FifoFanout" => publish::<Fifo, Fanout>(name, trust, asked, &scanned),
        "OrderedMpsc" => publish::<Ordered, Mpsc>(name, trust, asked, &scanned),
        "OrderedFanout" => publish::<Ordered, Fanout>(name, trust, asked, &scanned),
        other => Err(format!(
            "{} records a channel of kind {other:?}, which this tool does not know",
            file.display()
        )),
    }?;
    eprintln!(
        "salias: replayed {replayed} of {} messages ({} {}, recorded from {:?}) from {} into {name:?}",
        scanned.messages,
        scanned.kind,
        scanned
            .schema
            .as_ref()
            .map_or_else(|| "raw".to_owned(), Schema::describe),
        scanned.topic,
        file.display()
    );
    Ok(if replayed == scanned.messages {
        Done::Clean
    } else {
        Done::WithProblems
    })
}

/// The file's messages, read in order; each as the MCAP reader gives it, or why the file
/// cannot be read.
fn messages(file: &Path) -> Result<impl Iterator<Item = Result<mcap::Message<'static>, String>>, String> {
    let opened = File::open(file).map_err(|e| format!("cannot open {}: {e}", file.display()))?;
    let shown = file.display().to_string();
    Ok(
        mcap::io::MessageReader::new(BufReader::with_capacity(1 << 20, opened)).map(move |message| {
            message.map_err(|e| format!("{shown} is not a whole MCAP file: {}", crate::record::with_causes(&e)))
        }),
    )
}

/// Reads the whole file once: what it records, or why it is not a salias recording.
fn scan(file: &Path) -> Result<Option<Scanned>, String> {
    let shown = file.display();
    let mut scanned: Option<Scanned> = None;
    for message in messages(file)? {
        let message = message?;
        let channel = &message.channel;
        if channel.topic.ends_with(recording::LOSSES_SUFFIX) && channel.message_encoding == "json" {
            continue;
        }
        if channel.message_encoding != recording::ENCODING {
            return Err(format!(
                "{shown} is not a salias recording: its channel {:?} has message encoding {:?}, not {:?} (record with `salias record`)",
                channel.topic,
                channel.message_encoding,
                recording::ENCODING
            ));
        }
        let meta = |key: &str| -> Result<&str, String> {
            channel.metadata.get(key).map(String::as_str).ok_or_else(|| {
                format!(
                    "{shown} is not a salias recording: its channel {:?} has no {key:?} metadata",
                    channel.topic
                )
            })
        };
        let number = |key: &str| -> Result<u64, String> {
            meta(key)?
                .parse()
                .map_err(|_| format!("{shown}: the {key:?} of channel {:?} is not a number", channel.topic))
        };
        let schema = match &channel.schema {
            Some(schema) if schema.encoding == recording::SCHEMA_ENCODING => {
                Some(serde_json::from_slice::<Schema>(&schema.data).map_err(|e| {
                    format!(
                        "{shown}: the message type recorded as {:?} cannot be read: {e}",
                        schema.name
                    )
                })?)
            }
            Some(schema) => {
                return Err(format!(
                    "{shown} is not a salias recording: its schema {:?} has encoding {:?}, not {:?}",
                    schema.name,
                    schema.encoding,
                    recording::SCHEMA_ENCODING
                ));
            }
            None => None,
        };
        let slot = usize::try_from(number(recording::SLOT)?).unwrap_or(usize::MAX);
        let len = message.data.len();
        let this = match &mut scanned {
            None => scanned.insert(Scanned {
                topic: channel.topic.clone(),
                kind: meta(recording::KIND)?.to_owned(),
                schema,
                capacity: usize::try_from(number(recording::CAPACITY)?).unwrap_or(usize::MAX),
                max_message_size: usize::try_from(number(recording::MAX_MESSAGE_SIZE)?).unwrap_or(usize::MAX),
                publishers: u32::try_from(number(recording::PUBLISHERS)?).unwrap_or(u32::MAX),
                subscribers: u32::try_from(number(recording::SUBSCRIBERS)?).unwrap_or(u32::MAX),
                slots: BTreeMap::new(),
                messages: 0,
            }),
            Some(this) => {
                if channel.topic != this.topic || meta(recording::KIND)? != this.kind || schema != this.schema {
                    return Err(format!(
                        "{shown} records more than one salias channel ({:?} and {:?}); replay plays one",
                        this.topic, channel.topic
                    ));
                }
                this
            }
        };
        let fits = match &this.schema {
            Some(schema) => len == schema.size as usize,
            None => len <= this.max_message_size,
        };
        if !fits {
            return Err(format!(
                "{shown}: message {} of {:?} is {len} bytes, which its channel cannot carry",
                this.messages, this.topic
            ));
        }
        *this.slots.entry(slot).or_insert(0) += 1;
        this.messages += 1;
    }
    Ok(scanned)
}

/// Connects to `name` or creates it, as the recording says.
fn channel<M: Mode, K: Topology>(name: &str, trust: &Trust, scanned: &Scanned) -> Result<Channel<Bytes, M, K>, String> {
    let explain = |e: Error| crate::commands::explain(name, &e);
    let described = match &scanned.schema {
        Some(schema) => Some(schema.recorded().message_type().ok_or_else(|| {
            format!(
                "the recording's message type {} has no field table (or one that does not match its layout), so a channel of it cannot be made or checked here; replay into a channel of that type a Rust program made",
                schema.describe()
            )
        })?),
        None => None,
    };
    match salias::status::channel_status_with(name, trust) {
        Ok(status) => {
            if let (None, Some(recorded)) = (&scanned.schema, &status.recorded_type) {
                return Err(format!(
                    "{name:?} carries messages of type {recorded}, and the recording raw bytes; replay it into a raw channel"
                ));
            }
            match &described {
                Some(described) => Channel::connect_typed_with(name, described, trust),
                None => Channel::connect_as_bytes_with(name, trust),
            }
            .map_err(explain)
        }
        Err(Error::NotFound { .. }) => {
            let config = Config::new(name)
                .capacity(scanned.capacity)
                .publishers(scanned.publishers)
                .subscribers(scanned.subscribers);
            match &described {
                Some(described) => Channel::create_typed(&config, described),
                None => Channel::create(&config.max_message_size(scanned.max_message_size)),
            }
            .map_err(explain)
        }
        Err(e) => Err(explain(e)),
    }
}

fn publish<M: Mode, K: Topology>(
    name: &str,
    trust: &Trust,
    asked: &Replay<'_>,
    scanned: &Scanned,
) -> Result<u64, String> {
    let interrupted = crate::interrupt::on_ctrl_c()?;
    let channel = channel::<M, K>(name, trust, scanned)?;
    let mut publishers: BTreeMap<usize, Publisher<Bytes, M, K>> = BTreeMap::new();
    let wanted = if asked.one_publisher { 1 } else { scanned.slots.len() };
    for (n, &slot) in scanned.slots.keys().take(wanted).enumerate() {
        let publisher = channel.publisher().map_err(|e| {
            format!(
                "{}; the recording has {} publisher slots and {n} of them found a free slot here (--one-publisher replays them all through one)",
                crate::commands::explain(name, &e),
                scanned.slots.len()
            )
        })?;
        publishers.insert(slot, publisher);
    }
    // Subscribers first, so that what is replayed has someone to go to.
    if asked.wait_for_subscribers > 0 {
        eprintln!(
            "salias: waiting for {} subscriber(s) of {name:?} before replaying (--wait-for-subscribers 0 does not wait)",
            asked.wait_for_subscribers
        );
        while connected_subscribers(name, trust) < asked.wait_for_subscribers {
            if interrupted.wait_until(Instant::now() + Duration::from_millis(10)) {
                return Ok(0);
            }
        }
    }
    let first = *publishers.keys().next().unwrap_or(&0);
    let mut published = 0u64;
    let mut start: Option<(Instant, u64)> = None;
    for message in messages(asked.file)? {
        let message = message?;
        let channel_meta = &message.channel;
        if channel_meta.message_encoding != recording::ENCODING {
            continue;
        }
        if let Some(rate) = asked.rate {
            let (started, first_time) = *start.get_or_insert((Instant::now(), message.log_time));
            let due = Duration::from_secs_f64(message.log_time.saturating_sub(first_time) as f64 / 1e9 / rate);
            let target = started + due;
            if target > Instant::now() + Duration::from_micros(200) && interrupted.wait_until(target) {
                break;
            }
            while Instant::now() < target {
                std::hint::spin_loop();
            }
        }
        let slot = channel_meta
            .metadata
            .get(recording::SLOT)
            .and_then(|slot| slot.parse().ok())
            .filter(|slot| publishers.contains_key(slot))
            .unwrap_or(first);
        let Some(publisher) = publishers.get_mut(&slot) else {
            break;
        };
        loop {
            match publisher.send_timeout(&message.data, Duration::from_millis(50)) {
                Ok(()) => break,
                Err(PublishError::TimedOut | PublishError::Backpressured) if !interrupted.pressed() => {}
                Err(PublishError::TimedOut | PublishError::Backpressured) => return Ok(published),
                Err(error) => {
                    let fault = publisher.fault().map(|f| format!(": {f}")).unwrap_or_default();
                    return Err(format!(
                        "{name:?}: {error}{fault}; {published} of {} messages were replayed",
                        scanned.messages
                    ));
                }
            }
        }
        published += 1;
        if interrupted.pressed() {
            break;
        }
    }
    Ok(published)
}

/// How many processes hold a subscriber slot of `name` now.
fn connected_subscribers(name: &str, trust: &Trust) -> u32 {
    salias::status::channel_status_with(name, trust).map_or(0, |status| {
        status
            .subscribers
            .iter()
            .filter(|subscriber| matches!(subscriber.holder, salias::status::SlotHolder::Alive { .. }))
            .count() as u32
    })
}
