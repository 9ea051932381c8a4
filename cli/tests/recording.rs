//! `salias echo`, `hz`, `latest`, `record` and `replay` against live channels that other processes
//! publish to: what they print, what a recording holds (read back by the `mcap` crate and,
//! where given, by Python's `mcap` package), a replay's messages byte for byte, Ctrl-C, and
//! every bad input as a clear error.

#[path = "../../tests/support/mod.rs"]
mod support;
mod tool;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use salias::{Config, FifoFanout, OrderedFanout, PublishError, RawFifoFanout, RawFifoMpsc, SaliasMessage};
use serde_json::Value;
use support::{KillOnDrop, Sample, arg, role, root_or_skip, skipped, spawn, unique_name, wait_all};
use tool::exit_of;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// The tool as a child process, its output piped.
fn start(args: &[&str]) -> KillOnDrop {
    KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_salias"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the salias tool"),
    )
}

/// Everything a finished child wrote to stdout and stderr.
fn outputs(child: &mut Child) -> (String, String) {
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (out, err)
}

/// Waits until `count` processes other than this one hold subscriber slots of `name`.
fn wait_for_subscribers(name: &str, count: usize) {
    let me = std::process::id();
    wait_for_holders(name, "subscribers", count, |status| {
        status
            .subscribers
            .iter()
            .filter(|s| matches!(s.holder, salias::status::SlotHolder::Alive { pid } if pid != me))
            .count()
    });
}

/// Waits until `count` publishers have taken a slot: one that finished before the other came
/// would free its slot for it, and a recording keyed by slot would then hold both streams under
/// one slot. A slot that has published was taken, even if its publisher is done and gone.
fn wait_for_publishers(name: &str, count: usize) {
    wait_for_holders(name, "publishers", count, |status| {
        status
            .publishers
            .iter()
            .filter(|p| p.published > 0 || matches!(p.holder, salias::status::SlotHolder::Alive { .. }))
            .count()
    });
}

