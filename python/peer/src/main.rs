//! The Rust side of the Python package's cross-language tests and benchmark: publishes or
//! receives the messages `tests/conftest.py` expects, on a channel of any kind, typed
//! (`Quote`) or raw, and reports what it did as one line of JSON-like `key=value` pairs.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use salias::kind::{Mode, Topology};
use salias::{Bytes, Channel, Fanout, Fifo, Mpsc, Ordered, ReceiveError, SaliasMessage, Subscriber};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// The typed message of the tests: `QUOTE` in `tests/conftest.py` is its dtype.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
#[salias(version = 1)]
struct Quote {
    instrument: u64,
    bid: f64,
    ask: f64,
    venue: [u8; 4],
    size: u32,
}

impl Quote {
    /// Message `i` of a stream.
    fn nth(i: u64) -> Quote {
        Quote {
            instrument: i,
            bid: i as f64 * 0.5,
            ask: i as f64 * 0.5 + 0.25,
            venue: *b"XNAS",
            size: (i % 1000) as u32,
        }
    }
}

/// The benchmark's 64-byte message: its sequence number and seven words.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Tick {
    seq: u64,
    words: [u64; 7],
}

impl Tick {
    fn nth(i: u64) -> Tick {
        Tick {
            seq: i,
            words: [i ^ 0x5555_5555_5555_5555; 7],
        }
    }
}

/// Raw message `i` of a stream: `i` as 8 little-endian bytes, then `i % 64` bytes counting
/// up from `i`.
fn raw_nth(i: u64) -> Vec<u8> {
    let mut bytes = i.to_le_bytes().to_vec();
    bytes.extend((0..i % 64).map(|k| (i + k) as u8));
    bytes
}

#[derive(Clone, Copy, ValueEnum)]
enum Kind {
    FifoMpsc,
    FifoFanout,
    OrderedMpsc,
    OrderedFanout,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Role {
    /// Connects and sends `--count` messages (waiting for room), then exits.
    Publish,
    /// Connects, says `ready`, receives `--count` messages checking each (or, with
    /// `--until-gone`, until every publisher has gone), then reports.
    Subscribe,
    /// As subscribe, and times the stream: the benchmark's Rust subscriber.
    Drain,
    /// The benchmark's calibration: a cache line bounced between threads on cores 0 and 1,
    /// nanoseconds per round trip (what moving data between the two cores costs now).
    Floor,
}

#[derive(Parser)]
struct Args {
    role: Role,
    #[arg(long, value_enum)]
    kind: Kind,
    #[arg(long)]
    name: String,
    #[arg(long, default_value_t = 1000)]
    count: u64,
    /// `Quote` messages; raw bytes without it.
    #[arg(long)]
    typed: bool,
    /// `Tick` messages (64 bytes): the benchmark's.
    #[arg(long, conflicts_with = "typed")]
    tick: bool,
    /// Receive until every publisher has gone, checking order, instead of `--count`.
    #[arg(long)]
    until_gone: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.role == Role::Floor {
        println!("floor_ns={:.1}", floor());
        return ExitCode::SUCCESS;
    }
    let result = match args.kind {
        Kind::FifoMpsc => run::<Fifo, Mpsc>(&args),
        Kind::FifoFanout => run::<Fifo, Fanout>(&args),
        Kind::OrderedMpsc => run::<Ordered, Mpsc>(&args),
        Kind::OrderedFanout => run::<Ordered, Fanout>(&args),
    };
    match result {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("peer: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run<M: Mode, K: Topology>(args: &Args) -> Result<String, String> {
    if args.tick {
        let channel = Channel::<Tick, M, K>::connect(&args.name).map_err(|e| e.to_string())?;
        if args.role == Role::Publish {
            let mut publisher = channel.publisher().map_err(|e| e.to_string())?;
            println!("ready");
            let started = Instant::now();
            // In batches of 256, so that what a benchmark measures is its subscriber.
            let mut batch = [Tick::nth(0); 256];
            let mut i = 0;
            while i < args.count {
                let n = (args.count - i).min(256) as usize;
                for (k, tick) in batch[..n].iter_mut().enumerate() {
                    *tick = Tick::nth(i + k as u64);
                }
                let mut done = 0;
                while done < n {
                    match publisher.offer_batch(&batch[done..n]) {
                        Ok(count) => done += count,
                        Err(salias::PublishError::Backpressured) => std::hint::spin_loop(),
                        Err(error) => return Err(error.to_string()),
                    }
                }
                i += n as u64;
            }
            let rate = args.count as f64 / started.elapsed().as_secs_f64();
            return Ok(format!("published={} rate={rate:.0}", args.count));
        }
        let subscriber = channel.subscriber().map_err(|e| e.to_string())?;
        if args.role == Role::Drain {
            return drain_ticks(args, subscriber);
        }
        return receive(args, subscriber, |i, tick: &Tick| tick.seq == i);
    }
    match (args.role, args.typed) {
        (Role::Publish, true) => {
            let channel = Channel::<Quote, M, K>::connect(&args.name).map_err(|e| e.to_string())?;
            let mut publisher = channel.publisher().map_err(|e| e.to_string())?;
            for i in 0..args.count {
                publisher.send(&Quote::nth(i)).map_err(|e| e.to_string())?;
            }
            Ok(format!("published={}", args.count))
        }
        (Role::Publish, false) => {
            let channel = Channel::<Bytes, M, K>::connect(&args.name).map_err(|e| e.to_string())?;
            let mut publisher = channel.publisher().map_err(|e| e.to_string())?;
            for i in 0..args.count {
                publisher.send(&raw_nth(i)).map_err(|e| e.to_string())?;
            }
            Ok(format!("published={}", args.count))
        }
        (_, true) => {
            let channel = Channel::<Quote, M, K>::connect(&args.name).map_err(|e| e.to_string())?;
            let subscriber = channel.subscriber().map_err(|e| e.to_string())?;
            receive(args, subscriber, |i, quote: &Quote| *quote == Quote::nth(i))
        }
        (_, false) => {
            let channel = Channel::<Bytes, M, K>::connect(&args.name).map_err(|e| e.to_string())?;
            let subscriber = channel.subscriber().map_err(|e| e.to_string())?;
            receive(args, subscriber, |i, bytes: &[u8]| bytes == raw_nth(i))
        }
    }
}

/// Receives `--count` messages (or until every publisher has gone) and checks message `i`
/// with `expected`.
fn receive<T: salias::message::Payload, M: Mode, K: Topology>(
    args: &Args,
    mut subscriber: Subscriber<T, M, K>,
    expected: impl Fn(u64, &<Subscriber<T, M, K> as Received>::Item) -> bool,
) -> Result<String, String>
where
    Subscriber<T, M, K>: Received,
{
    println!("ready");
    let mut next = 0;
    let mut started = None;
    while args.until_gone || next < args.count {
        match subscriber.next_checked(&mut |item| {
            if !expected(next, item) {
                return Err(format!("message {next} is not the one sent"));
            }
            Ok(())
        }) {
            Ok(()) => {
                started.get_or_insert_with(Instant::now);
                next += 1;
            }
            Err(Next::Gone) => break,
            Err(Next::Failed(error)) => return Err(error),
        }
    }
    let elapsed = started.map_or(Duration::ZERO, |started| started.elapsed());
    let rate = if args.role == Role::Drain && next > 1 {
        format!(" rate={:.0}", (next - 1) as f64 / elapsed.as_secs_f64())
    } else {
        String::new()
    };
    Ok(format!("received={next}{rate}"))
}

/// Nanoseconds per round trip of a cache line between cores 0 and 1 (median of 15 runs
/// of 20,000 round trips).
fn floor() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    const TRIPS: u64 = 20_000;
    let pin = |core: usize| {
        // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside it, and
        // sched_setaffinity reads `size_of` bytes of it for the calling thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(core, &mut set);
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set);
        }
    };
    let line = AtomicU64::new(0);
    let mut runs: Vec<f64> = (0..15)
        .map(|_| {
            line.store(0, Ordering::SeqCst);
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    pin(1);
                    for trip in 0..TRIPS {
                        while line.load(Ordering::Acquire) != 2 * trip + 1 {}
                        line.store(2 * trip + 2, Ordering::Release);
                    }
                });
                pin(0);
                let started = Instant::now();
                for trip in 0..TRIPS {
                    line.store(2 * trip + 1, Ordering::Release);
                    while line.load(Ordering::Acquire) != 2 * trip + 2 {}
                }
                started.elapsed().as_nanos() as f64 / TRIPS as f64
            })
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

