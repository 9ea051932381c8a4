//! How fast `salias record` keeps up with a feed, by doc/benchmarking.md: the tool's
//! recording rate beside a Rust subscriber that only receives, on the same channel in the
//! same round.
//!
//! Run: `cargo bench -p salias-cli --bench record` (5 rounds), `-- --quick` (3 rounds,
//! fewer messages; not a measurement) or `-- --smoke` (checks the harness).
//!
//! Each run: a `FifoFanout<Msg64>` channel (64-byte messages, 1 MiB ring) made by this
//! process; one reader pinned to core 1, tethered (publishers wait for it, nothing is
//! lost): either the `salias` binary of this build recording to a file in /dev/shm (a
//! tmpfs) or this binary again as a subscriber that drains and checks every message; once
//! it holds its slot, one publisher process pinned to core 0 starts at a barrier and
//! offers the messages as fast as the reader lets it. The rate is messages over the time
//! from the publisher's start to the reader's receipt of the last message, both on
//! CLOCK_REALTIME (the clock the recording's log times are on): for the recorder, the last
//! log time in its file. The recording's finish (summary, indexes, fsync) is timed
//! separately. Every recording is read back: its message count, and the first and last
//! messages' contents. Each round measures the cache-line floor between the two cores
//! first, which shows the machine's speed state.
//!
//! Raw results go to `target/bench-results/record-<unix time>.jsonl`.

#[path = "../../benches/common/msg64.rs"]
mod msg64;

use std::error::Error;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use msg64::Msg64;
use salias::{Config, FifoFanout, PublishError};
use serde::{Deserialize, Serialize};
use support::barrier::Barrier;
use support::jsonl::JsonLines;
use support::records::Header;
use support::role::{Children, KillOnDrop, Role, report_json};
use zerocopy::FromBytes;

const ROLE: Role = Role::new("SALIAS_RECORD_BENCH_ROLE");
const RING: usize = 1 << 20;
const PUBLISHER_CORE: usize = 0;
const READER_CORE: usize = 1;
const LIMIT: Duration = Duration::from_secs(300);

/// What a role is told.
#[derive(Serialize, Deserialize)]
struct Params {
    name: String,
    count: u64,
}

/// What a role reports: the realtime of its start (publisher) or last message (reader).
#[derive(Serialize, Deserialize, Default)]
struct Stamp {
    realtime_ns: u64,
    refused: u64,
}

fn realtime_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| u64::try_from(since.as_nanos()).unwrap_or(u64::MAX))
}

