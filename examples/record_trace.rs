//! Records what a small real channel does, as a trace the architecture animation
//! (`doc/animation/index.html`) replays.
//!
//! Run: `cargo run --example record_trace [-- OUT_DIR]` (default `doc/animation`); writes
//! `trace.json` and `trace.js` (the same document assigned to `window.SALIAS_TRACE`, so
//! the page can load it from disk, where browsers refuse `fetch`).
//!
//! The scenario, on a `RawOrderedMpsc` with 4 KiB rings and a 2 KiB publication window:
//! two publishers offer messages of varying length faster than the subscriber takes
//! them, so offers are refused and frames wrap around the ends of the rings; a third
//! publisher, in a child process, takes a global sequence number and is killed before
//! committing it, so the subscriber reports a gap; a successor takes over the dead slot
//! and continues from its last committed frame; finally the subscriber drains the rest.
//!
//! Everything recorded is observable through the library's API: the result of each
//! `offer`, each message `try_recv` returns (slot, sequence, gap, length), `gaps()`, and
//! before and after every call `salias::status::channel_status`, whose differences give the
//! commit positions, the taken sequence numbers and the cursor releases. One thread
//! drives every handle in a fixed order, so the trace is the same on every run.

use std::time::{Duration, Instant};

use salias::{
    Config, Error, PublishError, Publisher, RawOrderedMpsc, Subscriber, status::ChannelStatus, status::SlotHolder,
    status::channel_status,
};
use serde_json::{Value, json};

type Pub = Publisher<salias::Bytes, salias::Ordered, salias::Mpsc>;
type Sub = Subscriber<salias::Bytes, salias::Ordered, salias::Mpsc>;

const CAPACITY: usize = 4096;
const WINDOW: usize = 2048;
/// Payload lengths, used in turn: frames of 224 to 608 bytes in a 4096-byte ring.
const LENGTHS: [usize; 5] = [200, 328, 456, 584, 264];
/// The publisher slot the child process takes and dies in.
const DOOMED: usize = 2;
const DIE_ARG: &str = "take-a-number-and-die";

/// The trace being written, and the status it was last compared with.
struct Recorder {
    name: String,
    events: Vec<Value>,
    last: ChannelStatus,
    next_len: usize,
}

impl Recorder {
    fn status(&self) -> Result<ChannelStatus, Error> {
        channel_status(&self.name)
    }

    fn push(&mut self, event: Value) {
        self.events.push(event);
    }

    fn next_len(&mut self) -> usize {
        let len = LENGTHS[self.next_len % LENGTHS.len()];
        self.next_len += 1;
        len
    }

    /// Records the cursor releases that happened since the last status.
    fn releases(&mut self, now: &ChannelStatus) {
        for (subscriber, (before, after)) in self.last.subscribers.iter().zip(&now.subscribers).enumerate() {
            for (publisher, (was, is)) in before.cursors.iter().zip(&after.cursors).enumerate() {
                if was != is {
                    self.events.push(json!({
                        "type": "release", "subscriber": subscriber, "publisher": publisher, "cursor": is,
                    }));
                }
            }
        }
    }

    /// Offers one message from `publisher` and records the attempt and its outcome.
    fn offer(&mut self, publisher: &mut Pub) -> Result<bool, Error> {
        let slot = publisher.slot();
        let len = self.next_len();
        self.push(json!({ "type": "offer", "publisher": slot, "len": len }));
        let payload = vec![slot as u8; len];
        let accepted = match publisher.offer(&payload) {
            Ok(()) => true,
            Err(PublishError::Backpressured) => false,
            Err(e) => return Err(e.into()),
        };
        let now = self.status()?;
        let (before, after) = (&self.last.publishers[slot], &now.publishers[slot]);
        if accepted {
            self.push(json!({
                "type": "commit",
                "publisher": slot,
                "position": before.position,
                "frame": after.position - before.position,
                "sequence": self.last.sequence,
                "published": publisher.published(),
            }));
        } else {
            // Put the length back: the same message is offered again next time.
            self.next_len -= 1;
            self.push(json!({
                "type": "refused",
                "publisher": slot,
                "len": len,
                "position": after.position,
                "backpressured": publisher.backpressured(),
            }));
        }
        self.releases(&now);
        self.last = now;
        Ok(accepted)
    }

