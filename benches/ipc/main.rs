//! Cross-process throughput and latency of salias, by BENCHMARKING.md.
//!
//! Run: `cargo bench --bench ipc` (every ring size, 5 rounds), or add `-- --quick` (1 MiB
//! rings, 3 rounds, about a minute); `-- --only throughput`, `-- --only sizes` (raw frames
//! of 8 B to 4 KiB), `-- --only stress` (4 and 8 publishers into 64 KiB rings) or
//! `-- --only latency`.
//!
//! - Every publisher and subscriber is a separate process: this binary re-executes itself
//!   with a role, pinned to a named core (recorded with every figure).
//! - The clock starts only after every process has connected and passed a barrier in
//!   shared memory, and stops when the subscriber has the last message; setup and spawning
//!   stay outside.
//! - Every run verifies its result: message count, per-publisher order and a checksum.
//! - Variants alternate round by round (A B A B …), and the summary is the median with min
//!   and max over the rounds. Raw results are written as JSON lines to
//!   `target/bench-results/ipc-<unix time>.jsonl`, with the machine and the command.
//! - Latency is ping-pong round trip / 2 between two processes, next to the machine's floor
//!   measured the same way: a bare cache-line ping-pong between the same two cores.

use std::io::{BufRead, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use salias::{
    BusySpin, Bytes, Channel, Config, Fanout, Fifo, MessageInfo, Mode, Mpsc, Ordered, PublishError, SaliasMessage,
    Topology,
};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// 64 bytes: the default message size.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Msg64 {
    producer: u64,
    seq: u64,
    words: [u64; 6],
}

impl Msg64 {
    fn new(producer: u64, seq: u64) -> Self {
        Msg64 {
            producer,
            seq,
            words: [seq ^ producer; 6],
        }
    }
}

/// One throughput configuration.
#[derive(Clone, Debug)]
struct Setup {
    kind: &'static str,
    publishers: u32,
    subscribers: u32,
    ring: usize,
    batch: usize,
    messages: u64,
    /// Payload bytes; the `Raw` kind carries raw frames of this size, the others `Msg64`.
    size: usize,
}

impl Setup {
    fn label(&self) -> String {
        let size = if self.kind == "RawFifoMpsc" {
            format!(" {} B", self.size)
        } else {
            String::new()
        };
        let ring = if self.ring >= 1 << 20 {
            format!("{} MiB", self.ring >> 20)
        } else {
            format!("{} KiB", self.ring >> 10)
        };
        format!(
            "{}{size} {}P{}S ring {ring} {}",
            self.kind,
            self.publishers,
            self.subscribers,
            if self.batch > 1 {
                format!("batch {}", self.batch)
            } else {
                "offer".into()
            }
        )
    }

    fn to_args(&self) -> Vec<String> {
        vec![
            self.kind.into(),
            self.publishers.to_string(),
            self.subscribers.to_string(),
            self.ring.to_string(),
            self.batch.to_string(),
            self.messages.to_string(),
            self.size.to_string(),
        ]
    }

    fn from_args(args: &[String]) -> Setup {
        let kind = match args[0].as_str() {
            "RawFifoMpsc" => "RawFifoMpsc",
            "FifoMpsc" => "FifoMpsc",
            "FifoFanout" => "FifoFanout",
            "OrderedMpsc" => "OrderedMpsc",
            _ => "OrderedFanout",
        };
        Setup {
            kind,
            publishers: args[1].parse().unwrap(),
            subscribers: args[2].parse().unwrap(),
            ring: args[3].parse().unwrap(),
            batch: args[4].parse().unwrap(),
            messages: args[5].parse().unwrap(),
            size: args[6].parse().unwrap(),
        }
    }
}

