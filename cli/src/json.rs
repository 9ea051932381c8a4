//! The `--json` forms of `list` and `show`: one JSON object per line, whose field names are
//! those of `salias::status::ChannelStatus` (documented in README.md, "Seeing and cleaning up
//! channels"). Counters are integers; an unknown value is `null`, never left out, so every
//! line of one command has the same fields.

use std::io::{self, Write};

use salias::{
    status::ChannelStatus, status::PublisherStatus, status::SlotHolder, status::SubscriberKind,
    status::SubscriberStatus,
};
use serde::{Serialize, Serializer};

/// Writes `value` as one line of JSON to stdout. An error (e.g. a closed pipe) is returned,
/// not a panic, so that `salias top --json | head -1` ends quietly.
pub(crate) fn line(value: &impl Serialize) -> io::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// A slot's holder (or a channel's owner): `{"state": "free" | "alive" | "dead", "pid": …}`,
/// `pid` `null` when free.
#[derive(Serialize)]
pub(crate) struct Holder {
    state: &'static str,
    pid: Option<u32>,
}

impl From<SlotHolder> for Holder {
    fn from(holder: SlotHolder) -> Holder {
        match holder {
            SlotHolder::Free => Holder {
                state: "free",
                pid: None,
            },
            SlotHolder::Alive { pid } => Holder {
                state: "alive",
                pid: Some(pid),
            },
            SlotHolder::Dead { pid } => Holder {
                state: "dead",
                pid: Some(pid),
            },
        }
    }
}

/// Serializes a `SlotHolder` as a [`Holder`], for `#[serde(serialize_with)]`.
pub(crate) fn holder<S: Serializer>(holder: &SlotHolder, serializer: S) -> Result<S::Ok, S::Error> {
    Holder::from(*holder).serialize(serializer)
}

/// Serializes what `Display` says of `value` as a string, for `#[serde(serialize_with)]`.
pub(crate) fn display<S: Serializer>(value: &impl std::fmt::Display, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// Messages in `bytes` of a typed channel's frames; `None` for raw channels, whose frames
/// differ in size.
pub(crate) fn messages(status: &ChannelStatus, bytes: u64) -> Option<u64> {
    status.frame_len().map(|frame| bytes / frame as u64)
}

/// One line of `list --json`: a channel in brief, the columns of `list`.
#[derive(Serialize)]
pub(crate) struct Listed<'a> {
    name: &'a str,
    /// `ready`, `being_created` (its creator is still at it) or `creation_unfinished` (its
    /// creator died first: stale).
    state: &'static str,
    kind: Option<&'a str>,
    owner: Option<Holder>,
    publishers: Option<Held>,
    subscribers: Option<Held>,
    max_backlog_bytes: Option<u64>,
    max_backlog_messages: Option<u64>,
}

/// How many of a channel's slots are held, by live and by dead processes.
#[derive(Serialize)]
pub(crate) struct Held {
    slots: usize,
    alive: usize,
    dead: usize,
}

impl Held {
    pub(crate) fn of(holders: impl Iterator<Item = SlotHolder>) -> Held {
        let mut held = Held {
            slots: 0,
            alive: 0,
            dead: 0,
        };
        for holder in holders {
            held.slots += 1;
            match holder {
                SlotHolder::Alive { .. } => held.alive += 1,
                SlotHolder::Dead { .. } => held.dead += 1,
                SlotHolder::Free => {}
            }
        }
        held
    }

    /// "alive/slots", with dead holders counted apart: the `list` column.
    pub(crate) fn summary(&self) -> String {
        if self.dead > 0 {
            format!("{}/{} (+{} dead)", self.alive, self.slots, self.dead)
        } else {
            format!("{}/{}", self.alive, self.slots)
        }
    }
}