fn main() -> ExitCode {
    if let Some(role) = ROLE.current() {
        let params: Params = ROLE.params().expect("role parameters");
        match role.as_str() {
            "publish" => publish(&params),
            "drain" => drain(&params),
            other => panic!("unknown role {other}"),
        }
        return ExitCode::SUCCESS;
    }
    let smoke = std::env::args().any(|a| a == "--smoke");
    let quick = std::env::args().any(|a| a == "--quick");
    match bench(smoke, quick) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("record bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn publish(params: &Params) {
    support::cores::pin(PUBLISHER_CORE).expect("pin");
    let channel = FifoFanout::<Msg64>::connect(&params.name).expect("connect");
    let mut publisher = channel.publisher().expect("publisher");
    let barrier = Barrier::open(&params.name).expect("barrier");
    let mut refused = 0;
    barrier.arrive_and_wait();
    let started = realtime_ns();
    let mut seq = 0;
    while seq < params.count {
        match publisher.offer(&Msg64::new(0, seq)) {
            Ok(()) => seq += 1,
            Err(PublishError::Backpressured) => {
                refused += 1;
                std::hint::spin_loop();
            }
            Err(e) => panic!("{e}"),
        }
    }
    // The rings are the channel's, which this bench's parent holds: the reader goes on
    // reading what is left after the publisher is gone.
    report_json(&Stamp {
        realtime_ns: started,
        refused,
    });
}

fn drain(params: &Params) {
    support::cores::pin(READER_CORE).expect("pin");
    let channel = FifoFanout::<Msg64>::connect(&params.name).expect("connect");
    let mut subscriber = channel.subscriber().expect("subscriber");
    let mut next = 0;
    while next < params.count {
        subscriber
            .drain(256, |_, message| {
                assert!(
                    message.seq == next && message.words[5] == next,
                    "message {next} arrived as {message:?}"
                );
                next += 1;
            })
            .expect("drain");
    }
    let last = realtime_ns();
    report_json(&Stamp {
        realtime_ns: last,
        refused: 0,
    });
}

/// What one run measured.
#[derive(Serialize)]
struct Run {
    round: usize,
    reader: &'static str,
    messages: u64,
    /// Messages per second, the publisher's start to the reader's last message.
    rate: f64,
    /// Offers the publisher made that found no room.
    refused: u64,
    /// The recorder: ns from its last message to its exit (finish, sync).
    finish_ns: Option<u64>,
    /// The recorder: the file's size.
    file_bytes: Option<u64>,
    placement: &'static str,
    floor_one_way_ns: f64,
}

/// Waits until a process holds a subscriber slot of `name`.
fn wait_for_reader(name: &str, children: &mut Children) -> Result<(), Box<dyn Error>> {
    let deadline = Instant::now() + LIMIT;
    loop {
        let status = salias::status::channel_status(name)?;
        if status
            .subscribers
            .iter()
            .any(|s| matches!(s.holder, salias::status::SlotHolder::Alive { .. }))
        {
            return Ok(());
        }
        children.check_running()?;
        if Instant::now() > deadline {
            return Err("the reader never subscribed".into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// One run: the recorder (`record`) or the draining subscriber.
fn run(record: bool, count: u64, round: usize, floor: f64) -> Result<Run, Box<dyn Error>> {
    let name = format!("record-bench-{}-{round}-{}", std::process::id(), realtime_ns());
    let _channel = FifoFanout::<Msg64>::create(&Config::new(&name).capacity(RING))?;
    let barrier = Barrier::create(&name)?;
    let file = PathBuf::from(format!("/dev/shm/{name}.mcap"));
    let params = Params {
        name: name.clone(),
        count,
    };
    let mut children = Children::new();
    let reader = if record {
        let mut command = Command::new(env!("CARGO_BIN_EXE_salias"));
        command
            .args(["record", &name, "-o"])
            .arg(&file)
            .args(["--count", &count.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SAFETY: the closure runs in the child between fork and exec and calls only
        // sched_setaffinity, which is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(READER_CORE, &mut set);
                if libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        KillOnDrop(command.spawn()?)
    } else {
        KillOnDrop(ROLE.command_with("drain", &params)?.spawn()?)
    };
    children.push(if record { "salias record" } else { "drain" }, reader);
    wait_for_reader(&name, &mut children)?;
    children.push("publisher", KillOnDrop(ROLE.command_with("publish", &params)?.spawn()?));
    barrier.release(1, &mut children, LIMIT)?;
    let outputs = children.wait_all(LIMIT)?;
    let exited = realtime_ns();
    let mut stamps = Vec::new();
    for output in &outputs {
        stamps.extend(output.json_reports::<Stamp>()?);
    }
    let publisher = stamps
        .iter()
        .min_by_key(|s| s.realtime_ns)
        .ok_or("no publisher report")?;
    let (started, refused) = (publisher.realtime_ns, publisher.refused);
    let (last, finish_ns, file_bytes) = if record {
        let bytes = std::fs::read(&file)?;
        let _ = std::fs::remove_file(&file);
        let summary = mcap::Summary::read(&bytes)?.ok_or("the recording has no summary")?;
        let recorded = summary.stats.as_ref().map_or(0, |s| s.message_count);
        if recorded != count {
            return Err(format!("the recording holds {recorded} messages, not {count}").into());
        }
        let mut messages = mcap::MessageStream::new(&bytes)?;
        let first = messages.next().ok_or("no first message")??;
        let last = messages.last().ok_or("no last message")??;
        for (message, seq) in [(&first, 0), (&last, count - 1)] {
            let msg = Msg64::read_from_bytes(&message.data).map_err(|_| "a recorded message is not 64 bytes")?;
            if msg.seq != seq || msg.words[5] != seq {
                return Err(format!("recorded message {seq} is {msg:?}").into());
            }
        }
        (
            last.log_time,
            Some(exited.saturating_sub(last.log_time)),
            Some(bytes.len() as u64),
        )
    } else {
        let last = stamps.iter().map(|s| s.realtime_ns).max().ok_or("no reader report")?;
        (last, None, None)
    };
    let elapsed = last
        .checked_sub(started)
        .filter(|&e| e > 0)
        .ok_or("the clock went backwards")?;
    Ok(Run {
        round,
        reader: if record { "salias record" } else { "drain" },
        messages: count,
        rate: count as f64 * 1e9 / elapsed as f64,
        refused,
        finish_ns,
        file_bytes,
        placement: "publisher@0 reader@1",
        floor_one_way_ns: floor,
    })
}

fn bench(smoke: bool, quick: bool) -> Result<(), Box<dyn Error>> {
    let (rounds, count) = match (smoke, quick) {
        (true, _) => (1, 100_000),
        (_, true) => (3, 2_000_000),
        _ => (5, 10_000_000),
    };
    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-results");
    let mut out = JsonLines::create_stamped(&out_dir, "record-")?;
    let mut header = Header::new(std::env::args().collect::<Vec<_>>().join(" "), rounds);
    header.config = Some(serde_json::json!({
        "kind": "FifoFanout", "message": "Msg64 (64 bytes)", "ring_bytes": RING,
        "messages_per_run": count, "placement": "publisher@0 reader@1",
        "file": "/dev/shm (tmpfs)", "clock": "CLOCK_REALTIME",
    }));
    out.write(&header)?;
    println!(
        "salias record against a draining subscriber, FifoFanout<Msg64>, 1 MiB ring, tethered, publisher@0 reader@1; {rounds} rounds of {count} messages"
    );
    if rounds < 5 {
        println!("(fewer than 5 rounds: not a publishable measurement)");
    }
    let mut ratios = Vec::new();
    let mut recorded_rates = Vec::new();
    for round in 0..rounds {
        let mut floor = support::floor::between_threads(PUBLISHER_CORE, READER_CORE, 20_000)?;
        floor.sort_unstable();
        let floor = floor[floor.len() / 2] as f64 / 2.0;
        // Alternating which goes first, so neither always meets the machine's state first.
        let order = if round % 2 == 0 { [false, true] } else { [true, false] };
        let mut rates = [0.0; 2];
        for record in order {
            let run = run(record, count, round, floor)?;
            print!(
                "round {round} (cache-line floor {floor:.0} ns): {} {:.2} M msg/s ({} refused offers{}); ",
                run.reader,
                run.rate / 1e6,
                run.refused,
                run.finish_ns
                    .map(|ns| format!(
                        ", finish {:.1} ms, {:.0} MB",
                        ns as f64 / 1e6,
                        run.file_bytes.unwrap_or(0) as f64 / 1e6
                    ))
                    .unwrap_or_default()
            );
            rates[usize::from(record)] = run.rate;
            out.write(&run)?;
        }
        println!();
        ratios.push(rates[1] / rates[0]);
        recorded_rates.push(rates[1]);
    }
    let spread = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        (values[values.len() / 2], values[0], values[values.len() - 1])
    };
    let (rate, low, high) = spread(&mut recorded_rates);
    println!(
        "salias record: {:.2} M msg/s [{:.2}, {:.2}] (median [min, max]), goal >= 5",
        rate / 1e6,
        low / 1e6,
        high / 1e6
    );
    let (ratio, low, high) = spread(&mut ratios);
    println!("salias record / drain, per round: {ratio:.2}x [{low:.2}, {high:.2}]");
    println!("raw results: {}", out.path().display());
    Ok(())
}