/// The cores to pin roles to: publishers on the first, subscribers on the last, so one
/// publisher and one subscriber never share a core; more processes than cores share them
/// (the placement is printed and recorded).
fn core_for(role: &str, index: usize) -> usize {
    let cores = cores();
    match role {
        "publisher" => index % cores.max(1),
        _ => (cores - 1 - index % cores.max(1)) % cores.max(1),
    }
}

/// The machine's cores, counted once before anything is pinned (a pinned process sees
/// only its own core).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn pin(core: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(core);
    rustix::thread::sched_setaffinity(None, &set).expect("pin to core");
}

fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A start barrier in shared memory: every process checks in, then spins until the parent
/// says go, so all start within nanoseconds of each other.
struct Barrier {
    map: memmap2::MmapMut,
}

impl Barrier {
    fn path(name: &str) -> String {
        format!("/dev/shm/{name}.barrier")
    }

    fn create(name: &str) -> Barrier {
        let file = std::fs::File::create_new(Self::path(name)).unwrap();
        file.set_len(128).unwrap();
        Self::map(file)
    }

    fn open(name: &str) -> Barrier {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(Self::path(name))
            .unwrap();
        Self::map(file)
    }

    fn map(file: std::fs::File) -> Barrier {
        // SAFETY: a private 128-byte file of this benchmark, used only through atomics.
        let map = unsafe { memmap2::MmapMut::map_mut(&file).unwrap() };
        Barrier { map }
    }

    fn word(&self, index: usize) -> &AtomicU64 {
        // SAFETY: the mapping is 128 bytes, page aligned; index < 16 keeps it in bounds.
        unsafe { &*(self.map.as_ptr() as *const AtomicU64).add(index) }
    }

    fn arrive_and_wait(&self) {
        self.word(0).fetch_add(1, Ordering::AcqRel);
        while self.word(1).load(Ordering::Acquire) == 0 {
            std::hint::spin_loop();
        }
    }

    fn release_when(&self, parties: u64) {
        while self.word(0).load(Ordering::Acquire) < parties {
            std::thread::yield_now();
        }
        self.word(1).store(1, Ordering::Release);
    }

    fn remove(name: &str) {
        let _ = std::fs::remove_file(Self::path(name));
    }
}

// ---------------------------------------------------------------------------------------
// Roles

/// Ring size of the multi-producer stress runs. Their processes outnumber the cores, so a
/// refused publisher, or a subscriber that found nothing, yields its core instead of
/// spinning through the rest of its time slice.
const STRESS_RING: usize = 64 << 10;

fn backed_off(setup: &Setup) {
    if setup.ring == STRESS_RING {
        std::thread::yield_now();
    } else {
        std::hint::spin_loop();
    }
}