fn wait_for_holders(name: &str, role: &str, count: usize, held: impl Fn(&salias::status::ChannelStatus) -> usize) {
    let limit = Instant::now() + Duration::from_secs(30);
    loop {
        if salias::status::channel_status(name).is_ok_and(|status| held(&status) >= count) {
            return;
        }
        assert!(Instant::now() < limit, "fewer than {count} {role} of {name} came");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn interrupt(child: &Child) {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill sends a signal to a process this test started; no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
}

fn signal(child: &Child, signal: i32) {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: as in `interrupt`.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// A raw message that says who sent it and its place in that publisher's stream; lengths
/// vary with the place.
fn raw_message(publisher: u64, seq: u64) -> Vec<u8> {
    let mut bytes = Vec::from(publisher.to_le_bytes());
    bytes.extend(seq.to_le_bytes());
    bytes.extend(std::iter::repeat_n((seq % 251) as u8, (seq % 40) as usize));
    bytes
}

fn temp_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("{}.mcap", unique_name(tag)))
}

/// A file removed when the test ends, however it ends.
struct Removed(PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// One message of an MCAP file, with its channel's topic, metadata and schema name.
struct Logged {
    topic: String,
    metadata: BTreeMap<String, String>,
    schema: Option<String>,
    sequence: u32,
    data: Vec<u8>,
}

/// What an MCAP file holds, read with the `mcap` crate: its messages in file order, its
/// summary's count, and the metadata record `salias`.
struct Recorded {
    messages: Vec<Logged>,
    summary_count: u64,
    metadata: BTreeMap<String, String>,
}

fn read_back(path: &Path) -> Recorded {
    let bytes = std::fs::read(path).unwrap();
    let summary = mcap::Summary::read(&bytes)
        .expect("a readable summary")
        .expect("a finished file has a summary");
    let stats = summary.stats.as_ref().expect("statistics");
    let mut metadata = BTreeMap::new();
    for index in &summary.metadata_indexes {
        let record = mcap::read::metadata(&bytes, index).unwrap();
        if record.name == "salias" {
            metadata = record.metadata;
        }
    }
    let messages = mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(|message| {
            let message = message.expect("a whole message");
            Logged {
                topic: message.channel.topic.clone(),
                metadata: message.channel.metadata.clone(),
                schema: message.channel.schema.as_ref().map(|s| s.name.clone()),
                sequence: message.sequence,
                data: message.data.into_owned(),
            }
        })
        .collect();
    Recorded {
        messages,
        summary_count: stats.message_count,
        metadata,
    }
}

/// Publishes `COUNT` messages as publisher `P` into `NAME` (`KIND`: ordered-sample,
/// fifo-sample, raw-mpsc), waiting for room.
fn publish_role() {
    let name: String = arg("NAME");
    let producer: u64 = arg("P");
    let count: u64 = arg("COUNT");
    fn send(mut offer: impl FnMut() -> Result<(), PublishError>) {
        loop {
            match offer() {
                Ok(()) => return,
                Err(PublishError::Backpressured) => std::thread::sleep(Duration::from_micros(50)),
                Err(e) => panic!("{e}"),
            }
        }
    }
    match arg::<String>("KIND").as_str() {
        "ordered-sample" => {
            let channel = OrderedFanout::<Sample>::connect(&name).unwrap();
            let mut publisher = channel.publisher().unwrap();
            wait_for_publishers(&name, 2);
            for seq in 0..count {
                send(|| publisher.offer(&Sample::new(producer, seq)));
            }
        }
        "fifo-sample" => {
            let channel = FifoFanout::<Sample>::connect(&name).unwrap();
            let mut publisher = channel.publisher().unwrap();
            wait_for_publishers(&name, 2);
            for seq in 0..count {
                send(|| publisher.offer(&Sample::new(producer, seq)));
            }
        }
        "raw-mpsc" => {
            let channel = RawFifoMpsc::connect(&name).unwrap();
            let mut publisher = channel.publisher().unwrap();
            wait_for_publishers(&name, 2);
            for seq in 0..count {
                let message = raw_message(producer, seq);
                send(|| publisher.offer(&message));
            }
        }
        other => panic!("unknown kind {other}"),
    }
}

fn publishers(test: &str, name: &str, kind: &str, count: u64) -> Vec<(&'static str, KillOnDrop)> {
    (0..2u64)
        .map(|p| {
            let args = [
                ("NAME", name.to_owned()),
                ("P", p.to_string()),
                ("COUNT", count.to_string()),
                ("KIND", kind.to_owned()),
            ];
            ("publisher", spawn(test, "publish", &args))
        })
        .collect()
}

/// Connects to `name` once the tool made it.
fn connect_when_made<C>(name: &str, connect: impl Fn(&str) -> salias::Result<C>) -> C {
    let limit = Instant::now() + Duration::from_secs(30);
    loop {
        match connect(name) {
            Ok(channel) => return channel,
            Err(salias::Error::NotFound { .. } | salias::Error::Initializing { .. }) => {
                assert!(Instant::now() < limit, "{name} was never made");
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn echo_prints_each_message_as_its_recorded_fields() {
    let name = unique_name("echo-fields");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let mut echo = start(&["echo", &name, "--json", "--count", "5", "--tethered"]);
    wait_for_subscribers(&name, 1);
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..5 {
        publisher.send(&Sample::new(3, seq)).unwrap();
    }
    let status = exit_of(&mut echo.0);
    let (out, err) = outputs(&mut echo.0);
    assert!(status.success(), "{err}");
    let lines: Vec<Value> = out.lines().map(json).collect();
    assert_eq!(lines.len(), 5, "{out}");
    for (seq, line) in lines.iter().enumerate() {
        let sample = Sample::new(3, seq as u64);
        assert_eq!(line["slot"], publisher.slot());
        assert_eq!(line["sequence"], Value::Null);
        assert_eq!(line["len"], 64);
        assert_eq!(line["fields"]["producer"], 3);
        assert_eq!(line["fields"]["seq"], seq);
        assert_eq!(line["fields"]["words"], serde_json::json!(sample.words), "{line}");
    }

    // The same as text: fields by name.
    let mut echo = start(&["echo", &name, "--count", "1", "--tethered"]);
    wait_for_subscribers(&name, 1);
    publisher.send(&Sample::new(3, 9)).unwrap();
    assert!(exit_of(&mut echo.0).success());
    let (out, _) = outputs(&mut echo.0);
    assert!(
        out.starts_with(&format!("slot {} len 64: producer=3 seq=9 words=[", publisher.slot())),
        "{out}"
    );
}

#[test]
fn echo_takes_an_mpsc_channels_subscriber_and_prints_raw_messages_as_hex() {
    let name = unique_name("echo-raw");
    let channel = RawFifoMpsc::create(&Config::new(&name)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    publisher.offer(b"\x01\x02hello").unwrap();
    let mut echo = start(&["echo", &name, "--json", "--count", "1"]);
    let status = exit_of(&mut echo.0);
    let (out, err) = outputs(&mut echo.0);
    assert!(status.success(), "{err}");
    assert_eq!(json(out.trim())["hex"], "010268656c6c6f");
    assert!(err.contains("reading takes its one subscriber slot"), "{err}");

    // A lossy reader of an Mpsc channel does not exist: refused, with what to do, and the
    // file it made for the recording removed again.
    let path = temp_path("record-lossy-mpsc");
    let mut record = start(&["record", &name, "-o", path.to_str().unwrap(), "--lossy"]);
    assert_eq!(exit_of(&mut record.0).code(), Some(1));
    let (_, err) = outputs(&mut record.0);
    assert!(
        err.contains("an Mpsc channel has one subscriber and no lossy readers"),
        "{err}"
    );
    assert!(!path.exists());
    // A file that was there already is left there (it could be a device, or someone's).
    std::fs::write(&path, b"there before").unwrap();
    let _removed = Removed(path.clone());
    let mut record = start(&["record", &name, "-o", path.to_str().unwrap(), "--lossy"]);
    assert_eq!(exit_of(&mut record.0).code(), Some(1));
    assert!(path.exists());

    // Its one subscriber slot held by another: the library's error.
    let _subscriber = channel.subscriber().unwrap();
    let mut echo = start(&["echo", &name]);
    assert_eq!(exit_of(&mut echo.0).code(), Some(1));
    let (_, err) = outputs(&mut echo.0);
    let expected = channel.subscriber().unwrap_err().to_string();
    assert!(err.contains(&expected), "{err}\nexpected: {expected}");
}

#[test]
fn echo_reports_exactly_what_a_lossy_read_missed() {
    const SENT: u64 = 5_000;
    let name = unique_name("echo-lossy");
    // 64 KiB ring: the messages sent while echo is stopped lap it several times.
    let channel = RawFifoFanout::create(&Config::new(&name).capacity(1 << 16)).unwrap();
    let mut echo = start(&["echo", &name, "--json"]);
    wait_for_subscribers(&name, 1);
    signal(&echo.0, libc::SIGSTOP);
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..SENT {
        publisher.offer(&raw_message(0, seq)).unwrap();
    }
    signal(&echo.0, libc::SIGCONT);
    // The last one, after it runs again: it must arrive.
    publisher.offer(&raw_message(0, SENT)).unwrap();
    let mut lines = BufReader::new(echo.0.stdout.take().unwrap());
    let (mut received, mut missed, mut losses, mut pending) = (0u64, 0u64, 0, 0u64);
    let mut next = 0;
    loop {
        let mut line = String::new();
        assert!(lines.read_line(&mut line).unwrap() > 0, "echo ended early");
        let line = json(&line);
        if let Some(count) = line.get("missed") {
            assert_eq!(line["slot"], publisher.slot());
            pending += count.as_u64().unwrap();
            losses += 1;
            continue;
        }
        let hex = line["hex"].as_str().unwrap();
        let seq = u64::from_str_radix(&hex[16..32], 16).unwrap().swap_bytes();
        assert_eq!(hex, hex_of(&raw_message(0, seq)));
        // In order, and every message skipped is a reported loss, reported right before.
        assert_eq!(seq, next + pending, "{line}");
        missed += std::mem::take(&mut pending);
        received += 1;
        next = seq + 1;
        if seq == SENT {
            break;
        }
    }
    interrupt(&echo.0);
    assert!(exit_of(&mut echo.0).success());
    assert!(losses > 0, "the reader was never overrun");
    assert_eq!(received + missed, SENT + 1, "{received} received, {missed} missed");
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn hz_counts_every_message_of_every_publisher() {
    let name = unique_name("hz");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).publishers(2)).unwrap();
    let mut hz = start(&[
        "hz",
        &name,
        "--json",
        "--interval",
        "0.4",
        "--iterations",
        "5",
        "--tethered",
    ]);
    wait_for_subscribers(&name, 1);
    let (mut a, mut b) = (channel.publisher().unwrap(), channel.publisher().unwrap());
    for seq in 0..3_000 {
        a.send(&Sample::new(0, seq)).unwrap();
        if seq < 1_000 {
            b.send(&Sample::new(1, seq)).unwrap();
        }
    }
    let status = exit_of(&mut hz.0);
    let (out, err) = outputs(&mut hz.0);
    assert!(status.success(), "{err}");
    let windows: Vec<Value> = out.lines().map(json).collect();
    assert_eq!(windows.len(), 5, "{out}");
    let mut per_slot = BTreeMap::new();
    let mut total = 0;
    for window in &windows {
        let messages = window["messages"].as_u64().unwrap();
        let seconds = window["seconds"].as_f64().unwrap();
        assert!(seconds > 0.0);
        assert!((window["rate"].as_f64().unwrap() * seconds - messages as f64).abs() < 1e-6 * (messages as f64 + 1.0));
        assert_eq!(window["bytes"].as_u64().unwrap(), messages * 64);
        assert_eq!(window["missed"], 0);
        total += messages;
        for slot in window["publishers"].as_array().unwrap() {
            *per_slot.entry(slot["slot"].as_u64().unwrap()).or_insert(0) += slot["messages"].as_u64().unwrap();
        }
        if let Some(spread) = window["interarrival_ns"].as_object() {
            let (min, max) = (spread["min"].as_f64().unwrap(), spread["max"].as_f64().unwrap());
            let mean = spread["mean"].as_f64().unwrap();
            assert!(min <= mean && mean <= max, "{window}");
        }
    }
    assert_eq!(total, 4_000, "{out}");
    assert_eq!(per_slot[&(a.slot() as u64)], 3_000);
    assert_eq!(per_slot[&(b.slot() as u64)], 1_000);
}

#[test]
fn a_recording_replays_the_same_bytes_in_the_same_order() {
    const TEST: &str = "a_recording_replays_the_same_bytes_in_the_same_order";
    const EACH: u64 = 2_000;
    if role().is_some() {
        return publish_role();
    }
    let name = unique_name("record-ordered");
    let path = temp_path("record-ordered");
    let _removed = Removed(path.clone());
    let _channel = OrderedFanout::<Sample>::create(&Config::new(&name).publishers(2)).unwrap();
    let count = (2 * EACH).to_string();
    let mut record = start(&[
        "record",
        &name,
        "-o",
        path.to_str().unwrap(),
        "--count",
        &count,
        "--crc",
    ]);
    wait_for_subscribers(&name, 1);
    wait_all(publishers(TEST, &name, "ordered-sample", EACH), Duration::from_secs(60));
    let status = exit_of(&mut record.0);
    let (_, err) = outputs(&mut record.0);
    assert!(status.success(), "{err}");
    assert!(
        err.contains(&format!("recorded {} messages of {name:?}", 2 * EACH)),
        "{err}"
    );

    // The file, read back: every message, in sequence order, with its kind and type.
    let read = read_back(&path);
    assert_eq!(read.summary_count, 2 * EACH);
    assert_eq!(read.messages.len() as u64, 2 * EACH);
    let mut next = [0u64; 2];
    for (
        i,
        Logged {
            topic,
            metadata,
            schema,
            sequence,
            data,
        },
    ) in read.messages.iter().enumerate()
    {
        assert_eq!(topic, &name);
        assert_eq!(metadata["salias.kind"], "OrderedFanout");
        assert_eq!(metadata["salias.reading"], "tethered");
        assert_eq!(schema.as_deref(), Some("Sample"));
        assert_eq!(*sequence as usize, i);
        let sample = Sample::read_from_bytes(data).unwrap();
        let producer = sample.producer as usize;
        assert_eq!(sample, Sample::new(producer as u64, next[producer]));
        next[producer] += 1;
    }
    assert_eq!(read.metadata["kind"], "OrderedFanout");
    assert_eq!(read.metadata["type"], "Sample");
    assert_eq!(read.metadata["messages"], (2 * EACH).to_string());
    assert_eq!(read.metadata["missed"], "0");
    independent_reader(&path, true, 2 * EACH, "Sample", "OrderedFanout");

    // Replayed into a channel it makes: the same bytes, in the same order, numbered anew.
    let target = unique_name("replay-ordered");
    let mut replay = start(&["replay", path.to_str().unwrap(), &target, "--fast"]);
    let channel = connect_when_made(&target, OrderedFanout::<Sample>::connect);
    let mut subscriber = channel.subscriber().unwrap();
    for (i, Logged { data, .. }) in read.messages.iter().enumerate() {
        let message = subscriber.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(message.sequence(), i as u64);
        assert_eq!(message.as_bytes(), &data[..]);
    }
    let status = exit_of(&mut replay.0);
    let (_, err) = outputs(&mut replay.0);
    assert!(status.success(), "{err}");
    assert!(
        err.contains(&format!("replayed {} of {} messages", 2 * EACH, 2 * EACH)),
        "{err}"
    );
}

#[test]
fn a_raw_recording_replays_each_publishers_stream() {
    const TEST: &str = "a_raw_recording_replays_each_publishers_stream";
    const EACH: u64 = 1_500;
    if role().is_some() {
        return publish_role();
    }
    let name = unique_name("record-raw");
    let path = temp_path("record-raw");
    let _removed = Removed(path.clone());
    let _channel = RawFifoMpsc::create(&Config::new(&name).publishers(2).max_message_size(256)).unwrap();
    let count = (2 * EACH).to_string();
    let mut record = start(&["record", &name, "-o", path.to_str().unwrap(), "--count", &count]);
    wait_for_subscribers(&name, 1);
    wait_all(publishers(TEST, &name, "raw-mpsc", EACH), Duration::from_secs(60));
    assert!(exit_of(&mut record.0).success());
    independent_reader(&path, false, 2 * EACH, "", "FifoMpsc");
    let read = read_back(&path);
    assert_eq!(read.messages.len() as u64, 2 * EACH);
    // Per recorded slot: one publisher's whole stream, its MCAP sequence its index in it.
    let mut streams: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    for Logged {
        metadata,
        schema,
        sequence,
        data,
        ..
    } in &read.messages
    {
        assert_eq!(schema, &None);
        let stream = streams.entry(metadata["salias.publisher_slot"].clone()).or_default();
        assert_eq!(*sequence as usize, stream.len());
        stream.push(data.clone());
    }
    assert_eq!(streams.len(), 2);
    for stream in streams.values() {
        let producer = u64::from_le_bytes(stream[0][..8].try_into().unwrap());
        let expected: Vec<_> = (0..EACH).map(|seq| raw_message(producer, seq)).collect();
        assert_eq!(stream, &expected);
    }

    // Replayed: a publisher per recorded slot, so each stream arrives whole and in order.
    let target = unique_name("replay-raw");
    let mut replay = start(&["replay", path.to_str().unwrap(), &target, "--rate", "1000"]);
    let channel = connect_when_made(&target, RawFifoMpsc::connect);
    let mut subscriber = channel.subscriber().unwrap();
    let mut replayed: BTreeMap<usize, Vec<Vec<u8>>> = BTreeMap::new();
    for _ in 0..2 * EACH {
        let message = subscriber.recv_timeout(Duration::from_secs(30)).unwrap();
        replayed
            .entry(message.publisher_slot())
            .or_default()
            .push(message.to_vec());
    }
    assert!(exit_of(&mut replay.0).success());
    let mut replayed: Vec<_> = replayed.into_values().collect();
    let mut recorded: Vec<_> = streams.into_values().collect();
    replayed.sort();
    recorded.sort();
    assert_eq!(replayed, recorded);
    assert_eq!(channel.max_message_size(), 256);
}

#[test]
fn ctrl_c_leaves_a_whole_recording() {
    let name = unique_name("record-interrupted");
    let path = temp_path("record-interrupted");
    let _removed = Removed(path.clone());
    let channel = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let mut record = start(&["record", &name, "-o", path.to_str().unwrap()]);
    wait_for_subscribers(&name, 1);
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..100 {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    // Everything received (a tethered reader releases what it read) before Ctrl-C.
    let limit = Instant::now() + Duration::from_secs(30);
    while salias::status::channel_status(&name)
        .unwrap()
        .subscribers
        .iter()
        .any(|s| s.backlog_bytes > 0)
    {
        assert!(Instant::now() < limit, "the recorder did not read");
        std::thread::sleep(Duration::from_millis(5));
    }
    interrupt(&record.0);
    let status = exit_of(&mut record.0);
    let (_, err) = outputs(&mut record.0);
    assert!(status.success(), "{err}");
    assert!(
        err.contains("recorded 100 messages") && err.contains("(Ctrl-C)"),
        "{err}"
    );
    let read = read_back(&path);
    assert_eq!(read.summary_count, 100);
    assert_eq!(read.metadata["messages"], "100");
}

/// A short recording of a `FifoFanout<Sample>` channel, made with the tool.
fn recorded(tag: &str) -> (Removed, PathBuf) {
    let name = unique_name(tag);
    let path = temp_path(tag);
    let channel = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let mut record = start(&["record", &name, "-o", path.to_str().unwrap(), "--count", "10"]);
    wait_for_subscribers(&name, 1);
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..10 {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    assert!(exit_of(&mut record.0).success());
    (Removed(path.clone()), path)
}

/// Runs the tool to its end: exit code and stderr.
fn failing(args: &[&str]) -> (Option<i32>, String) {
    let mut child = start(args);
    let status = exit_of(&mut child.0);
    let (_, err) = outputs(&mut child.0);
    (status.code(), err)
}

#[test]
fn replay_refuses_a_file_that_is_not_a_whole_recording_and_publishes_nothing() {
    let (_removed, path) = recorded("replay-truncated");
    let whole = std::fs::read(&path).unwrap();
    let broken = temp_path("broken");
    let _broken = Removed(broken.clone());
    let target = unique_name("replay-broken");
    for (bytes, expected) in [
        (&whole[..whole.len() / 2], "is not a whole MCAP file"),
        (&whole[..40], "is not a whole MCAP file"),
        (&b"not an mcap file at all"[..], "is not a whole MCAP file"),
    ] {
        std::fs::write(&broken, bytes).unwrap();
        let (code, err) = failing(&["replay", broken.to_str().unwrap(), &target, "--fast"]);
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains(expected), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(matches!(
            salias::status::channel_status(&target),
            Err(salias::Error::NotFound { .. })
        ));
    }
    // A whole MCAP file of another tool's messages.
    {
        let file = std::fs::File::create(&broken).unwrap();
        let mut writer = mcap::Writer::new(std::io::BufWriter::new(file)).unwrap();
        let channel = writer.add_channel(0, "chatter", "json", &BTreeMap::new()).unwrap();
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: 0,
            log_time: 1,
            publish_time: 1,
        };
        writer.write_to_known_channel(&header, b"{}").unwrap();
        writer.finish().unwrap();
    }
    let (code, err) = failing(&["replay", broken.to_str().unwrap(), &target]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is not a salias recording"), "{err}");
    let (code, err) = failing(&["replay", "/nonexistent/recording.mcap", &target]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot open /nonexistent/recording.mcap"), "{err}");
}

/// A message type that is not `Sample`, of the same size.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Other {
    words: [u64; 8],
}

#[test]
fn replay_refuses_a_channel_of_another_type_or_kind() {
    let (_removed, path) = recorded("replay-mismatch");
    let path = path.to_str().unwrap();

    let target = unique_name("replay-other-type");
    let _other = FifoFanout::<Other>::create(&Config::new(&target)).unwrap();
    let (code, err) = failing(&["replay", path, &target, "--fast"]);
    assert_eq!(code, Some(1), "{err}");
    let expected = FifoFanout::<Sample>::connect(&target).unwrap_err().to_string();
    assert!(err.contains(&expected), "{err}\nexpected: {expected}");

    let target = unique_name("replay-other-kind");
    let _ordered = OrderedFanout::<Sample>::create(&Config::new(&target)).unwrap();
    let (code, err) = failing(&["replay", path, &target, "--fast"]);
    assert_eq!(code, Some(1), "{err}");
    let expected = FifoFanout::<Sample>::connect(&target).unwrap_err().to_string();
    assert!(err.contains(&expected), "{err}\nexpected: {expected}");

    let target = unique_name("replay-raw-target");
    let _raw = RawFifoFanout::create(&Config::new(&target)).unwrap();
    let (code, err) = failing(&["replay", path, &target, "--fast"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("Sample"), "{err}");

    // And the right one takes it.
    let target = unique_name("replay-right");
    let right = FifoFanout::<Sample>::create(&Config::new(&target)).unwrap();
    let mut subscriber = right.subscriber().unwrap();
    let (code, err) = failing(&["replay", path, &target, "--fast"]);
    assert_eq!(code, Some(0), "{err}");
    for seq in 0..10 {
        assert_eq!(*subscriber.try_recv().unwrap().unwrap(), Sample::new(0, seq));
    }
}

#[test]
fn unknown_channels_and_unwritable_paths_are_clear_errors() {
    let missing = unique_name("no-such-channel");
    let unwritten = temp_path("never-written");
    for args in [
        vec!["echo", &missing],
        vec!["hz", &missing],
        vec!["record", &missing, "-o", unwritten.to_str().unwrap()],
    ] {
        let (code, err) = failing(&args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(err.contains("no channel of that name exists"), "{err}");
    }
    // No file is made for a channel that is not there.
    assert!(!unwritten.exists());
    let name = unique_name("record-unwritable");
    let _channel = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let (code, err) = failing(&["record", &name, "-o", "/nonexistent/dir/out.mcap"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot create /nonexistent/dir/out.mcap"), "{err}");
    // It never subscribed.
    let status = salias::status::channel_status(&name).unwrap();
    assert!(
        status
            .subscribers
            .iter()
            .all(|s| s.holder == salias::status::SlotHolder::Free)
    );
    for args in [
        &["echo", "x", "--count", "0"][..],
        &["replay", "f.mcap", "x", "--rate", "0"],
        &["replay", "f.mcap", "x", "--rate", "2", "--fast"],
        &["record", "x"],
    ] {
        let (code, err) = failing(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
    }
}

#[test]
fn a_full_disk_ends_a_recording_with_a_clear_error() {
    const TEST: &str = "a_full_disk_ends_a_recording_with_a_clear_error";
    if !root_or_skip(TEST, "a small tmpfs in a mount namespace") {
        return;
    }
    let name = unique_name("record-full");
    let dir = std::env::temp_dir().join(unique_name("full-disk"));
    std::fs::create_dir_all(&dir).unwrap();
    let channel = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let mut record = KillOnDrop(
        Command::new("unshare")
            .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
            .arg(format!(
                "mount -t tmpfs -o size=256k salias-test {} && exec \"$0\" record {name} -o {}/out.mcap",
                dir.display(),
                dir.display()
            ))
            .arg(env!("CARGO_BIN_EXE_salias"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start unshare"),
    );
    wait_for_subscribers(&name, 1);
    let mut publisher = channel.publisher().unwrap();
    // Far more than 256 KiB; once the recorder stops, the slot it held no longer holds
    // the publisher back.
    let mut seq = 0;
    while record.0.try_wait().unwrap().is_none() && seq < 1_000_000 {
        match publisher.offer(&Sample::new(0, seq)) {
            Ok(()) => seq += 1,
            Err(PublishError::Backpressured) => std::thread::sleep(Duration::from_micros(20)),
            Err(e) => panic!("{e}"),
        }
    }
    let status = exit_of(&mut record.0);
    let (_, err) = outputs(&mut record.0);
    let _ = std::fs::remove_dir(&dir);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(
        err.contains("recorded ") && err.contains("the file may not be readable"),
        "{err}"
    );
}

/// Reads the file with Python's `mcap` package (another implementation of the format),
/// where `SALIAS_PYTHON` names a Python that has it (CI installs it).
fn independent_reader(path: &Path, crc: bool, messages: u64, schema: &str, kind: &str) {
    const TEST: &str = "a_recording_replays_the_same_bytes_in_the_same_order (Python mcap reader)";
    let Some(python) = std::env::var_os("SALIAS_PYTHON") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI sets SALIAS_PYTHON to a Python with the mcap package"
        );
        skipped(TEST, "SALIAS_PYTHON is not set to a Python with the mcap package");
        return;
    };
    let script = r#"
import json, sys
from mcap.reader import make_reader
from mcap.records import DataEnd
from mcap.stream_reader import StreamReader
# Every byte of the data section and of each chunk against the file's CRCs (a mismatch
# raises); recorded with --crc, they must be there (0 is "not computed").
with open(sys.argv[1], "rb") as f:
    ends = [r for r in StreamReader(f, validate_crcs=True).records if isinstance(r, DataEnd)]
    assert len(ends) == 1 and (ends[0].data_section_crc != 0) == (sys.argv[2] == "crc"), ends
with open(sys.argv[1], "rb") as f:
    reader = make_reader(f)
    summary = reader.get_summary()
    count, schemas, kinds = 0, set(), set()
    for schema, channel, message in reader.iter_messages():
        count += 1
        schemas.add((schema.name, schema.encoding) if schema else None)
        kinds.add(channel.metadata["salias.kind"])
    metadata = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
    print(json.dumps({"count": count, "stats": summary.statistics.message_count,
                      "schemas": sorted(list(s) if s else [] for s in schemas), "kinds": sorted(kinds),
                      "metadata": metadata["salias"]}))
"#;
    let output = Command::new(python)
        .args(["-c", script])
        .arg(path)
        .arg(if crc { "crc" } else { "no-crc" })
        .output()
        .expect("run Python");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let read = json(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(read["count"], messages);
    assert_eq!(read["stats"], messages);
    // A raw channel's messages have no schema.
    let schemas = match schema {
        "" => serde_json::json!([[]]),
        schema => serde_json::json!([[schema, "salias.type"]]),
    };
    assert_eq!(read["schemas"], schemas);
    assert_eq!(read["kinds"], serde_json::json!([kind]));
    assert_eq!(read["metadata"]["messages"], messages.to_string());
}

/// A recording's metadata, and the `seq` of each `Sample` it recorded, in file order.
fn recorded_seqs(path: &Path) -> (Recorded, Vec<u64>) {
    let read = read_back(path);
    let seqs = read
        .messages
        .iter()
        .filter(|logged| !logged.topic.ends_with("salias.losses"))
        .map(|logged| u64::from_ne_bytes(logged.data[8..16].try_into().unwrap()))
        .collect();
    (read, seqs)
}

#[test]
fn echo_from_history_prints_what_the_rings_hold_first() {
    let name = unique_name("echo-history");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..10 {
        publisher.offer(&Sample::new(0, seq)).unwrap();
    }
    let seqs = |out: &str| -> Vec<u64> {
        out.lines()
            .map(|line| json(line)["fields"]["seq"].as_u64().unwrap())
            .collect()
    };
    // The last 3 held, then (after it joined) the live stream.
    let mut echo = start(&["echo", &name, "--json", "--from", "last:3", "--count", "5"]);
    wait_for_subscribers(&name, 1);
    for seq in 10..12 {
        publisher.offer(&Sample::new(0, seq)).unwrap();
    }
    assert!(exit_of(&mut echo.0).success());
    assert_eq!(seqs(&outputs(&mut echo.0).0), [7, 8, 9, 10, 11]);
    // Everything held.
    let mut echo = start(&["echo", &name, "--json", "--from", "oldest", "--count", "12"]);
    assert!(exit_of(&mut echo.0).success());
    assert_eq!(seqs(&outputs(&mut echo.0).0), (0..12).collect::<Vec<_>>());

    // Tethered, the same history.
    let mut echo = start(&[
        "echo",
        &name,
        "--json",
        "--from",
        "oldest",
        "--tethered",
        "--count",
        "12",
    ]);
    assert!(exit_of(&mut echo.0).success());
    assert_eq!(seqs(&outputs(&mut echo.0).0), (0..12).collect::<Vec<_>>());
    // A recording from the last 20: all 12 there ever were, and nothing lost (what was
    // never published is not missing).
    let path = temp_path("record-history");
    let _removed = Removed(path.clone());
    let file = path.to_str().unwrap();
    let mut record = start(&["record", &name, "-o", file, "--from", "last:20", "--count", "12"]);
    assert!(exit_of(&mut record.0).success(), "{}", outputs(&mut record.0).1);
    let (read, recorded) = recorded_seqs(&path);
    assert_eq!(recorded, (0..12).collect::<Vec<_>>());
    assert_eq!(read.metadata["missed"], "0");
    // A ring lapped many times holds less than the last 900: the rest is recorded lost.
    let lapped = unique_name("record-history-lapped");
    let channel = FifoFanout::<Sample>::create(&Config::new(&lapped).capacity(16 << 10)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..1_000 {
        publisher.offer(&Sample::new(0, seq)).unwrap();
    }
    let mut record = start(&["record", &lapped, "-o", file, "--from", "last:900", "--seconds", "0.5"]);
    assert!(exit_of(&mut record.0).success(), "{}", outputs(&mut record.0).1);
    let (read, recorded) = recorded_seqs(&path);
    let first = 1_000 - recorded.len() as u64;
    assert!(first > 100, "a 16 KiB ring cannot hold 900 messages");
    assert_eq!(recorded, (first..1_000).collect::<Vec<_>>());
    assert_eq!(read.metadata["missed"], (first - 100).to_string());

    // An Mpsc channel's one subscriber resumes where the last one stopped: no history.
    let mpsc = unique_name("echo-history-mpsc");
    let _channel = salias::FifoMpsc::<Sample>::create(&Config::new(&mpsc)).unwrap();
    let (code, err) = failing(&["echo", &mpsc, "--from", "oldest"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("only a Fanout channel's readers start at history"),
        "{err}"
    );
    for from in ["last:0", "first", "last:x"] {
        let (code, err) = failing(&["echo", &name, "--from", from]);
        assert_eq!(code, Some(2), "{from}: {err}");
    }
}

#[test]
fn latest_prints_each_publishers_last_message_without_subscribing() {
    let name = unique_name("latest");
    let channel = OrderedFanout::<Sample>::create(&Config::new(&name).publishers(3)).unwrap();
    let (code, err) = failing(&["latest", &name]);
    assert_eq!(code, Some(0), "nothing sent is no error: {err}");
    assert!(err.contains("no publisher has sent a message"), "{err}");
    let mut publishers = [channel.publisher().unwrap(), channel.publisher().unwrap()];
    for n in 0..10u64 {
        let p = usize::from(n % 3 == 0);
        publishers[p].offer(&Sample::new(p as u64, n)).unwrap();
    }
    let (out, err) = {
        let mut latest = start(&["latest", &name, "--json"]);
        assert!(exit_of(&mut latest.0).success());
        outputs(&mut latest.0)
    };
    let lines: Vec<Value> = out.lines().map(json).collect();
    assert_eq!(lines.len(), 2, "{out}{err}");
    // Publisher 0 sent 8 last, publisher 1 sent 9; publisher slot 2 none.
    for (line, (slot, seq)) in lines.iter().zip([(0, 8), (1, 9)]) {
        assert_eq!(
            (line["slot"].as_u64(), line["sequence"].as_u64()),
            (Some(slot), Some(seq))
        );
        assert_eq!(line["fields"]["seq"].as_u64(), Some(seq));
        assert_eq!(line["len"], 64);
    }
    // It took no subscriber slot, so a publisher could not have waited for it.
    let status = salias::status::channel_status(&name).unwrap();
    assert!(
        status
            .subscribers
            .iter()
            .all(|s| s.holder == salias::status::SlotHolder::Free)
    );

    let mpsc = unique_name("latest-mpsc");
    let _mpsc = salias::FifoMpsc::<Sample>::create(&Config::new(&mpsc)).unwrap();
    let (code, err) = failing(&["latest", &mpsc]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no latest value to read without subscribing"), "{err}");
}
