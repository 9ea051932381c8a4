//! How a salias channel is laid out in an MCAP file: what `record` writes and `replay`
//! reads, in one place.
//!
//! - Every publisher slot that sent a message is an MCAP channel whose topic is the salias
//!   channel's name, with message encoding `salias` (the message's bytes as published) and
//!   metadata: `salias.kind` (`FifoMpsc` …), `salias.publisher_slot`, `salias.capacity`,
//!   `salias.max_message_size`, `salias.publishers`, `salias.subscribers` (slot counts) and
//!   `salias.reading` (`tethered` or `lossy`).
//! - A typed channel's messages have the schema `salias.type`: a JSON object with the
//!   recorded type's `name`, `size`, `align`, `layout_hash`, `schema_version` and `fields`
//!   (`[{name, type, offset, size}]`, or null where the creator recorded none). Raw channels
//!   have no schema.
//! - Each message's log and publish time is when `record` received it (Unix nanoseconds);
//!   its MCAP sequence is the low 32 bits of its salias sequence number (Ordered) or of its
//!   index in its publisher's stream (FIFO, counting what was missed).
//! - Losses are messages on the topic `NAME/salias.losses`, encoding `json`: `{"missed": n,
//!   "slot": s}` (FIFO) or `{"missed": n, "first_sequence": a, "end_sequence": b}` (Ordered),
//!   logged when found.
//! - A metadata record `salias` at the end sums it up: `channel`, `kind`, `type`, `reading`,
//!   `messages`, `missed`.

use std::collections::BTreeMap;

use salias::message::Field;
use salias::status::{ChannelStatus, RecordedType};
use serde::{Deserialize, Serialize};

/// The message encoding of a salias message.
pub(crate) const ENCODING: &str = "salias";
/// The schema encoding of a salias message type.
pub(crate) const SCHEMA_ENCODING: &str = "salias.type";
/// The suffix of the losses' topic.
pub(crate) const LOSSES_SUFFIX: &str = "/salias.losses";

pub(crate) const KIND: &str = "salias.kind";
pub(crate) const SLOT: &str = "salias.publisher_slot";
pub(crate) const CAPACITY: &str = "salias.capacity";
pub(crate) const MAX_MESSAGE_SIZE: &str = "salias.max_message_size";
pub(crate) const PUBLISHERS: &str = "salias.publishers";
pub(crate) const SUBSCRIBERS: &str = "salias.subscribers";
pub(crate) const READING: &str = "salias.reading";

/// A message type as the schema records it.
#[derive(Serialize, Deserialize, PartialEq, Eq, Debug, Clone)]
pub(crate) struct Schema {
    pub name: String,
    pub size: u32,
    pub align: u32,
    pub layout_hash: u64,
    pub schema_version: u32,
    pub fields: Option<Vec<SchemaField>>,
}

#[derive(Serialize, Deserialize, PartialEq, Eq, Debug, Clone)]
pub(crate) struct SchemaField {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub offset: usize,
    pub size: usize,
}

impl Schema {
    pub(crate) fn of(recorded: &RecordedType) -> Schema {
        Schema {
            name: recorded.name.clone(),
            size: recorded.size,
            align: recorded.align,
            layout_hash: recorded.layout_hash,
            schema_version: recorded.schema_version,
            fields: recorded.fields.as_ref().map(|fields| {
                fields
                    .iter()
                    .map(|field| SchemaField {
                        name: field.name.clone(),
                        ty: field.ty.clone(),
                        offset: field.offset,
                        size: field.size,
                    })
                    .collect()
            }),
        }
    }

    /// The type as the library's [`RecordedType`], to compare with a live channel's.
    pub(crate) fn recorded(&self) -> RecordedType {
        let mut recorded = RecordedType {
            name: self.name.clone(),
            size: self.size,
            align: self.align,
            layout_hash: self.layout_hash,
            schema_version: self.schema_version,
            fields: None,
        };
        recorded.fields = self.fields.as_ref().map(|fields| {
            fields
                .iter()
                .map(|field| Field::new(field.name.clone(), field.ty.clone(), field.offset, field.size))
                .collect()
        });
        recorded
    }

    /// How the tool names it in messages.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} ({} bytes, layout {:016x}, version {})",
            self.name, self.size, self.layout_hash, self.schema_version
        )
    }
}

/// The metadata of the MCAP channel of publisher `slot`.
pub(crate) fn channel_metadata(status: &ChannelStatus, slot: Option<usize>, reading: &str) -> BTreeMap<String, String> {
    let mut metadata = BTreeMap::from([
        (KIND.to_owned(), status.kind.clone()),
        (CAPACITY.to_owned(), status.capacity.to_string()),
        (MAX_MESSAGE_SIZE.to_owned(), status.max_message_size.to_string()),
        (PUBLISHERS.to_owned(), status.publishers.len().to_string()),
        (SUBSCRIBERS.to_owned(), status.subscribers.len().to_string()),
        (READING.to_owned(), reading.to_owned()),
    ]);
    if let Some(slot) = slot {
        metadata.insert(SLOT.to_owned(), slot.to_string());
    }
    metadata
}
