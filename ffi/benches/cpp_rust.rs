//! C++ through `salias.hpp` against Rust on the same channel, by doc/benchmarking.md: what
//! the C ABI costs a C++ program per message.
//!
//! Run: `cargo bench -p salias-c --bench cpp_rust` (7 rounds), `-- --quick` (3 rounds,
//! fewer messages; not a measurement) or `-- --smoke` (checks the harness).
//!
//! Every run is one publisher and one subscriber, each a process pinned to its core (P@0,
//! S@1), on a typed FifoMpsc channel of 64-byte `Msg64`s with a 1 MiB ring, started
//! together by a barrier in shared memory; each side times itself from the barrier and the
//! slower sets the rate; every message is checked on the receiving side. The Rust roles are
//! this binary started again; the C++ ones are `benches/cpp/peer.cpp`, compiled with g++
//! -O2 against the static library this `cargo bench` built. In each round every variant
//! runs once, in one order, and each C++ variant's ratio is taken against its Rust twin of
//! the same round:
//!
//! - offer: a C++ publisher's `offer` against Rust's `offer` (both into a Rust `drain`);
//! - batch offer: `offer_batch` of 16 against Rust's;
//! - claim: `claim`, the message written in place, `commit`, against Rust's;
//! - drain: a C++ subscriber's `drain(256, f)` against Rust's (from a Rust publisher);
//! - try_recv: C++ `try_recv` + `release` against Rust `try_recv` (from a Rust publisher);
//! - ping-pong: C++ ↔ C++ against Rust ↔ Rust, one message in flight, `try_recv` spinning;
//!   one way = round trip / 2, the p50 of samples of 16 consecutive trips (CLOCK_MONOTONIC
//!   on both sides), beside the cache-line floor measured in the same round between the
//!   same cores, which shows the round's speed state.
//!
//! Raw results go to `target/bench-results/cpp-rust-<unix time>.jsonl`.

#[path = "../../benches/common/msg64.rs"]
mod msg64;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use clap::Parser;
use msg64::Msg64;
use salias::{Config, FifoMpsc, PublishError};
use serde::{Deserialize, Serialize};
use support::barrier::Barrier;
use support::clock::now_ns;
use support::jsonl::JsonLines;
use support::records::Header;
use support::role::{Children, KillOnDrop, Role, report_json};

const ROLE: Role = Role::new("SALIAS_FFI_BENCH_ROLE");
const RING: usize = 1 << 20;
const PUBLISHER_CORE: usize = 0;
const SUBSCRIBER_CORE: usize = 1;
const LIMIT: Duration = Duration::from_secs(120);

#[derive(Parser)]
#[command(about = "C++ through salias.hpp against Rust on the same channel")]
struct Cli {
    /// 3 rounds of fewer messages: checks the figures' shape, not a measurement.
    #[arg(long)]
    quick: bool,
    /// 1 round of very few messages: checks the harness only.
    #[arg(long)]
    smoke: bool,
    /// Accepted from `cargo bench`.
    #[arg(long, hide = true)]
    bench: bool,
}

/// What a role is told.
#[derive(Serialize, Deserialize)]
struct Params {
    name: String,
    count: u64,
    core: usize,
}

/// What a timed role reports.
#[derive(Deserialize, Serialize, Default, Clone, Copy)]
struct Timed {
    #[serde(default)]
    elapsed_ns: u64,
    #[serde(default)]
    one_way_centi_ns_p50: u64,
}

#[derive(Clone, Copy, PartialEq)]
enum Language {
    Rust,
    Cpp,
}

impl Language {
    fn name(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Cpp => "C++",
        }
    }
}

