//! The cross-process pipeline (`src/bin/pipeline/`), run as real processes: two gateway
//! processes, an engine process and two market-data subscriber processes over salias.
//!
//! Which gateway's request the engine gets first depends on timing, so determinism is
//! defined over the sequence the engine received: the engine records its input in that
//! order, and replaying the recording through a fresh engine in this process must give,
//! byte for byte, the events each subscriber received (timestamps aside, which differ
//! from run to run and which the engine never reads).
//!
//! No wall-clock figure is asserted; the rate is low enough for any machine to keep up,
//! and the pipeline verifies itself whatever the timing.

use std::path::{Path, PathBuf};
use std::process::Command;

use matching_engine::{Engine, EventMsg, OrderMsg, WireHash, gateway_requests, pipeline_engine_config};

const GATEWAYS: u32 = 2;
const RATE: u64 = 100_000;
const DURATION_MS: u64 = 100;
const SEED: u64 = 11;

fn scratch_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("matching-engine-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn pipeline(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(args)
        .output()
        .expect("run the pipeline binary");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "pipeline {args:?} failed: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// A single salias run of the tests' gateways, rate, duration and seed, with `subscribers`
/// market-data subscribers and `extra` arguments; its stdout.
fn salias_run(subscribers: u32, extra: &[&str]) -> String {
    let (gateways, subscribers) = (GATEWAYS.to_string(), subscribers.to_string());
    let (rate, duration, seed) = (RATE.to_string(), DURATION_MS.to_string(), SEED.to_string());
    let mut args = vec![
        "--system",
        "salias",
        "--gateways",
        &gateways,
        "--subscribers",
        &subscribers,
        "--rate",
        &rate,
        "--duration-ms",
        &duration,
        "--warmup-ms",
        "10",
        "--seed",
        &seed,
    ];
    args.extend_from_slice(extra);
    pipeline(&args)
}

fn read_records<T>(path: &Path, decode: impl Fn(&[u8; 64]) -> T) -> Vec<T> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(bytes.len() % 64, 0, "{} holds whole messages", path.display());
    bytes.as_chunks::<64>().0.iter().map(decode).collect()
}

/// The `RESULT` line's value for `name`.
fn result_value(stdout: &str, name: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|line| line.starts_with("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT line in:\n{stdout}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == name).expect("field in RESULT");
    words[at + 1].parse().expect("number")
}

#[test]
fn cross_process_output_replays_byte_for_byte_from_the_recorded_input() {
    let dir = scratch_dir("pipeline-record");
    let stdout = salias_run(2, &["--record", dir.to_str().expect("utf-8 temp dir")]);

    let input = read_records(&dir.join("input.bin"), OrderMsg::from_bytes);
    let per_gateway = (RATE * DURATION_MS / 1000) as usize / GATEWAYS as usize;
    assert_eq!(input.len(), per_gateway * GATEWAYS as usize);

    // Nothing lost or altered on the way in: each gateway's requests arrived complete and
    // in its own order, interleaved with the other gateway's.
    for gateway in 0..GATEWAYS {
        let sent: Vec<OrderMsg> = input
            .iter()
            .filter(|request| request.gateway_id == gateway)
            .map(OrderMsg::untimed)
            .collect();
        assert_eq!(sent, gateway_requests(SEED, gateway, per_gateway), "gateway {gateway}");
        assert!(
            input.iter().all(|request| request.gateway_ts_ns != 0),
            "requests are stamped"
        );
    }

    // Replay the engine's input in one process.
    let mut engine = Engine::new(&pipeline_engine_config()).unwrap();
    let mut replayed: Vec<EventMsg> = Vec::new();
    let mut input_hash = WireHash::default();
    for (index, request) in input.iter().enumerate() {
        input_hash.add(&request.untimed().to_bytes());
        let _ = engine.apply_stamped(&request.untimed(), index as u64, &mut replayed);
    }
    let replayed_bytes: Vec<u8> = replayed.iter().flat_map(|event| event.to_bytes()).collect();
    let mut output_hash = WireHash::default();
    for event in &replayed {
        output_hash.add(&event.to_bytes());
    }
    assert!(
        replayed
            .iter()
            .filter(|event| event.kind == matching_engine::event_kind::TRADE)
            .count()
            > 100,
        "the flow must trade"
    );

    // The engine's own account of its input and output, and what each subscriber got.
    assert_eq!(result_value(&stdout, "input_count"), input.len() as u64);
    assert_eq!(result_value(&stdout, "input_hash"), input_hash.hash);
    assert_eq!(result_value(&stdout, "output_count"), replayed.len() as u64);
    assert_eq!(result_value(&stdout, "output_hash"), output_hash.hash);
    for subscriber in 0..2 {
        let received = std::fs::read(dir.join(format!("events-{subscriber}.bin"))).unwrap();
        assert_eq!(
            received.len(),
            replayed_bytes.len(),
            "subscriber {subscriber}: event count"
        );
        assert!(
            received == replayed_bytes,
            "subscriber {subscriber} received other bytes than the replay produced"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_system_verifies_its_run() {
    // The mutex and lock-free baselines run as threads in the pipeline process, salias as
    // separate processes; each run checks counts and hashes across its roles and the
    // binary fails if any disagree.
    let stdout = pipeline(&[
        "--system",
        "all",
        "--gateways",
        "3",
        "--subscribers",
        "2",
        "--rate",
        "50000",
        "--duration-ms",
        "60",
        "--warmup-ms",
        "10",
    ]);
    for system in ["mutex", "lockfree", "salias"] {
        assert!(
            stdout.contains(&format!("{system}: offered")),
            "{system} did not report:\n{stdout}"
        );
    }
    assert_eq!(stdout.matches("verified:").count(), 3, "{stdout}");
}

/// The order feed recorded with `salias record` beside the live engine (`--record-feed`),
/// then played back with `salias replay` into a fresh engine (`replay --recording`): the
/// replayed engine's input and output hashes are the live engine's. A truncated recording
/// is refused by `salias replay` before anything is published.
#[test]
fn a_recorded_order_feed_replays_to_the_live_engines_hashes() {
    let dir = scratch_dir("pipeline-feed");
    std::fs::create_dir_all(&dir).unwrap();
    let feed = dir.join("feed.mcap");
    let live = salias_run(1, &["--record-feed", feed.to_str().expect("utf-8 temp dir")]);
    let replay = |file: &Path| {
        Command::new(env!("CARGO_BIN_EXE_replay"))
            .arg("--recording")
            .arg(file)
            .output()
            .expect("run the replay binary")
    };
    let replayed = replay(&feed);
    let stdout = String::from_utf8_lossy(&replayed.stdout).into_owned();
    assert!(
        replayed.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    let per_gateway = (RATE * DURATION_MS / 1000) / u64::from(GATEWAYS);
    assert_eq!(result_value(&stdout, "input_count"), per_gateway * u64::from(GATEWAYS));
    for field in ["input_count", "input_hash", "output_count", "output_hash"] {
        assert_eq!(result_value(&stdout, field), result_value(&live, field), "{field}");
    }

    let truncated = dir.join("truncated.mcap");
    let bytes = std::fs::read(&feed).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let refused = replay(&truncated);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("is not a whole MCAP file"), "{stderr}");
    assert!(!String::from_utf8_lossy(&refused.stdout).contains("RESULT"));
    let _ = std::fs::remove_dir_all(&dir);
}
