//! `salias record NAME -o FILE.mcap`: writes every message of a channel to an MCAP file
//! (laid out as `recording.rs` says), until Ctrl-C, `--count` messages or `--seconds`.
//!
//! Tethered by default, so that it loses nothing (publishers wait for it); `--lossy` on
//! a Fanout channel never slows the feed and records what it missed. However it stops, the
//! file is finished (summary and indexes written) and synced to disk; a write that fails (a
//! full disk) is reported with what was recorded until then, and the exit code is 1.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use mcap::records::{MessageHeader, Metadata};
use salias::Trust;
use salias::receive::Start;

use crate::commands::Done;
use crate::echo;
use crate::recording::{self, Schema};
use crate::tap::{self, Go, Reading, Stopped};

/// What `record` was asked for.
pub(crate) struct Record<'a> {
    pub output: &'a Path,
    pub count: Option<u64>,
    pub seconds: Option<std::time::Duration>,
    pub lossy: bool,
    pub from: Start,
    pub crc: bool,
}

/// The file being written, and what was written to it.
struct Writer {
    mcap: mcap::Writer<BufWriter<File>>,
    schema: u16,
    /// MCAP channel id of each publisher slot, as slots first send.
    channels: BTreeMap<usize, u16>,
    losses: Option<u16>,
    /// FIFO: each slot's next index in its publisher's stream.
    indexes: BTreeMap<usize, u64>,
    messages: u64,
    missed: u64,
}

pub(crate) fn record(name: &str, trust: &Trust, asked: &Record<'_>) -> Result<Done, String> {
    let output = asked.output;
    // The channel is looked at (taking no slot) before the file is made, and the file made
    // before a slot is taken: neither a wrong name nor an unwritable path costs the other.
    salias::status::channel_status_with(name, trust).map_err(|e| crate::commands::explain(name, &e))?;
    let existed = std::fs::symlink_metadata(output).is_ok();
    let file = File::create(output).map_err(|e| format!("cannot create {}: {e}", output.display()))?;
    let reading = if asked.lossy { Reading::Lossy } else { Reading::Tethered };
    let mut opened = match tap::open(name, trust, Some(reading), asked.from) {
        Ok(opened) => opened,
        Err(problem) => {
            drop(file);
            // Only a file this call made goes; never one that was there (a device, a pipe,
            // someone's file).
            if !existed {
                let _ = std::fs::remove_file(output);
            }
            return Err(problem);
        }
    };
    let status = opened.status.clone();
    // CRCs only when asked: the writer updates them for every field of every message
    // record it writes, a quarter of the recorder's time at 64-byte messages (and its
    // data-section CRC needs the chunk CRCs: without them it would be wrong, not absent).
    let options = mcap::WriteOptions::new()
        .compression(None)
        .calculate_chunk_crcs(asked.crc)
        .calculate_data_section_crc(asked.crc)
        .library(format!("salias {}", env!("CARGO_PKG_VERSION")));
    let failed = |e: mcap::McapError| format!("cannot write {}: {}", output.display(), with_causes(&e));
    let mut mcap = options
        .create(BufWriter::with_capacity(1 << 20, file))
        .map_err(failed)?;
    let schema = match &status.recorded_type {
        Some(recorded) => {
            let data = serde_json::to_vec(&Schema::of(recorded)).map_err(|e| e.to_string())?;
            mcap.add_schema(&recorded.name, recording::SCHEMA_ENCODING, &data)
                .map_err(failed)?
        }
        None => 0,
    };
    let mut writer = Writer {
        mcap,
        schema,
        channels: BTreeMap::new(),
        losses: None,
        indexes: BTreeMap::new(),
        messages: 0,
        missed: 0,
    };
    let deadline = asked.seconds.map(|seconds| Instant::now() + seconds);
    let reading = opened.reading.name();
    eprintln!(
        "salias: recording {name:?} ({}, {reading}) to {}; Ctrl-C stops",
        status.kind,
        output.display()
    );
    let mut trouble = None;
    let pumped = tap::pump(name, &mut opened, deadline, asked.count, |message| {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| u64::try_from(since.as_nanos()).unwrap_or(u64::MAX));
        let written = writer.message(name, &status, reading, &message, now);
        match written {
            Ok(()) => Go::On,
            Err(e) => {
                trouble = Some(failed(e));
                Go::Stop
            }
        }
    });
    // Finished whatever happened, so that what was recorded can be read.
    let finished = writer.finish(name, &status, reading).map_err(failed);
    let Writer {
        mcap, messages, missed, ..
    } = writer;
    let synced = mcap
        .into_inner()
        .into_inner()
        .map_err(|e| e.into_error())
        .and_then(|file| file.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", output.display()));
    let summary = format!(
        "recorded {} messages of {name:?} to {}{}",
        messages,
        output.display(),
        match missed {
            0 => String::new(),
            missed => format!(", {missed} missed"),
        }
    );
    let stopped = pumped.map_err(|problem| format!("{problem}; {summary}"))?;
    if let Some(problem) = trouble.or(finished.err()).or(synced.err()) {
        return Err(format!(
            "{problem}; {summary} before that, and the file may not be readable"
        ));
    }
    let why = match stopped {
        Stopped::Interrupted => " (Ctrl-C)",
        _ => "",
    };
    eprintln!("salias: {summary}{why}");
    Ok(Done::Clean)
}

