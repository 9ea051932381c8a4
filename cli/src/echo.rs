//! `salias echo NAME`: prints a channel's messages as they arrive, a line each: publisher
//! slot, sequence number (Ordered), length, and the message as fields (where the channel's
//! creator recorded its type's fields) or hex. Losses are reported where they happen: on
//! stderr, or with `--json` as lines of their own.

use std::io::Write;

use salias::Trust;
use serde_json::json;

use crate::commands::Done;
use crate::render::{Render, hex};
use crate::tap::{self, Go, Reading, Stopped};

/// What `echo` was asked for.
pub(crate) struct Echo {
    pub json: bool,
    pub count: Option<u64>,
    pub reading: Option<Reading>,
    pub start: salias::receive::Start,
}

pub(crate) fn echo(name: &str, trust: &Trust, asked: &Echo) -> Result<Done, String> {
    let mut opened = tap::open(name, trust, asked.reading, asked.start)?;
    let render = Render::new(opened.status.recorded_type.as_ref());
    let stdout = std::io::stdout();
    let mut out = std::io::LineWriter::new(stdout.lock());
    // Nobody reads any more (a closed pipe): nothing left to do.
    let mut closed = false;
    let line = |out: &mut dyn Write, text: String| writeln!(out, "{text}").is_ok();
    let json = asked.json;
    let stopped = tap::pump(name, &mut opened, None, asked.count, |message| {
        if message.missed_before > 0 {
            let missed = missed(message.slot, message.sequence, message.missed_before);
            if json {
                closed |= !line(&mut out, missed.to_string());
            } else {
                eprintln!("salias: {name:?}: {}", describe(&missed));
            }
        }
        let text = if json {
            let mut object = json!({
                "slot": message.slot,
                "sequence": message.sequence,
                "len": message.bytes.len(),
            });
            match render.json(message.bytes) {
                Some(fields) => object["fields"] = fields,
                None => object["hex"] = hex(message.bytes).into(),
            }
            object.to_string()
        } else {
            let sequence = message.sequence.map(|s| format!(" sequence {s}")).unwrap_or_default();
            format!(
                "slot {}{sequence} len {}: {}",
                message.slot,
                message.bytes.len(),
                render.text(message.bytes)
            )
        };
        closed |= !line(&mut out, text);
        if closed { Go::Stop } else { Go::On }
    })?;
    let _ = out.flush();
    if stopped == Stopped::Interrupted {
        eprintln!("salias: {name:?}: stopped (Ctrl-C)");
    }
    Ok(Done::Clean)
}

/// A loss as a JSON object: FIFO, how many messages of which publisher's stream; Ordered,
/// which sequence numbers.
pub(crate) fn missed(slot: usize, sequence: Option<u64>, count: u64) -> serde_json::Value {
    match sequence {
        Some(sequence) => json!({
            "missed": count,
            "first_sequence": sequence.saturating_sub(count),
            "end_sequence": sequence,
        }),
        None => json!({ "missed": count, "slot": slot }),
    }
}

/// A loss in words.
pub(crate) fn describe(missed: &serde_json::Value) -> String {
    match missed.get("first_sequence") {
        Some(first) => format!(
            "missed sequence numbers {first}..{} ({} messages)",
            missed["end_sequence"], missed["missed"]
        ),
        None => format!(
            "missed {} messages of publisher slot {}",
            missed["missed"], missed["slot"]
        ),
    }
}
