//! How the bridge's counts and events read: one line of text for people (`Display`) and
//! one JSON object for machines (`to_json`), with the same names in both, so that a log
//! read by eye and a script reading `--json` see the same things.
//!
//! Counts are `name=value` pairs named after the fields of [`InStats`] and [`OutStats`];
//! stream ids are 16 hexadecimal digits in both forms (JSON numbers lose precision above
//! 2^53); ranges are half-open, `A..B (N)` in text and `{"start": A, "end": B}` in JSON.

use std::fmt;
use std::ops::Range;

use serde_json::{Value, json};

use crate::inbound::{InEvent, InStats};
use crate::outbound::{OutEvent, OutStats};
use crate::wire::StreamMeta;

fn stream_id(id: u64) -> String {
    format!("{id:016x}")
}

fn range(range: &Range<u64>) -> Value {
    json!({ "start": range.start, "end": range.end })
}

fn count(range: &Range<u64>) -> u64 {
    range.end.saturating_sub(range.start)
}

impl StreamMeta {
    /// The stream as a JSON object: `stream_id`, `channel`, `kind`, `type` (salias's
    /// words, `"raw bytes"` for raw channels) and `max_message_size`.
    pub fn to_json(&self) -> Value {
        json!({
            "stream_id": stream_id(self.stream_id),
            "channel": self.channel,
            "kind": self.kind(),
            "type": self.describe_type(),
            "max_message_size": self.max_message_size,
        })
    }
}

impl InStats {
    /// The counts as a JSON object of integers, one member per field (`gaps` as
    /// `gap_events` and `missing`, as in the text form).
    pub fn to_json(&self) -> Value {
        json!({
            "samples": self.samples,
            "messages": self.messages,
            "delivered": self.delivered,
            "dropped": self.dropped,
            "waited": self.waited,
            "lost_samples": self.lost_samples,
            "gap_events": self.gaps.events,
            "missing": self.gaps.missing,
            "malformed": self.malformed,
            "refused": self.refused,
            "outs_lost": self.outs_lost,
            "undelivered": self.undelivered,
            "in_doubt": self.in_doubt,
            "unrecorded": self.unrecorded,
            "no_subscriber": self.no_subscriber,
        })
    }
}

/// `samples=3 messages=100 delivered=100 …`: every count, named as in [`InStats::to_json`].
impl fmt::Display for InStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        pairs(f, &self.to_json())
    }
}

impl OutStats {
    /// The counts as a JSON object of integers, one member per field.
    pub fn to_json(&self) -> Value {
        json!({
            "messages": self.messages,
            "samples": self.samples,
            "bytes": self.bytes,
            "reattached": self.reattached,
            "publishers_gone": self.publishers_gone,
        })
    }
}

/// `messages=100 samples=2 …`: every count, named as in [`OutStats::to_json`].
impl fmt::Display for OutStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        pairs(f, &self.to_json())
    }
}

/// Writes a flat JSON object's members as `name=value` pairs, in the object's order.
fn pairs(f: &mut fmt::Formatter<'_>, object: &Value) -> fmt::Result {
    let Some(members) = object.as_object() else {
        return Ok(());
    };
    for (index, (name, value)) in members.iter().enumerate() {
        let separator = if index == 0 { "" } else { " " };
        write!(f, "{separator}{name}={value}")?;
    }
    Ok(())
}