/// One variant: who publishes how, who receives how.
struct Variant {
    label: &'static str,
    publisher: (Language, &'static str),
    subscriber: (Language, &'static str),
}

const fn variant(
    label: &'static str,
    publisher: (Language, &'static str),
    subscriber: (Language, &'static str),
) -> Variant {
    Variant {
        label,
        publisher,
        subscriber,
    }
}

use Language::{Cpp, Rust};

/// The variants, in the order every round runs them; the pairs below name the ratios.
const VARIANTS: [Variant; 11] = [
    variant("offer, Rust", (Rust, "publish"), (Rust, "drain")),
    variant("offer, C++", (Cpp, "publish"), (Rust, "drain")),
    variant("batch offer, Rust", (Rust, "publish_batch"), (Rust, "drain")),
    variant("batch offer, C++", (Cpp, "publish_batch"), (Rust, "drain")),
    variant("claim, Rust", (Rust, "publish_claim"), (Rust, "drain")),
    variant("claim, C++", (Cpp, "publish_claim"), (Rust, "drain")),
    variant("drain, Rust", (Rust, "publish"), (Rust, "drain")),
    variant("drain, C++", (Rust, "publish"), (Cpp, "drain")),
    variant("try_recv, Rust", (Rust, "publish"), (Rust, "try_recv")),
    variant("try_recv, C++", (Rust, "publish"), (Cpp, "try_recv")),
    variant("ping-pong, Rust", (Rust, "ping"), (Rust, "pong")),
];
const CPP_PING_PONG: Variant = variant("ping-pong, C++", (Cpp, "ping"), (Cpp, "pong"));

/// (C++ variant, its Rust twin, a throughput goal (≥) or latency goal (≤)).
const RATIOS: [(&str, &str, &str); 6] = [
    ("offer, C++", "offer, Rust", ">= 0.8"),
    ("batch offer, C++", "batch offer, Rust", ">= 0.8"),
    ("claim, C++", "claim, Rust", ">= 0.8"),
    ("drain, C++", "drain, Rust", ">= 0.8"),
    ("try_recv, C++", "try_recv, Rust", ">= 0.8"),
    ("ping-pong, C++", "ping-pong, Rust", "<= 1.1"),
];

fn main() -> ExitCode {
    if let Some(role) = ROLE.current() {
        run_role(&role);
        return ExitCode::SUCCESS;
    }
    match bench(&Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cpp_rust: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---- the Rust roles ----

fn run_role(role: &str) {
    let params: Params = ROLE.params().expect("role parameters");
    support::cores::pin(params.core).expect("pin");
    match role {
        "publish" => publish(&params, How::One),
        "publish_batch" => publish(&params, How::Batch),
        "publish_claim" => publish(&params, How::Claim),
        "drain" => subscribe(&params, true),
        "try_recv" => subscribe(&params, false),
        "ping" | "pong" => ping_pong(&params, role == "ping"),
        other => panic!("unknown role {other}"),
    }
}

fn connect(name: &str) -> FifoMpsc<Msg64> {
    for _ in 0..5000 {
        match FifoMpsc::<Msg64>::connect(name) {
            Ok(channel) => return channel,
            Err(salias::Error::NotFound { .. }) => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => panic!("{e}"),
        }
    }
    panic!("no channel {name} appeared")
}

fn create(name: &str, capacity: usize) -> FifoMpsc<Msg64> {
    FifoMpsc::<Msg64>::create(&Config::new(name).capacity(capacity)).expect("create")
}

fn check(m: &Msg64, expected: u64) {
    assert!(
        m.seq == expected && m.producer == 0 && m.words[5] == m.seq,
        "message {expected} arrived as {m:?}"
    );
}

/// How a publisher role publishes: `offer` one at a time, `offer_batch` of 16, or a
/// claim written in place and committed.
#[derive(Clone, Copy, PartialEq)]
enum How {
    One,
    Batch,
    Claim,
}

fn publish(params: &Params, how: How) {
    let channel = connect(&params.name);
    let mut publisher = channel.publisher().expect("publisher");
    let barrier = Barrier::open(&params.name).expect("barrier");
    let mut batch = [Msg64::new(0, 0); 16];
    let mut seq = 0;
    barrier.arrive_and_wait();
    let started = now_ns();
    while seq < params.count {
        let taken = match how {
            How::Batch => {
                let n = (params.count - seq).min(16) as usize;
                for (i, message) in batch[..n].iter_mut().enumerate() {
                    *message = Msg64::new(0, seq + i as u64);
                }
                publisher.offer_batch(&batch[..n])
            }
            How::One => publisher.offer(&Msg64::new(0, seq)).map(|()| 1),
            How::Claim => publisher.claim().map(|mut claim| {
                *claim = Msg64::new(0, seq);
                claim.commit();
                1
            }),
        };
        match taken {
            Ok(n) => seq += n as u64,
            Err(PublishError::Backpressured) => std::hint::spin_loop(),
            Err(e) => panic!("{e}"),
        }
    }
    let elapsed_ns = now_ns() - started;
    barrier.wait_done(1);
    report_json(&Timed {
        elapsed_ns,
        ..Timed::default()
    });
}

fn subscribe(params: &Params, drain: bool) {
    let channel = create(&params.name, RING);
    let mut subscriber = channel.subscriber().expect("subscriber");
    let barrier = Barrier::open(&params.name).expect("barrier");
    let (mut received, mut checksum) = (0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while received < params.count {
        if drain {
            subscriber
                .drain(256, |_, m| {
                    check(m, received);
                    checksum = checksum.wrapping_add(m.seq);
                    received += 1;
                })
                .expect("drain");
        } else if let Some(m) = subscriber.try_recv().expect("try_recv") {
            check(&m, received);
            checksum = checksum.wrapping_add(m.seq);
            received += 1;
        }
    }
    let elapsed_ns = now_ns() - started;
    barrier.done();
    assert_eq!(checksum, params.count * (params.count - 1) / 2, "checksum");
    report_json(&Timed {
        elapsed_ns,
        ..Timed::default()
    });
}

fn ping_pong(params: &Params, pinger: bool) {
    let (inbound, outbound) = if pinger { ("pong", "ping") } else { ("ping", "pong") };
    let inbound = create(&format!("{}-{inbound}", params.name), 64 << 10);
    let mut subscriber = inbound.subscriber().expect("subscriber");
    let outbound = connect(&format!("{}-{outbound}", params.name));
    let mut publisher = outbound.publisher().expect("publisher");
    let barrier = Barrier::open(&params.name).expect("barrier");
    let mut stamps = Vec::with_capacity(params.count as usize / 16 + 1);
    let send = |publisher: &mut salias::Publisher<Msg64>, i| {
        while publisher.offer(&Msg64::new(0, i)).is_err() {
            std::hint::spin_loop();
        }
    };
    barrier.arrive_and_wait();
    for i in 0..params.count {
        if pinger {
            if i % 16 == 0 {
                stamps.push(now_ns());
            }
            send(&mut publisher, i);
        }
        loop {
            if let Some(m) = subscriber.try_recv().expect("try_recv") {
                check(&m, i);
                break;
            }
        }
        if !pinger {
            send(&mut publisher, i);
        }
    }
    if pinger {
        stamps.push(now_ns());
        barrier.done();
        // One way, in hundredths of a ns, over each 16 consecutive trips.
        let mut one_way: Vec<u64> = stamps.windows(2).map(|w| (w[1] - w[0]) * 100 / 32).collect();
        one_way.pop(); // the last window may be short
        one_way.sort_unstable();
        report_json(&Timed {
            one_way_centi_ns_p50: one_way[one_way.len() / 2],
            ..Timed::default()
        });
    } else {
        barrier.wait_done(1);
        report_json(&Timed::default());
    }
}

// ---- the parent ----

/// Compiles benches/cpp/peer.cpp against the static library of this build.
fn build_peer() -> Result<PathBuf, Box<dyn Error>> {
    let exe = std::env::current_exe()?;
    let deps = exe
        .parent()
        .ok_or("the bench binary is not in a cargo target directory")?;
    let library = deps.join("libsalias_c.a");
    if !library.exists() {
        return Err(format!("{} was not built", library.display()).into());
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR"));
    let peer = deps.join("cpp_rust_peer");
    let output = Command::new("g++")
        .args(["-std=c++20", "-O2", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(source.join("include"))
        .arg(source.join("benches/cpp/peer.cpp"))
        .arg(&library)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&peer)
        .output()
        .map_err(|e| format!("cannot run g++: {e} (install g++)"))?;
    if !output.status.success() {
        return Err(format!(
            "peer.cpp does not compile:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(peer)
}

fn command(language: Language, role: &str, params: &Params, peer: &Path) -> Result<Command, Box<dyn Error>> {
    Ok(match language {
        Language::Rust => ROLE.command_with(role, params)?,
        Language::Cpp => {
            let mut command = Command::new(peer);
            command
                .args([role, &params.name, &params.count.to_string(), &params.core.to_string()])
                .stdout(std::process::Stdio::piped());
            command
        }
    })
}

/// One run of `variant`: its figure (messages/s, or one-way ns for ping-pong).
fn run(variant: &Variant, count: u64, peer: &Path, round: usize) -> Result<f64, Box<dyn Error>> {
    let name = format!("ffi-bench-{}-{round}-{}", std::process::id(), now_ns());
    let barrier = Barrier::create(&name)?;
    let mut children = Children::new();
    for ((language, role), core) in [
        (variant.subscriber, SUBSCRIBER_CORE),
        (variant.publisher, PUBLISHER_CORE),
    ] {
        let params = Params {
            name: name.clone(),
            count,
            core,
        };
        let child = command(language, role, &params, peer)?.spawn()?;
        children.push(format!("{} {role}", language.name()), KillOnDrop(child));
    }
    barrier.release(2, &mut children, LIMIT)?;
    let outputs = children.wait_all(LIMIT)?;
    let mut timed = Vec::new();
    for output in &outputs {
        timed.extend(output.json_reports::<Timed>()?);
    }
    let ping = timed.iter().map(|t| t.one_way_centi_ns_p50).max().unwrap_or(0);
    if ping > 0 {
        return Ok(ping as f64 / 100.0);
    }
    let slowest = timed.iter().map(|t| t.elapsed_ns).max().ok_or("no report")?;
    Ok(count as f64 * 1e9 / slowest as f64)
}

#[derive(Serialize)]
struct Record<'a> {
    round: usize,
    variant: &'a str,
    /// Messages per second, or one-way ns for ping-pong.
    value: f64,
    unit: &'static str,
    placement: &'static str,
    floor_one_way_ns: f64,
}

fn median(values: &mut [f64]) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2], values[0], values[values.len() - 1])
}

fn bench(cli: &Cli) -> Result<(), Box<dyn Error>> {
    support::cores::cores();
    let (rounds, messages, trips) = match (cli.smoke, cli.quick) {
        (true, _) => (1, 100_000, 20_000),
        (_, true) => (3, 2_000_000, 100_000),
        _ => (7, 10_000_000, 200_000),
    };
    let peer = build_peer()?;
    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-results");
    let mut out = JsonLines::create_stamped(&out_dir, "cpp-rust-")?;
    let mut header = Header::new(std::env::args().collect::<Vec<_>>().join(" "), rounds);
    header.config = Some(serde_json::json!({
        "kind": "FifoMpsc", "message": "Msg64 (64 bytes)", "ring_bytes": RING,
        "messages_per_run": messages, "round_trips_per_run": trips,
        "placement": "P0@0 S0@1", "cpp": "g++ -O2 -std=c++20, libsalias_c.a of this build",
    }));
    out.write(&header)?;
    println!("C++ (salias.hpp) against Rust, FifoMpsc<Msg64>, 1 MiB ring, 1P1S, P0@0 S0@1; {rounds} rounds");
    if rounds < 5 {
        println!("(fewer than 5 rounds: not a publishable measurement)");
    }
    let mut values: Vec<Vec<(&str, f64)>> = Vec::new();
    for round in 0..rounds {
        let floor = support::floor::between_threads(PUBLISHER_CORE, SUBSCRIBER_CORE, 20_000)?;
        let mut floor = floor.iter().map(|&t| t as f64 / 2.0).collect::<Vec<_>>();
        let (floor, _, _) = median(&mut floor);
        let mut row = Vec::new();
        for variant in VARIANTS.iter().chain([&CPP_PING_PONG]) {
            let ping_pong = variant.publisher.1 == "ping";
            let value = run(variant, if ping_pong { trips } else { messages }, &peer, round)?;
            out.write(&Record {
                round,
                variant: variant.label,
                value,
                unit: if ping_pong { "ns one way" } else { "messages/s" },
                placement: "P0@0 S0@1",
                floor_one_way_ns: floor,
            })?;
            row.push((variant.label, value));
        }
        print!("round {round} (cache-line floor {floor:.0} ns):");
        for (label, value) in &row {
            if label.starts_with("ping") {
                print!(" {label} {value:.0} ns;");
            } else {
                print!(" {label} {:.1} M/s;", value / 1e6);
            }
        }
        println!();
        values.push(row);
    }
    println!("\nper-round ratios, C++ / Rust: median [min, max] over {rounds} rounds");
    for (cpp, rust, goal) in RATIOS {
        let find = |row: &Vec<(&str, f64)>, label: &str| row.iter().find(|(l, _)| *l == label).map(|(_, v)| *v);
        let mut ratios: Vec<f64> = values
            .iter()
            .filter_map(|row| Some(find(row, cpp)? / find(row, rust)?))
            .collect();
        let (mid, low, high) = median(&mut ratios);
        println!("  {cpp:<18} / {rust:<18} {mid:.2}x [{low:.2}, {high:.2}]  goal {goal}");
    }
    println!("raw results: {}", out.path().display());
    Ok(())
}