impl Writer {
    fn message(
        &mut self,
        name: &str,
        status: &salias::status::ChannelStatus,
        reading: &str,
        message: &tap::Tapped<'_>,
        now: u64,
    ) -> mcap::McapResult<()> {
        if message.missed_before > 0 {
            let missed = echo::missed(message.slot, message.sequence, message.missed_before);
            eprintln!("salias: {name:?}: {}", echo::describe(&missed));
            self.missed += message.missed_before;
            let losses = match self.losses {
                Some(id) => id,
                None => {
                    let metadata = recording::channel_metadata(status, None, reading);
                    let id =
                        self.mcap
                            .add_channel(0, &format!("{name}{}", recording::LOSSES_SUFFIX), "json", &metadata)?;
                    *self.losses.insert(id)
                }
            };
            let header = MessageHeader {
                channel_id: losses,
                sequence: 0,
                log_time: now,
                publish_time: now,
            };
            self.mcap
                .write_to_known_channel(&header, missed.to_string().as_bytes())?;
        }
        let channel = match self.channels.get(&message.slot) {
            Some(&id) => id,
            None => {
                let metadata = recording::channel_metadata(status, Some(message.slot), reading);
                let id = self
                    .mcap
                    .add_channel(self.schema, name, recording::ENCODING, &metadata)?;
                self.channels.insert(message.slot, id);
                id
            }
        };
        let sequence = match message.sequence {
            Some(sequence) => sequence,
            None => {
                let index = self.indexes.entry(message.slot).or_insert(0);
                *index += message.missed_before;
                let this = *index;
                *index += 1;
                this
            }
        };
        let header = MessageHeader {
            channel_id: channel,
            // MCAP's sequence is 32 bits: the low ones (recording.rs).
            sequence: sequence as u32,
            log_time: now,
            publish_time: now,
        };
        self.mcap.write_to_known_channel(&header, message.bytes)?;
        self.messages += 1;
        Ok(())
    }

    fn finish(&mut self, name: &str, status: &salias::status::ChannelStatus, reading: &str) -> mcap::McapResult<()> {
        let metadata = Metadata {
            name: "salias".into(),
            metadata: BTreeMap::from([
                ("channel".to_owned(), name.to_owned()),
                ("kind".to_owned(), status.kind.clone()),
                (
                    "type".to_owned(),
                    status
                        .recorded_type
                        .as_ref()
                        .map_or_else(|| "raw".to_owned(), |t| t.name.clone()),
                ),
                ("reading".to_owned(), reading.to_owned()),
                ("messages".to_owned(), self.messages.to_string()),
                ("missed".to_owned(), self.missed.to_string()),
            ]),
        };
        self.mcap.write_metadata(&metadata)?;
        self.mcap.finish()?;
        Ok(())
    }
}

/// An error and what caused it, as one sentence: the MCAP writer's own words say only that
/// a write failed, its cause says why (a full disk).
pub(crate) fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text = format!("{text}: {next}");
        cause = next.source();
    }
    text
}