    /// Receives one message if one can be delivered now; waits up to `patience` for one
    /// (the subscriber only decides that a number is lost after polling a while).
    fn receive(&mut self, subscriber: &mut Sub, patience: Duration) -> Result<bool, Error> {
        let gaps_before = subscriber.gaps().clone();
        let deadline = Instant::now() + patience;
        let message = loop {
            if let Some(message) = subscriber.try_recv()? {
                break Some((
                    message.publisher_slot(),
                    message.sequence(),
                    message.gap_before(),
                    message.len(),
                ));
            }
            if Instant::now() >= deadline {
                break None;
            }
            std::hint::spin_loop();
        };
        let gaps = subscriber.gaps().clone();
        if gaps != gaps_before {
            let last = gaps.last.clone().expect("a gap was found");
            self.push(json!({
                "type": "gap",
                "subscriber": 0,
                "first": last.start,
                "end": last.end,
                "events": gaps.events,
                "missing": gaps.missing,
            }));
        }
        if let Some((publisher, sequence, gap_before, len)) = message {
            self.push(json!({
                "type": "receive",
                "subscriber": 0,
                "publisher": publisher,
                "sequence": sequence,
                "gap_before": gap_before,
                "len": len,
                "received": subscriber.received(),
            }));
        }
        let now = self.status()?;
        self.releases(&now);
        self.last = now;
        Ok(message.is_some())
    }
}

/// Records what a small real channel does, as the trace the architecture animation
/// (doc/animation/index.html) replays: trace.json, and trace.js for pages opened from disk.
#[derive(clap::Parser)]
struct Args {
    /// Where to write trace.json and trace.js.
    #[arg(default_value = "doc/animation")]
    out_dir: std::path::PathBuf,
    /// The child's part: take a publisher slot and a sequence number on CHANNEL, then die.
    #[arg(long = DIE_ARG, value_name = "CHANNEL", hide = true)]
    take_a_number_and_die: Option<String>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args {
        out_dir,
        take_a_number_and_die,
    } = clap::Parser::parse();
    if let Some(name) = take_a_number_and_die {
        // The child: takes a publisher slot and a sequence number, then dies with SIGKILL
        // before committing (the library's fault-injection hook for crash tests).
        let channel = RawOrderedMpsc::connect(&name)?;
        channel.publisher()?.__take_sequence_then_die();
    }

    let name = format!("record-trace-{}", std::process::id());
    let config = Config::new(&name)
        .capacity(CAPACITY)
        .publication_window(WINDOW)
        .publishers(3)
        .max_message_size(1024);
    let channel = RawOrderedMpsc::create(&config)?;
    let mut a = channel.publisher()?;
    let mut b = channel.publisher()?;
    let mut subscriber = channel.subscriber()?;
    let last = channel_status(&name)?;
    let mut recorder = Recorder {
        name: name.clone(),
        events: Vec::new(),
        last,
        next_len: 0,
    };
    let quick = Duration::ZERO;

    // 1. Two publishers, a subscriber that takes two messages for every three offered:
    //    the merge by sequence, releases every quarter window, and backpressure.
    for _ in 0..14 {
        recorder.offer(&mut a)?;
        recorder.offer(&mut b)?;
        recorder.offer(&mut a)?;
        recorder.receive(&mut subscriber, quick)?;
        recorder.receive(&mut subscriber, quick)?;
    }

    // 2. A publisher in another process takes the next number and is killed holding it.
    let status = std::process::Command::new(std::env::current_exe()?)
        .args([&format!("--{DIE_ARG}"), &name])
        .status()?;
    assert!(!status.success(), "the child must die holding its number");
    let now = recorder.status()?;
    let dead = &now.publishers[DOOMED];
    assert!(
        matches!(dead.holder, SlotHolder::Dead { .. }),
        "slot {DOOMED} is the dead child's"
    );
    recorder.push(json!({
        "type": "crash",
        "publisher": DOOMED,
        "pending": dead.pending,
        "position": dead.position,
        "sequence": now.sequence,
    }));
    recorder.last = now;
    for _ in 0..3 {
        recorder.offer(&mut a)?;
        recorder.offer(&mut b)?;
    }
    // The subscriber delivers up to the lost number, then reports it missing.
    while subscriber.gaps().events == 0 {
        let delivered = recorder.receive(&mut subscriber, Duration::from_secs(10))?;
        assert!(delivered, "the subscriber never reported the lost number");
    }