impl InEvent {
    /// The event's name in `--json` lines: `stream`, `refused`, `gap`, `out_joined`,
    /// `out_lost`, `malformed`, `undelivered` or `unrecorded`.
    pub fn name(&self) -> &'static str {
        match self {
            InEvent::Stream(_) => "stream",
            InEvent::Refused { .. } => "refused",
            InEvent::Gap { .. } => "gap",
            InEvent::OutJoined { .. } => "out_joined",
            InEvent::OutLost { .. } => "out_lost",
            InEvent::Malformed { .. } => "malformed",
            InEvent::Undelivered { .. } => "undelivered",
            InEvent::Unrecorded { .. } => "unrecorded",
        }
    }

    /// The event as a JSON object: `{"event": name, …}` with the event's fields.
    pub fn to_json(&self) -> Value {
        let mut object = match self {
            InEvent::Stream(meta) => meta.to_json(),
            InEvent::Refused { stream_id: id, error } => json!({ "stream_id": stream_id(*id), "error": error }),
            InEvent::Gap {
                stream_id: id,
                missing,
                ordered,
            } => json!({
                "stream_id": stream_id(*id),
                "missing": range(missing),
                "count": count(missing),
                "numbers": if *ordered { "sequence" } else { "message" },
            }),
            InEvent::OutJoined { stream_id: id } | InEvent::OutLost { stream_id: id } => {
                json!({ "stream_id": stream_id(*id) })
            }
            InEvent::Malformed { reason } => json!({ "reason": reason }),
            InEvent::Undelivered {
                stream_id: id,
                messages,
                sequences,
                in_doubt,
                gap_in_doubt,
            } => json!({
                "stream_id": stream_id(*id),
                "messages": range(messages),
                "sequences": sequences.as_ref().map(range),
                "in_doubt": range(in_doubt),
                "gap_in_doubt": gap_in_doubt,
            }),
            InEvent::Unrecorded { error } => json!({ "error": error }),
        };
        tag(&mut object, self.name());
        object
    }
}

/// One line per event, e.g. `gap in stream 00ab…: sequence numbers 120..130 missing (10)`.
impl fmt::Display for InEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InEvent::Stream(meta) => write!(
                f,
                "stream {:016x}: {} of {} from channel \"{}\"",
                meta.stream_id,
                meta.kind(),
                meta.describe_type(),
                meta.channel
            ),
            InEvent::Refused { stream_id, error } => write!(f, "refused stream {stream_id:016x}: {error}"),
            InEvent::Gap {
                stream_id,
                missing,
                ordered,
            } => write!(
                f,
                "gap in stream {stream_id:016x}: {} {}..{} missing ({})",
                if *ordered { "sequence numbers" } else { "messages" },
                missing.start,
                missing.end,
                count(missing)
            ),
            InEvent::OutJoined { stream_id } => write!(f, "out joined: stream {stream_id:016x}"),
            InEvent::OutLost { stream_id } => write!(f, "out lost: stream {stream_id:016x} went away"),
            InEvent::Malformed { reason } => write!(f, "malformed sample: {reason}"),
            InEvent::Undelivered {
                stream_id,
                messages,
                sequences,
                in_doubt,
                gap_in_doubt,
            } => {
                write!(
                    f,
                    "undelivered in stream {stream_id:016x}: messages {}..{} ({}) were not delivered by the previous in",
                    messages.start,
                    messages.end,
                    count(messages)
                )?;
                if let Some(sequences) = sequences {
                    write!(
                        f,
                        "; sequence numbers {}..{} ({}) declared missing in the near channel",
                        sequences.start,
                        sequences.end,
                        count(sequences)
                    )?;
                }
                if !in_doubt.is_empty() {
                    write!(
                        f,
                        "; messages {}..{} ({}) in doubt: the previous in was publishing them as it died, and how many arrived cannot be told",
                        in_doubt.start,
                        in_doubt.end,
                        count(in_doubt)
                    )?;
                }
                if *gap_in_doubt > 0 {
                    write!(
                        f,
                        "; the first {gap_in_doubt} of those numbers were being declared as it died and may be declared twice"
                    )?;
                }
                Ok(())
            }
            InEvent::Unrecorded { error } => write!(
                f,
                "state not recorded: {error}; a restarted in may report as undelivered what this one delivered"
            ),
        }
    }
}