/// The benchmark's Rust subscriber: drains in batches of 4096, as the Python one does,
/// checking every sequence number, and times the stream from its first message.
fn drain_ticks<M: Mode, K: Topology>(args: &Args, mut subscriber: Subscriber<Tick, M, K>) -> Result<String, String> {
    println!("ready");
    let mut next = 0;
    let mut in_order = true;
    let mut started = None;
    let mut first = 0;
    while next < args.count {
        let got = subscriber
            .drain(4096, |_, tick| {
                in_order &= tick.seq == next;
                next += 1;
            })
            .map_err(|e| e.to_string())?;
        if got != 0 && started.is_none() {
            started = Some(Instant::now());
            first = next;
        }
        if !in_order {
            return Err(format!("a message before {next} is not the one sent"));
        }
    }
    let elapsed = started.map_or(Duration::ZERO, |started| started.elapsed());
    let rate = (next - first) as f64 / elapsed.as_secs_f64();
    Ok(format!("received={next} rate={rate:.0}"))
}

enum Next {
    Gone,
    Failed(String),
}

/// One blocking receive, typed or raw, with the message lent to a check.
trait Received {
    type Item: ?Sized;
    fn next_checked(&mut self, check: &mut dyn FnMut(&Self::Item) -> Result<(), String>) -> Result<(), Next>;
}

fn gone_or_failed(error: ReceiveError) -> Next {
    match error {
        ReceiveError::Disconnected => Next::Gone,
        error => Next::Failed(error.to_string()),
    }
}

macro_rules! received_typed {
    ($($t:ty),*) => {$(
        impl<M: Mode, K: Topology> Received for Subscriber<$t, M, K> {
            type Item = $t;
            fn next_checked(&mut self, check: &mut dyn FnMut(&$t) -> Result<(), String>) -> Result<(), Next> {
                let message = self.recv().map_err(gone_or_failed)?;
                check(&message).map_err(Next::Failed)
            }
        }
    )*};
}

received_typed!(Quote, Tick);

impl<M: Mode, K: Topology> Received for Subscriber<Bytes, M, K> {
    type Item = [u8];
    fn next_checked(&mut self, check: &mut dyn FnMut(&[u8]) -> Result<(), String>) -> Result<(), Next> {
        let message = self.recv().map_err(gone_or_failed)?;
        check(&message).map_err(Next::Failed)
    }
}