    // 3. A successor takes over the dead slot and continues after its last committed frame.
    let mut successor = channel.publisher()?;
    assert_eq!(successor.slot(), DOOMED);
    let now = recorder.status()?;
    recorder.push(json!({
        "type": "takeover",
        "publisher": DOOMED,
        "position": now.publishers[DOOMED].position,
    }));
    recorder.last = now;
    for _ in 0..4 {
        recorder.offer(&mut successor)?;
        recorder.offer(&mut a)?;
        recorder.receive(&mut subscriber, quick)?;
    }

    // 4. Drain: the subscriber takes everything left and releases it all.
    while recorder.receive(&mut subscriber, quick)? {}

    let publishers = [&a, &b, &successor];
    let end = recorder.status()?;
    let published: u64 = publishers.iter().map(|p| p.published()).sum();
    assert_eq!(
        subscriber.received(),
        published,
        "every committed message was delivered"
    );
    assert_eq!(
        subscriber.gaps().missing,
        1,
        "exactly the dead publisher's number is missing"
    );
    let trace = json!({
        "format": "salias-trace/1",
        "recorded_by": "examples/record_trace.rs",
        "scenario": "RawOrderedMpsc, 4 KiB rings, 2 KiB publication window: two publishers outpace the subscriber; a third is killed holding a sequence number; its successor takes over the slot",
        "channel": {
            "kind": end.kind,
            "capacity": end.capacity,
            "publication_window": WINDOW,
            "release_every": WINDOW / 4,
            "publishers": end.publishers.len(),
            "subscribers": end.subscribers.len(),
        },
        "final": {
            "sequence": end.sequence,
            "publishers": publishers.iter().zip(&end.publishers).map(|(p, status)| json!({
                "published": p.published(),
                "backpressured": p.backpressured(),
                "position": status.position,
            })).collect::<Vec<_>>(),
            "subscribers": [{
                "received": subscriber.received(),
                "cursors": end.subscribers[0].cursors,
                "gaps": { "events": subscriber.gaps().events, "missing": subscriber.gaps().missing },
            }],
        },
    });
    let events: Vec<String> = recorder.events.iter().map(Value::to_string).collect();
    let mut document = serde_json::to_string_pretty(&trace)?;
    // One event per line: the trace stays readable and diffs well.
    document.truncate(document.len() - 2);
    document.push_str(&format!(
        ",\n  \"events\": [\n    {}\n  ]\n}}\n",
        events.join(",\n    ")
    ));
    serde_json::from_str::<Value>(&document)?;
    std::fs::create_dir_all(&out_dir)?;
    std::fs::write(out_dir.join("trace.json"), &document)?;
    std::fs::write(
        out_dir.join("trace.js"),
        format!(
            "// Generated by `cargo run --example record_trace`; the same document as trace.json.\nwindow.SALIAS_TRACE = {};\n",
            document.trim_end()
        ),
    )?;
    let refused: u64 = publishers.iter().map(|p| p.backpressured()).sum();
    println!(
        "recorded {} events: {published} messages published and received, {refused} offers refused, {} number lost; wrote {}",
        recorder.events.len(),
        subscriber.gaps().missing,
        out_dir.join("trace.json").display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::Args;

    /// `--help` is help, never a directory to write into (it once made one named `--help`).
    #[test]
    fn help_is_no_output_directory() {
        let help = Args::try_parse_from(["record_trace", "--help"])
            .err()
            .expect("--help is not run");
        assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
        assert!(
            help.to_string().contains("Where to write trace.json and trace.js"),
            "{help}"
        );
        let args = Args::try_parse_from(["record_trace", "target/trace"]).expect("a directory");
        assert_eq!(args.out_dir, std::path::Path::new("target/trace"));
        assert!(
            Args::try_parse_from(["record_trace", "a", "b"]).is_err(),
            "one directory at most"
        );
    }
}