impl OutEvent {
    /// The event's name in `--json` lines: `channel_removed`, `reattached` or
    /// `publishers_gone`.
    pub fn name(&self) -> &'static str {
        match self {
            OutEvent::ChannelRemoved { .. } => "channel_removed",
            OutEvent::Reattached { .. } => "reattached",
            OutEvent::PublishersGone { .. } => "publishers_gone",
        }
    }

    /// The event as a JSON object: `{"event": name, …}` with the event's fields.
    pub fn to_json(&self) -> Value {
        let mut object = match self {
            OutEvent::ChannelRemoved { channel } | OutEvent::PublishersGone { channel } => {
                json!({ "channel": channel })
            }
            OutEvent::Reattached { previous, stream } => {
                let mut object = stream.to_json();
                if let Some(members) = object.as_object_mut() {
                    members.insert("previous".to_owned(), Value::from(stream_id(*previous)));
                }
                object
            }
        };
        tag(&mut object, self.name());
        object
    }
}

/// One line per event, e.g. `out: every publisher of channel "quotes" has gone; waiting
/// for the next`.
impl fmt::Display for OutEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutEvent::ChannelRemoved { channel } => write!(
                f,
                "out: channel \"{channel}\" was removed; reading what is left in it and watching its name for a new channel"
            ),
            OutEvent::Reattached { previous, stream } => write!(
                f,
                "out: channel \"{}\" was replaced by a new one ({}, {}); stream {previous:016x} ended, now stream {:016x}",
                stream.channel,
                stream.kind(),
                stream.describe_type(),
                stream.stream_id
            ),
            OutEvent::PublishersGone { channel } => {
                write!(
                    f,
                    "out: every publisher of channel \"{channel}\" has gone; waiting for the next"
                )
            }
        }
    }
}

/// Puts `"event": name` first, so a reader can dispatch on the first member.
fn tag(object: &mut Value, name: &str) {
    let mut tagged = serde_json::Map::new();
    tagged.insert("event".to_owned(), Value::from(name));
    if let Some(members) = object.as_object_mut() {
        tagged.append(members);
    }
    *object = Value::Object(tagged);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_read_as_name_value_pairs_with_the_json_names() {
        let stats = InStats {
            samples: 3,
            messages: 100,
            delivered: 99,
            dropped: 1,
            ..InStats::default()
        };
        let line = stats.to_string();
        assert!(
            line.starts_with("samples=3 messages=100 delivered=99 dropped=1 waited=0"),
            "{line}"
        );
        assert!(!line.contains('{') && !line.contains("InStats"), "{line}");
        let json = stats.to_json();
        for pair in line.split(' ') {
            let (name, value) = pair.split_once('=').unwrap();
            assert_eq!(json[name].as_u64(), Some(value.parse().unwrap()), "{name}");
        }
        assert_eq!(
            OutStats {
                messages: 5,
                samples: 1,
                bytes: 60,
                reattached: 0,
                publishers_gone: 2
            }
            .to_string(),
            "messages=5 samples=1 bytes=60 reattached=0 publishers_gone=2"
        );
    }

    #[test]
    fn events_read_as_lines_and_as_tagged_json() {
        let gap = InEvent::Gap {
            stream_id: 0xab,
            missing: 120..130,
            ordered: true,
        };
        assert_eq!(
            gap.to_string(),
            "gap in stream 00000000000000ab: sequence numbers 120..130 missing (10)"
        );
        assert_eq!(
            serde_json::to_string(&gap.to_json()).unwrap(),
            r#"{"event":"gap","stream_id":"00000000000000ab","missing":{"start":120,"end":130},"count":10,"numbers":"sequence"}"#
        );
        let undelivered = InEvent::Undelivered {
            stream_id: 1,
            messages: 28..29,
            sequences: None,
            in_doubt: 0..0,
            gap_in_doubt: 0,
        };
        assert_eq!(
            undelivered.to_string(),
            "undelivered in stream 0000000000000001: messages 28..29 (1) were not delivered by the previous in"
        );
        let json = undelivered.to_json();
        assert_eq!(json["event"], "undelivered");
        assert_eq!(json["sequences"], Value::Null);
        assert_eq!(json["messages"]["end"], 29);
        let gone = OutEvent::PublishersGone {
            channel: "quotes".into(),
        };
        assert_eq!(
            serde_json::to_string(&gone.to_json()).unwrap(),
            r#"{"event":"publishers_gone","channel":"quotes"}"#
        );
    }
}
