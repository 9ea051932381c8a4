//! Throughput and open-loop latency of a salias channel carried by the bridge
//! (source → channel → `out` → zenoh over 127.0.0.1 → `in` → channel → sink), beside zenoh
//! alone carrying the same 64-byte payloads (one put per message), and the two local
//! hops' share (source → channel → sink on one machine, no bridge), in the same run,
//! alternating system by system, the first one rotating round by round.
//!
//! ```text
//! cargo bench --bench bridge -- --quick          # 5 rounds, short runs
//! cargo bench --bench bridge -- --rounds 7 --messages 2000000 --loads 10000,100000
//! python3 bench/report.py bench/results/*.jsonl  # the write-up's tables
//! ```
//!
//! Every process is a separate executable (this one re-run with a role, and the
//! `salias-bridge` binary), pinned: source and `out` (or zenoh's publisher) on core 0,
//! `in` and sink (or zenoh's subscriber) on core 1. Each run checks the count, order and
//! contents of every measured message. Raw results go to `bench/results/<unix time>.jsonl`.

mod roles;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use roles::{Plan, now_ns, pin};
use serde_json::{Value, json};

struct Options {
    rounds: usize,
    messages: u64,
    loads: Vec<u64>,
    latency_secs: f64,
    batch: usize,
    linger_us: u64,
    out: String,
}