impl<'a> Listed<'a> {
    pub(crate) fn ready(status: &'a ChannelStatus) -> Listed<'a> {
        if !status.initialised {
            return Listed {
                state: "creation_unfinished",
                owner: Some(status.owner.into()),
                ..Listed::being_created(&status.name)
            };
        }
        let max_backlog = status.subscribers.iter().map(|s| s.backlog_bytes).max().unwrap_or(0);
        Listed {
            name: &status.name,
            state: "ready",
            kind: Some(&status.kind),
            owner: Some(status.owner.into()),
            publishers: Some(Held::of(status.publishers.iter().map(|p| p.holder))),
            subscribers: Some(Held::of(status.subscribers.iter().map(|s| s.holder))),
            max_backlog_bytes: Some(max_backlog),
            max_backlog_messages: messages(status, max_backlog),
        }
    }

    pub(crate) fn being_created(name: &'a str) -> Listed<'a> {
        Listed {
            name,
            state: "being_created",
            kind: None,
            owner: None,
            publishers: None,
            subscribers: None,
            max_backlog_bytes: None,
            max_backlog_messages: None,
        }
    }
}

/// One line of `show --json`: everything `ChannelStatus` holds.
#[derive(Serialize)]
pub(crate) struct Shown<'a> {
    name: &'a str,
    initialised: bool,
    kind: &'a str,
    message_type: Option<MessageType<'a>>,
    recorded_type: Option<RecordedType<'a>>,
    capacity: usize,
    max_message_size: usize,
    frame_len: Option<usize>,
    owner: Holder,
    stale: bool,
    owner_uid: u32,
    mode: u32,
    sequence: Option<u64>,
    publishers: Vec<Publisher>,
    subscribers: Vec<Subscriber>,
    /// Processes still mapping a removed channel of this name (`removed_channel_users`).
    removed_mapped_by: &'a [u32],
}

#[derive(Serialize)]
struct MessageType<'a> {
    name: &'a str,
    size: usize,
}

#[derive(Serialize)]
struct RecordedType<'a> {
    name: &'a str,
    size: u32,
    align: u32,
    layout_hash: u64,
    schema_version: u32,
    /// `null` when the creator recorded no field table (`RecordedType::fields`).
    fields: Option<Vec<Field<'a>>>,
}

#[derive(Serialize)]
struct Field<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    ty: &'a str,
    offset: usize,
    size: usize,
}

#[derive(Serialize)]
struct Publisher {
    slot: usize,
    holder: Holder,
    position: u64,
    published: u64,
    backpressured: u64,
    pending: Option<u64>,
}

#[derive(Serialize)]
struct Subscriber {
    slot: usize,
    holder: Holder,
    cursors: Vec<Option<u64>>,
    backlog_bytes: u64,
    backlog_messages: Option<u64>,
    /// `tethered` or `lossy`.
    #[serde(serialize_with = "display")]
    kind: SubscriberKind,
    demoted: bool,
    missed: u64,
}

impl<'a> Shown<'a> {
    pub(crate) fn new(status: &'a ChannelStatus, removed_mapped_by: &'a [u32]) -> Shown<'a> {
        Shown {
            removed_mapped_by,
            name: &status.name,
            initialised: status.initialised,
            kind: &status.kind,
            message_type: status
                .message_type
                .as_ref()
                .map(|(name, size)| MessageType { name, size: *size }),
            recorded_type: status.recorded_type.as_ref().map(|recorded| RecordedType {
                name: &recorded.name,
                size: recorded.size,
                align: recorded.align,
                layout_hash: recorded.layout_hash,
                schema_version: recorded.schema_version,
                fields: recorded.fields.as_ref().map(|fields| {
                    (fields.iter())
                        .map(|f| Field {
                            name: &f.name,
                            ty: &f.ty,
                            offset: f.offset,
                            size: f.size,
                        })
                        .collect()
                }),
            }),
            capacity: status.capacity,
            max_message_size: status.max_message_size,
            frame_len: status.frame_len(),
            owner: status.owner.into(),
            stale: status.is_stale(),
            owner_uid: status.owner_uid,
            mode: status.mode,
            sequence: status.sequence,
            publishers: status.publishers.iter().enumerate().map(Publisher::new).collect(),
            subscribers: status
                .subscribers
                .iter()
                .enumerate()
                .map(|(slot, subscriber)| Subscriber::new(status, slot, subscriber))
                .collect(),
        }
    }
}

impl Publisher {
    fn new((slot, publisher): (usize, &PublisherStatus)) -> Publisher {
        Publisher {
            slot,
            holder: publisher.holder.into(),
            position: publisher.position,
            published: publisher.published,
            backpressured: publisher.backpressured,
            pending: publisher.pending,
        }
    }
}

impl Subscriber {
    fn new(status: &ChannelStatus, slot: usize, subscriber: &SubscriberStatus) -> Subscriber {
        Subscriber {
            slot,
            holder: subscriber.holder.into(),
            cursors: subscriber.cursors.clone(),
            backlog_bytes: subscriber.backlog_bytes,
            backlog_messages: messages(status, subscriber.backlog_bytes),
            kind: subscriber.kind,
            demoted: subscriber.demoted,
            missed: subscriber.missed,
        }
    }
}