fn run_publisher<M: Mode, K: Topology>(name: &str, setup: &Setup, index: u64) {
    let channel = Channel::<Msg64, M, K>::connect(name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let barrier = Barrier::open(name);
    let mut batch = vec![Msg64::new(index, 0); setup.batch];
    let (mut attempts, mut seq) = (0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while seq < setup.messages {
        if setup.batch > 1 {
            let count = (setup.messages - seq).min(setup.batch as u64) as usize;
            for (i, message) in batch[..count].iter_mut().enumerate() {
                *message = Msg64::new(index, seq + i as u64);
            }
            attempts += 1;
            match publisher.offer_batch(&batch[..count]) {
                Ok(n) => seq += n as u64,
                Err(PublishError::Backpressured) => backed_off(setup),
                Err(e) => panic!("{e}"),
            }
        } else {
            attempts += 1;
            match publisher.offer(&Msg64::new(index, seq)) {
                Ok(()) => seq += 1,
                Err(PublishError::Backpressured) => backed_off(setup),
                Err(e) => panic!("{e}"),
            }
        }
    }
    let elapsed = now_ns() - started;
    println!(
        "RESULT publisher {index} elapsed_ns {elapsed} attempts {attempts} refused {}",
        publisher.backpressured()
    );
}

/// `sequence_of` gives an ordered message's global sequence number, checked to run 0, 1,
/// 2, … with no gap or repeat; FIFO kinds pass a function that returns `None`.
fn run_subscriber<M: Mode, K: Topology>(
    name: &str,
    setup: &Setup,
    index: u64,
    sequence_of: fn(&MessageInfo<M>) -> Option<u64>,
) {
    let channel = Channel::<Msg64, M, K>::connect(name).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let barrier = Barrier::open(name);
    let total = setup.messages * setup.publishers as u64;
    let mut next = vec![0u64; setup.publishers as usize];
    let (mut received, mut checksum, mut next_sequence) = (0u64, 0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while received < total {
        let polled = subscriber
            .poll(256, |info, m| {
                if let Some(sequence) = sequence_of(&info) {
                    assert_eq!(sequence, next_sequence, "global sequence has a gap or repeat");
                    next_sequence += 1;
                }
                let producer = m.producer as usize;
                assert_eq!(m.seq, next[producer], "lost or reordered");
                assert_eq!(m.words[5], m.seq ^ m.producer, "corrupted");
                next[producer] += 1;
                checksum = checksum.wrapping_add(m.seq);
            })
            .unwrap() as u64;
        received += polled;
        if polled == 0 {
            backed_off(setup);
        }
    }
    let elapsed = now_ns() - started;
    let expected = setup.publishers as u64 * (setup.messages * (setup.messages - 1) / 2);
    assert_eq!(checksum, expected, "checksum");
    println!("RESULT subscriber {index} elapsed_ns {elapsed} received {received}");
}

/// Raw frames of `size` bytes carry the sequence number in their first 8 bytes (or as
/// many as fit) and `raw_last_byte` in their last, so both ends of every frame are checked
/// without touching the bytes between.
fn raw_last_byte(len: usize, seq: u64) -> u8 {
    if len > 8 {
        seq as u8 ^ 0x5a
    } else {
        seq.to_le_bytes()[len - 1]
    }
}

fn fill_raw(frame: &mut [u8], seq: u64) {
    let (len, head) = (frame.len(), frame.len().min(8));
    frame[..head].copy_from_slice(&seq.to_le_bytes()[..head]);
    if let Some(last) = frame.last_mut() {
        *last = raw_last_byte(len, seq);
    }
}

fn run_raw_publisher(name: &str, setup: &Setup) {
    let channel = Channel::<Bytes, Fifo, Mpsc>::connect(name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let barrier = Barrier::open(name);
    let mut frames = vec![vec![0u8; setup.size]; setup.batch];
    let (mut attempts, mut seq) = (0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while seq < setup.messages {
        let count = (setup.messages - seq).min(setup.batch as u64) as usize;
        for (i, frame) in frames[..count].iter_mut().enumerate() {
            fill_raw(frame, seq + i as u64);
        }
        attempts += 1;
        let sent = if count == 1 {
            publisher.offer(&frames[0]).map(|()| 1)
        } else {
            publisher.offer_batch(&frames[..count])
        };
        match sent {
            Ok(n) => seq += n as u64,
            Err(PublishError::Backpressured) => std::hint::spin_loop(),
            Err(e) => panic!("{e}"),
        }
    }
    let elapsed = now_ns() - started;
    println!(
        "RESULT publisher 0 elapsed_ns {elapsed} attempts {attempts} refused {}",
        publisher.backpressured()
    );
}

fn run_raw_subscriber(name: &str, setup: &Setup) {
    let channel = Channel::<Bytes, Fifo, Mpsc>::connect(name).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let barrier = Barrier::open(name);
    let mut received = 0u64;
    barrier.arrive_and_wait();
    let started = now_ns();
    while received < setup.messages {
        subscriber
            .poll(256, |_, frame| {
                assert_eq!(frame.len(), setup.size, "wrong length");
                let head = frame.len().min(8);
                assert_eq!(frame[..head], received.to_le_bytes()[..head], "lost or reordered");
                assert_eq!(
                    frame[frame.len() - 1],
                    raw_last_byte(frame.len(), received),
                    "corrupted"
                );
                received += 1;
            })
            .unwrap();
    }
    let elapsed = now_ns() - started;
    println!("RESULT subscriber 0 elapsed_ns {elapsed} received {received}");
}

fn dispatch(role: &str, name: &str, setup: &Setup, index: u64) {
    if setup.kind == "RawFifoMpsc" {
        return match role {
            "publisher" => run_raw_publisher(name, setup),
            _ => run_raw_subscriber(name, setup),
        };
    }
    macro_rules! run {
        ($m:ty, $k:ty, $sequence_of:expr) => {
            match role {
                "publisher" => run_publisher::<$m, $k>(name, setup, index),
                _ => run_subscriber::<$m, $k>(name, setup, index, $sequence_of),
            }
        };
    }
    match setup.kind {
        "FifoMpsc" => run!(Fifo, Mpsc, |_| None),
        "FifoFanout" => run!(Fifo, Fanout, |_| None),
        "OrderedMpsc" => run!(Ordered, Mpsc, |info| Some(info.sequence())),
        _ => run!(Ordered, Fanout, |info| Some(info.sequence())),
    }
}

fn create_channel(name: &str, setup: &Setup) -> Box<dyn std::any::Any> {
    let config = Config::new(name)
        .capacity(setup.ring)
        .publishers(setup.publishers)
        .subscribers(setup.subscribers);
    match setup.kind {
        "RawFifoMpsc" => {
            Box::new(Channel::<Bytes, Fifo, Mpsc>::create(&config.max_message_size(setup.size.max(1))).unwrap())
        }
        "FifoMpsc" => Box::new(Channel::<Msg64, Fifo, Mpsc>::create(&config).unwrap()),
        "FifoFanout" => Box::new(Channel::<Msg64, Fifo, Fanout>::create(&config).unwrap()),
        "OrderedMpsc" => Box::new(Channel::<Msg64, Ordered, Mpsc>::create(&config).unwrap()),
        _ => Box::new(Channel::<Msg64, Ordered, Fanout>::create(&config).unwrap()),
    }
}

// ---------------------------------------------------------------------------------------
// Latency: ping-pong on salias, and the bare cache-line floor between the same cores.

const PINGS: u64 = 200_000;

fn run_pong(name: &str) {
    let ping = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-ping")).unwrap();
    let pong = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-pong")).unwrap();
    let mut inbound = ping.subscriber().unwrap();
    inbound.set_wait_strategy(BusySpin);
    let mut outbound = pong.publisher().unwrap();
    Barrier::open(name).arrive_and_wait();
    for _ in 0..PINGS {
        let message = *inbound.recv().unwrap();
        outbound.send(&message).unwrap();
    }
}

fn salias_round_trips(name: &str, core: usize) -> Vec<u64> {
    let ping = Channel::<Msg64, Fifo, Mpsc>::create(&Config::new(format!("{name}-ping"))).unwrap();
    let pong = Channel::<Msg64, Fifo, Mpsc>::create(&Config::new(format!("{name}-pong"))).unwrap();
    let mut outbound = ping.publisher().unwrap();
    let mut inbound = pong.subscriber().unwrap();
    inbound.set_wait_strategy(BusySpin);
    let barrier = Barrier::create(name);
    let mut child = spawn_role("pong", name, &[], core_for("subscriber", 0));
    pin(core);
    barrier.arrive_and_wait_as_parent(2);
    let mut samples = Vec::with_capacity(PINGS as usize);
    for seq in 0..PINGS {
        let sent = now_ns();
        outbound.send(&Msg64::new(0, seq)).unwrap();
        let back = inbound.recv().unwrap();
        assert_eq!(back.seq, seq);
        drop(back);
        samples.push(now_ns() - sent);
    }
    assert!(child.wait().unwrap().success());
    Barrier::remove(name);
    samples
}

fn run_floor_pong(name: &str) {
    let barrier = Barrier::open(name);
    barrier.arrive_and_wait();
    // Word 2 carries pings, word 3 pongs.
    for i in 1..=PINGS {
        while barrier.word(2).load(Ordering::Acquire) != i {
            std::hint::spin_loop();
        }
        barrier.word(3).store(i, Ordering::Release);
    }
}

fn floor_round_trips(name: &str, core: usize) -> Vec<u64> {
    let barrier = Barrier::create(name);
    let mut child = spawn_role("floor-pong", name, &[], core_for("subscriber", 0));
    pin(core);
    barrier.arrive_and_wait_as_parent(2);
    let mut samples = Vec::with_capacity(PINGS as usize);
    for i in 1..=PINGS {
        let sent = now_ns();
        barrier.word(2).store(i, Ordering::Release);
        while barrier.word(3).load(Ordering::Acquire) != i {
            std::hint::spin_loop();
        }
        samples.push(now_ns() - sent);
    }
    assert!(child.wait().unwrap().success());
    Barrier::remove(name);
    samples
}

impl Barrier {
    /// The parent is one of the parties here: it arrives and releases everyone.
    fn arrive_and_wait_as_parent(&self, parties: u64) {
        self.word(0).fetch_add(1, Ordering::AcqRel);
        self.release_when(parties);
    }
}

// ---------------------------------------------------------------------------------------
// Orchestration

fn spawn_role(role: &str, name: &str, setup: &[String], core: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--role", role, name, &core.to_string(), "--"])
        .args(setup)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

struct Run {
    published_per_s: f64,
    delivered_per_s: f64,
    refused: f64,
    placement: String,
}

fn throughput_run(setup: &Setup, round: usize) -> Run {
    let name = format!("bench-{}-{round}-{}", std::process::id(), now_ns() % 1_000_000);
    let _channel = create_channel(&name, setup);
    let barrier = Barrier::create(&name);
    let mut children = Vec::new();
    let mut placement = Vec::new();
    for s in 0..setup.subscribers as usize {
        let core = core_for("subscriber", s);
        placement.push(format!("S{s}@{core}"));
        children.push(spawn_role("subscriber", &name, &setup.to_args_with(s), core));
    }
    for p in 0..setup.publishers as usize {
        let core = core_for("publisher", p);
        placement.push(format!("P{p}@{core}"));
        children.push(spawn_role("publisher", &name, &setup.to_args_with(p), core));
    }
    barrier.release_when((setup.publishers + setup.subscribers) as u64);
    let (mut publish_ns, mut deliver_ns, mut attempts, mut refused) = (0u64, 0u64, 0u64, 0u64);
    for mut child in children {
        let stdout = child.stdout.take().unwrap();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.first() != Some(&"RESULT") {
                continue;
            }
            let elapsed: u64 = words[4].parse().unwrap();
            if words[1] == "publisher" {
                publish_ns = publish_ns.max(elapsed);
                attempts += words[6].parse::<u64>().unwrap();
                refused += words[8].parse::<u64>().unwrap();
            } else {
                deliver_ns = deliver_ns.max(elapsed);
            }
        }
        assert!(child.wait().unwrap().success(), "a benchmark process failed");
    }
    Barrier::remove(&name);
    let published = setup.messages as f64 * setup.publishers as f64;
    Run {
        published_per_s: published / (publish_ns as f64 / 1e9),
        delivered_per_s: published * setup.subscribers as f64 / (deliver_ns as f64 / 1e9),
        refused: refused as f64 / attempts.max(1) as f64,
        placement: placement.join(" "),
    }
}

impl Setup {
    fn to_args_with(&self, index: usize) -> Vec<String> {
        let mut args = self.to_args();
        args.push(index.to_string());
        args
    }
}

fn stats(samples: &[f64]) -> (f64, f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    (sorted[sorted.len() / 2], sorted[0], sorted[sorted.len() - 1])
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown cpu".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cpu}, {} cores, Linux {}", cores(), kernel.trim())
}

/// Runs every setup once per round, in the same order each round (A B C … A B C …), and
/// writes one JSON line per run as `record` formats it.
fn run_rounds(
    setups: &[Setup],
    rounds: usize,
    what: &str,
    started: Instant,
    out: &mut std::fs::File,
    record: impl Fn(&Setup, &Run, usize) -> String,
) -> Vec<Vec<Run>> {
    let mut results: Vec<Vec<Run>> = setups.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (setup, runs) in setups.iter().zip(results.iter_mut()) {
            let run = throughput_run(setup, round);
            writeln!(out, "{}", record(setup, &run, round)).unwrap();
            runs.push(run);
        }
        eprintln!("{what}round {}/{rounds} done after {:?}", round + 1, started.elapsed());
    }
    results
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() >= 5 && args[1] == "--role" {
        let (role, name, core) = (args[2].as_str(), &args[3], args[4].parse().unwrap());
        pin(core);
        match role {
            "pong" => run_pong(name),
            "floor-pong" => run_floor_pong(name),
            _ => {
                let setup = Setup::from_args(&args[6..13]);
                dispatch(role, name, &setup, args[13].parse().unwrap());
            }
        }
        return;
    }
    cores();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let run_throughput = only.is_none() || only.as_deref() == Some("throughput");
    let run_sizes = only.is_none() || only.as_deref() == Some("sizes");
    let run_stress = only.is_none() || only.as_deref() == Some("stress");
    let run_latency = only.is_none() || only.as_deref() == Some("latency");
    let rounds = if quick { 3 } else { 5 };
    let messages = if quick { 2_000_000 } else { 10_000_000 };
    let rings: &[usize] = if quick {
        &[1 << 20]
    } else {
        &[1 << 20, 4 << 20, 64 << 20]
    };

    let mut setups = Vec::new();
    for &ring in rings {
        for (publishers, subscribers) in [(1, 1), (2, 1), (1, 2), (2, 2)] {
            for kind in ["FifoMpsc", "FifoFanout", "OrderedMpsc", "OrderedFanout"] {
                if kind.ends_with("Mpsc") && subscribers > 1 {
                    continue;
                }
                for batch in [1, 16] {
                    setups.push(Setup {
                        kind,
                        publishers,
                        subscribers,
                        ring,
                        batch,
                        messages,
                        size: size_of::<Msg64>(),
                    });
                }
            }
        }
    }

    // Message size sweep: raw frames, FIFO 1P1S, 4 MiB ring (room for 1000 of the largest).
    let mut size_setups = Vec::new();
    for size in [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096] {
        for batch in [1, 16] {
            size_setups.push(Setup {
                kind: "RawFifoMpsc",
                publishers: 1,
                subscribers: 1,
                ring: 4 << 20,
                batch,
                messages: (messages * 64 / size as u64).clamp(messages / 8, messages),
                size,
            });
        }
    }

    // Multi-producer stress: more publisher processes than cores, a 64 KiB ring each so
    // offers are refused often (refused publishers yield), every message checked (and the
    // global order, for Ordered).
    let mut stress_setups = Vec::new();
    for kind in ["FifoMpsc", "OrderedMpsc"] {
        for publishers in [4, 8] {
            for batch in [1, 16] {
                stress_setups.push(Setup {
                    kind,
                    publishers,
                    subscribers: 1,
                    ring: STRESS_RING,
                    batch,
                    messages: messages / 20,
                    size: size_of::<Msg64>(),
                });
            }
        }
    }

    let out_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-results");
    std::fs::create_dir_all(&out_dir).unwrap();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let out_path = out_dir.join(format!("ipc-{stamp}.jsonl"));
    let mut out = std::fs::File::create(&out_path).unwrap();
    let command = args.join(" ");
    writeln!(
        out,
        "{{\"machine\":{:?},\"command\":{:?},\"rounds\":{rounds}}}",
        machine(),
        command
    )
    .unwrap();
    println!(
        "salias cross-process benchmark on {}; {rounds} alternating rounds; raw data: {}",
        machine(),
        out_path.display()
    );

    let started = Instant::now();
    let results = run_rounds(
        &setups,
        if run_throughput { rounds } else { 0 },
        "",
        started,
        &mut out,
        |setup, run, round| {
            format!(
                "{{\"bench\":\"throughput\",\"label\":{:?},\"round\":{round},\"messages_per_publisher\":{},\"published_per_s\":{:.0},\"delivered_per_s\":{:.0},\"refused_fraction\":{:.6},\"placement\":{:?}}}",
                setup.label(),
                setup.messages,
                run.published_per_s,
                run.delivered_per_s,
                run.refused,
                run.placement
            )
        },
    );
    println!(
        "\n{:<38} {:>24} {:>24} {:>9}  placement (role@core)",
        "throughput, 64-byte messages", "published M/s med [min,max]", "delivered M/s med [min,max]", "refused"
    );
    for (setup, runs) in setups.iter().zip(&results).filter(|(_, runs)| !runs.is_empty()) {
        let (p, p_min, p_max) = stats(&runs.iter().map(|r| r.published_per_s / 1e6).collect::<Vec<_>>());
        let (d, d_min, d_max) = stats(&runs.iter().map(|r| r.delivered_per_s / 1e6).collect::<Vec<_>>());
        let (refused, _, _) = stats(&runs.iter().map(|r| r.refused * 100.0).collect::<Vec<_>>());
        println!(
            "{:<38} {p:>8.1} [{p_min:>5.1},{p_max:>5.1}] {d:>10.1} [{d_min:>5.1},{d_max:>5.1}] {refused:>8.2}%  {}",
            setup.label(),
            runs[0].placement
        );
    }

    let size_results = run_rounds(
        &size_setups,
        if run_sizes { rounds } else { 0 },
        "size sweep ",
        started,
        &mut out,
        |setup, run, round| {
            format!(
                "{{\"bench\":\"size\",\"label\":{:?},\"round\":{round},\"message_bytes\":{},\"batch\":{},\"messages_per_publisher\":{},\"published_per_s\":{:.0},\"delivered_per_s\":{:.0},\"delivered_bytes_per_s\":{:.0},\"refused_fraction\":{:.6},\"placement\":{:?}}}",
                setup.label(),
                setup.size,
                setup.batch,
                setup.messages,
                run.published_per_s,
                run.delivered_per_s,
                run.delivered_per_s * setup.size as f64,
                run.refused,
                run.placement
            )
        },
    );
    if run_sizes {
        println!(
            "\n{:<42} {:>24} {:>10} {:>9}  placement",
            "message size sweep (raw frames)", "delivered M/s med [min,max]", "GB/s", "refused"
        );
        for (setup, runs) in size_setups.iter().zip(&size_results) {
            let (d, d_min, d_max) = stats(&runs.iter().map(|r| r.delivered_per_s / 1e6).collect::<Vec<_>>());
            let (refused, _, _) = stats(&runs.iter().map(|r| r.refused * 100.0).collect::<Vec<_>>());
            println!(
                "{:<42} {d:>8.1} [{d_min:>5.1},{d_max:>5.1}] {:>10.2} {refused:>8.2}%  {}",
                setup.label(),
                d * setup.size as f64 / 1e3,
                runs[0].placement
            );
        }
    }

    let stress_results = run_rounds(
        &stress_setups,
        if run_stress { rounds } else { 0 },
        "stress ",
        started,
        &mut out,
        |setup, run, round| {
            format!(
                "{{\"bench\":\"stress\",\"label\":{:?},\"round\":{round},\"kind\":{:?},\"publishers\":{},\"batch\":{},\"ring_bytes\":{},\"messages_per_publisher\":{},\"published_per_s\":{:.0},\"delivered_per_s\":{:.0},\"refused_fraction\":{:.6},\"placement\":{:?}}}",
                setup.label(),
                setup.kind,
                setup.publishers,
                setup.batch,
                setup.ring,
                setup.messages,
                run.published_per_s,
                run.delivered_per_s,
                run.refused,
                run.placement
            )
        },
    );
    if run_stress {
        println!(
            "\n{:<42} {:>24} {:>9}  placement",
            "multi-producer stress (64 KiB rings)", "delivered M/s med [min,max]", "refused"
        );
        for (setup, runs) in stress_setups.iter().zip(&stress_results) {
            let (d, d_min, d_max) = stats(&runs.iter().map(|r| r.delivered_per_s / 1e6).collect::<Vec<_>>());
            let (refused, _, _) = stats(&runs.iter().map(|r| r.refused * 100.0).collect::<Vec<_>>());
            println!(
                "{:<42} {d:>8.2} [{d_min:>5.2},{d_max:>5.2}] {refused:>8.2}%  {}",
                setup.label(),
                runs[0].placement
            );
        }
    }

    if !run_latency {
        println!("\nraw data: {}", out_path.display());
        return;
    }
    // Latency, alternating salias and the floor between the same two cores.
    let (a, b) = (core_for("publisher", 0), core_for("subscriber", 0));
    let mut medians = (Vec::new(), Vec::new());
    let mut last = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let mut floor = floor_round_trips(&format!("floor-{}-{round}", std::process::id()), a);
        let mut ipc = salias_round_trips(&format!("pingpong-{}-{round}", std::process::id()), a);
        floor.sort_unstable();
        ipc.sort_unstable();
        medians.0.push(percentile(&floor, 0.5) as f64 / 2.0);
        medians.1.push(percentile(&ipc, 0.5) as f64 / 2.0);
        for (what, sorted) in [("floor", &floor), ("salias", &ipc)] {
            writeln!(
                out,
                "{{\"bench\":\"pingpong\",\"system\":{what:?},\"round\":{round},\"cores\":[{a},{b}],\"one_way_ns\":{{\"p50\":{},\"p90\":{},\"p99\":{},\"p99.9\":{},\"p99.99\":{},\"max\":{},\"count\":{}}}}}",
                percentile(sorted, 0.5) / 2,
                percentile(sorted, 0.9) / 2,
                percentile(sorted, 0.99) / 2,
                percentile(sorted, 0.999) / 2,
                percentile(sorted, 0.9999) / 2,
                sorted[sorted.len() - 1] / 2,
                sorted.len()
            )
            .unwrap();
        }
        last = (floor, ipc);
    }
    let (floor, _, _) = stats(&medians.0);
    let (ipc, ipc_min, ipc_max) = stats(&medians.1);
    println!(
        "\nping-pong between cores {a} and {b}, one way = round trip / 2, {PINGS} pings × {rounds} rounds:\n  cache-line floor p50 {floor:.0} ns; salias 64 B p50 {ipc:.0} ns [{ipc_min:.0}, {ipc_max:.0}] = {:.2}× the floor",
        ipc / floor
    );
    let (_, s) = last;
    println!(
        "  last round, salias one-way ns: p90 {} p99 {} p99.9 {} p99.99 {} max {}",
        percentile(&s, 0.9) / 2,
        percentile(&s, 0.99) / 2,
        percentile(&s, 0.999) / 2,
        percentile(&s, 0.9999) / 2,
        s[s.len() - 1] / 2
    );
    println!("\nraw data: {}", out_path.display());
}