fn options(args: &[String]) -> Options {
    let quick = args.iter().any(|a| a == "--quick");
    let mut o = Options {
        rounds: 5,
        messages: if quick { 200_000 } else { 2_000_000 },
        loads: vec![1_000, 10_000, 50_000],
        latency_secs: if quick { 0.5 } else { 2.0 },
        batch: 64,
        linger_us: 0,
        out: format!(
            "{}/bench/results/{}.jsonl",
            env!("CARGO_MANIFEST_DIR"),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("after 1970")
                .as_secs()
        ),
    };
    let mut i = 0;
    while i < args.len() {
        let value = || {
            args.get(i + 1)
                .cloned()
                .unwrap_or_else(|| panic!("{} needs a value", args[i]))
        };
        match args[i].as_str() {
            "--rounds" => o.rounds = value().parse().expect("--rounds N"),
            "--messages" => o.messages = value().parse().expect("--messages N"),
            "--loads" => {
                o.loads = value()
                    .split(',')
                    .map(|l| l.parse().expect("--loads A,B,C (msg/s)"))
                    .collect()
            }
            "--latency-secs" => o.latency_secs = value().parse().expect("--latency-secs S"),
            "--batch" => o.batch = value().parse().expect("--batch N"),
            "--linger-us" => o.linger_us = value().parse().expect("--linger-us N"),
            "--out" => o.out = value(),
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    o
}

/// A child process reporting on stdout, killed on drop.
struct Proc {
    child: Child,
    lines: std::io::Lines<BufReader<ChildStdout>>,
}

impl Proc {
    fn spawn(core: usize, program: &str, args: &[String]) -> Proc {
        let mut child = Command::new("taskset")
            .arg("-c")
            .arg(core.to_string())
            .arg(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("taskset {program}: {e}"));
        let lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        Proc { child, lines }
    }
    fn role(core: usize, args: &[&str]) -> Proc {
        let me = std::env::current_exe().expect("this executable");
        let mut all = vec!["--role".to_owned()];
        all.extend(args.iter().map(|s| s.to_string()));
        Proc::spawn(core, me.to_str().expect("a UTF-8 path"), &all)
    }
    fn wait_for(&mut self, text: &str) -> String {
        for line in self.lines.by_ref() {
            let line = line.expect("a line");
            if line.contains(text) {
                return line;
            }
        }
        panic!("a benchmark process ended without printing {text:?}");
    }
    fn json(&mut self) -> Value {
        let line = self.wait_for("{");
        serde_json::from_str(&line).expect("a JSON report")
    }
    fn go(&mut self) {
        let stdin = self.child.stdin.as_mut().expect("piped");
        stdin.write_all(b"go\n").expect("tell the source to start");
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// One measured run of `system` ("bridge", "zenoh" or "salias") with `plan`.
fn run(system: &str, plan: Plan, o: &Options, id: &str) -> Value {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let (count, rate) = (plan.count.to_string(), plan.rate.to_string());
    let (source_report, sink_report) = match system {
        "bridge" => {
            let (from, to) = (format!("bb-a-{id}"), format!("bb-b-{id}"));
            let _channels = roles::channels(&from, &to);
            let bridge = env!("CARGO_BIN_EXE_salias-bridge");
            let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            let mut inbound = Proc::spawn(
                1,
                bridge,
                &s(&[
                    "in",
                    "--key",
                    id,
                    "--channel",
                    &to,
                    "--listen",
                    &endpoint,
                    "--no-scouting",
                ]),
            );
            inbound.wait_for("in: ");
            let (batch, linger) = (o.batch.to_string(), o.linger_us.to_string());
            let _outbound = Proc::spawn(
                0,
                bridge,
                &s(&[
                    "out",
                    "--channel",
                    &from,
                    "--key",
                    id,
                    "--connect",
                    &endpoint,
                    "--no-scouting",
                    "--batch",
                    &batch,
                    "--linger-us",
                    &linger,
                ]),
            );
            let mut sink = Proc::role(1, &["salias-sink", &to, &count]);
            let mut source = Proc::role(0, &["salias-source", &from, &count, &rate]);
            sink.wait_for("ready");
            source.go();
            (source.json(), sink.json())
        }
        "salias" => {
            // The local hops alone: source and sink on one channel, across the same cores.
            let from = format!("bb-l-{id}");
            let (_channel, _unused) = roles::channels(&from, &format!("bb-u-{id}"));
            let mut sink = Proc::role(1, &["salias-sink", &from, &count]);
            let mut source = Proc::role(0, &["salias-source", &from, &count, &rate]);
            sink.wait_for("ready");
            source.go();
            (source.json(), sink.json())
        }
        _ => {
            let mut sink = Proc::role(1, &["zenoh-sink", &endpoint, id, &count]);
            sink.wait_for("listening");
            let mut source = Proc::role(0, &["zenoh-source", &endpoint, id, &count, &rate]);
            sink.wait_for("ready");
            source.go();
            (source.json(), sink.json())
        }
    };
    assert_eq!(
        sink_report["count"],
        json!(plan.count),
        "{system}: every message arrived"
    );
    assert_eq!(sink_report["bad"], json!(0), "{system}: in order and intact");
    let start = source_report["start_ns"].as_u64().expect("start");
    let end = sink_report["last_recv_ns"].as_u64().expect("end");
    let seconds = (end - start) as f64 / 1e9;
    let offers = source_report["offers"].as_u64().expect("offers") as f64;
    json!({
        "system": system, "count": plan.count, "offered_rate": plan.rate,
        "delivered_per_s": plan.count as f64 / seconds, "bytes_per_s": plan.count as f64 * 64.0 / seconds,
        "refused_fraction": source_report["refused"].as_f64().expect("refused") / offers,
        "total_ns": sink_report["total_ns"], "queueing_ns": sink_report["queueing_ns"],
        "service_ns": sink_report["service_ns"],
    })
}

/// Cache-line round trip / 2 between threads pinned to cores 0 and 1 (the machine's floor).
fn cache_line_floor(pings: u64) -> u64 {
    let mut round_trips = support::floor::between_threads(0, 1, pings).unwrap_or_else(|e| panic!("{e}"));
    round_trips.sort_unstable();
    round_trips[round_trips.len() / 2] / 2
}

/// 64-byte TCP round trip / 2 over 127.0.0.1 between threads on cores 0 and 1: the floor
/// of any path through the loopback network stack.
fn tcp_floor(pings: u32) -> u64 {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("addr");
    let echo = std::thread::spawn(move || {
        pin(1);
        let (mut stream, _) = listener.accept().expect("accept");
        stream.set_nodelay(true).expect("nodelay");
        let mut buf = [0u8; 64];
        for _ in 0..pings {
            stream.read_exact(&mut buf).expect("read");
            stream.write_all(&buf).expect("write");
        }
    });
    pin(0);
    let mut stream = std::net::TcpStream::connect(address).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let mut buf = [7u8; 64];
    let mut samples = Vec::with_capacity(pings as usize);
    for _ in 0..pings {
        let t = now_ns();
        stream.write_all(&buf).expect("write");
        stream.read_exact(&mut buf).expect("read");
        samples.push((now_ns() - t) / 2);
    }
    echo.join().expect("echo thread");
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn clock() -> Value {
    let mut smallest = u64::MAX;
    for _ in 0..100_000 {
        let (a, b) = (now_ns(), now_ns());
        if b > a {
            smallest = smallest.min(b - a);
        }
    }
    json!({"clock": "CLOCK_MONOTONIC", "getres_ns": support::clock::resolution_ns(), "smallest_step_ns": smallest})
}

fn machine() -> Value {
    let machine = support::machine::Machine::detect();
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    json!({"cpu": machine.cpu, "cores": machine.cores, "kernel": machine.kernel, "loadavg_at_start": loadavg.trim()})
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--role") {
        let a = |i: usize| args[i].as_str();
        let n = |i: usize| args[i].parse::<u64>().expect("a number");
        let report = match a(1) {
            "salias-source" => roles::salias_source(
                a(2),
                Plan {
                    count: n(3),
                    rate: n(4),
                },
            ),
            "salias-sink" => roles::salias_sink(a(2), n(3)),
            "zenoh-source" => roles::zenoh_source(
                a(2),
                a(3),
                Plan {
                    count: n(4),
                    rate: n(5),
                },
            ),
            "zenoh-sink" => roles::zenoh_sink(a(2), a(3), n(4)),
            other => panic!("unknown role {other}"),
        };
        println!("{report}");
        return;
    }
    let o = options(&args);
    std::fs::create_dir_all(std::path::Path::new(&o.out).parent().expect("a directory")).expect("results directory");
    let mut out = std::fs::File::create(&o.out).expect("the results file");
    let header = json!({
        "machine": machine(), "clock": clock(),
        "command": format!("cargo bench --bench bridge -- {}", args.iter().filter(|a| *a != "--bench").cloned().collect::<Vec<_>>().join(" ")),
        "versions": {"zenoh": "1.10.2", "salias_bridge": env!("CARGO_PKG_VERSION")},
        "placement": {"source": 0, "out": 0, "in": 1, "sink": 1, "zenoh_publisher": 0, "zenoh_subscriber": 1,
                      "note": "4 processes on 2 cores for the bridge, 2 for zenoh alone: the bridge runs oversubscribed"},
        "config": {"rounds": o.rounds, "messages": o.messages, "loads": o.loads, "latency_secs": o.latency_secs,
                   "message_bytes": 64, "batch": o.batch, "linger_us": o.linger_us,
                   "bridge": "salias FifoMpsc 4 MiB rings, out --batch/--linger-us, in --backpressure block, zenoh peer over tcp/127.0.0.1, no scouting",
                   "zenoh_alone": "one put per message, CongestionControl::Block, callback subscriber, peer over tcp/127.0.0.1",
                   "salias": "source and sink on one FifoMpsc channel (4 MiB ring), recv with the default Adaptive wait"},
        "floors": {"cache_line_one_way_ns_p50": cache_line_floor(100_000), "tcp_loopback_64b_one_way_ns_p50": tcp_floor(20_000)},
    });
    writeln!(out, "{header}").expect("write");
    eprintln!("{header}");
    let started = Instant::now();
    for round in 0..o.rounds {
        // Alternate, and rotate who goes first each round.
        let mut systems = ["bridge", "zenoh", "salias"];
        systems.rotate_left(round % 3);
        let mut plans = vec![(
            "throughput",
            Plan {
                count: o.messages,
                rate: 0,
            },
        )];
        for &load in &o.loads {
            plans.push((
                "openloop",
                Plan {
                    count: (load as f64 * o.latency_secs) as u64,
                    rate: load,
                },
            ));
        }
        for (bench, plan) in plans {
            for system in systems {
                let id = format!("{}-{round}-{bench}-{}-{}", std::process::id(), plan.rate, system);
                let mut line = run(system, plan, &o, &id);
                line["bench"] = json!(bench);
                line["round"] = json!(round);
                writeln!(out, "{line}").expect("write");
                eprintln!(
                    "round {round} {bench:10} {system:6} load {:>7}: {:>10.0} msg/s, total p50 {} ns",
                    plan.rate,
                    line["delivered_per_s"].as_f64().unwrap_or(0.0),
                    line["total_ns"]["p50"]
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    eprintln!("{} in {:.0?}", o.out, started.elapsed());
}
