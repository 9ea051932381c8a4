//! Fixed hot-path workloads for counting instructions with callgrind, which gives the same
//! count for the same binary whatever else the machine is doing. `ROUNDS` (first argument,
//! default 200,000) rounds of one workload:
//!
//! - `pair` (the default, the figure the performance notes have tracked since the
//!   hardening): `offer` + `try_recv` of one 64-byte message on a FifoMpsc and on an
//!   OrderedMpsc;
//! - `single` / `batch`: 16 typed 64-byte messages on a FifoMpsc, published by 16 `offer`s
//!   or by one `offer_batch`, then received by one `drain`;
//! - `recv-batch`: `batch` received by one `recv_batch` instead (what its loop around
//!   `drain` costs; the batch is full, so the strategy's `caught_up` does not run);
//! - `ordered-single` / `ordered-batch`: the same on an OrderedMpsc (what the global
//!   order costs both sides, the publisher alone taking its numbers);
//! - `raw-single` / `raw-batch` with `--size N`: the same with raw frames of N bytes, as
//!   the size sweep of `benches/ipc` sends them;
//! - `fanout`: 16 typed 64-byte messages by `offer`s on a FifoFanout with one tethered
//!   and one lossy subscriber, received by the tethered one's `drain` and the lossy one's
//!   `try_recv`s (what the publisher's overwrite frontier costs, with its refreshes).
//!
//! `--ring BYTES` sets the ring of the 16-message workloads, to see with cachegrind
//! (`--tool=cachegrind --cache-sim=yes`) what a ring larger than a cache costs per message.
//!
//! Compare two commits (or two workloads) by the difference between two round counts,
//! which cancels the setup:
//!
//! ```text
//! RUSTFLAGS="--cfg rustix_use_libc" cargo build --release --bench instructions
//! for n in 100000 200000; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/deps/instructions-* $n --workload batch 2>&1 | grep Collected
//! done
//! ```
//!
//! (`rustix_use_libc`: rustix's raw auxv reader does not run under valgrind.)
//!
//! Each workload is a function of its own, never inlined into `main`: inlined there, a
//! change to the typed subscriber moved the raw workloads' counts, whose code it did not
//! touch, by up to 10 instructions a message (`main`'s registers allocated differently;
//! doc/performance-notes.md).

use clap::{Parser, ValueEnum};
use salias::{
    Bytes, Channel, Config, Fifo, FifoFanout, FifoMpsc, Mpsc, Ordered, OrderedMpsc, Publisher, RawFifoMpsc,
    SaliasMessage, Subscriber, config::RawChannel, kind::Mode,
};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Tick {
    seq: u64,
    words: [u64; 7],
}

/// Messages per round of the batch workloads: the batch size `benches/ipc` measures.
const BATCH: usize = 16;

#[derive(Parser)]
struct Cli {
    /// Rounds of the workload.
    #[arg(default_value_t = 200_000)]
    rounds: u64,
    /// What one round does.
    #[arg(long, value_enum, default_value_t = Workload::Pair)]
    workload: Workload,
    /// Payload bytes of the raw workloads.
    #[arg(long, default_value_t = 64)]
    size: usize,
    /// Ring bytes of the 16-message workloads (default: the channel's default).
    #[arg(long)]
    ring: Option<usize>,
    /// Passed by `cargo bench`; changes nothing.
    #[arg(long, hide = true)]
    bench: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Workload {
    Pair,
    Single,
    Batch,
    RecvBatch,
    OrderedSingle,
    OrderedBatch,
    RawSingle,
    RawBatch,
    Fanout,
}

fn main() {
    let cli = Cli::parse();
    let name = format!("instructions-{}", std::process::id());
    let sum = match cli.workload {
        Workload::Pair => pair(&name, cli.rounds),
        Workload::Single | Workload::Batch | Workload::RecvBatch => typed::<Fifo>(
            &config(&name, cli.ring),
            cli.rounds,
            cli.workload != Workload::Single,
            cli.workload == Workload::RecvBatch,
        ),
        Workload::OrderedSingle | Workload::OrderedBatch => typed::<Ordered>(
            &config(&name, cli.ring),
            cli.rounds,
            cli.workload == Workload::OrderedBatch,
            false,
        ),
        Workload::RawSingle | Workload::RawBatch => raw(
            config(&name, cli.ring).max_message_size(cli.size),
            cli.rounds,
            cli.size,
            cli.workload == Workload::RawBatch,
        ),
        Workload::Fanout => fanout(&config(&name, cli.ring), cli.rounds),
    };
    println!("{} rounds, checksum {sum}", cli.rounds);
}

fn config(name: &str, ring: Option<usize>) -> Config {
    let config = Config::new(name);
    match ring {
        Some(bytes) => config.capacity(bytes),
        None => config,
    }
}

/// `offer` + `try_recv` on FIFO, then on Ordered; returns the sum of the sequence numbers.
#[inline(never)]
fn pair(name: &str, rounds: u64) -> u64 {
    let fifo = FifoMpsc::<Tick>::create(&Config::new(name)).unwrap();
    let ordered = OrderedMpsc::<Tick>::create(&Config::new(format!("{name}-ordered"))).unwrap();
    let (mut fifo_publisher, mut fifo_subscriber) = (fifo.publisher().unwrap(), fifo.subscriber().unwrap());
    let (mut ordered_publisher, mut ordered_subscriber) = (ordered.publisher().unwrap(), ordered.subscriber().unwrap());
    let mut sum = 0u64;
    for seq in 0..rounds {
        fifo_publisher.offer(&Tick { seq, words: [seq; 7] }).unwrap();
        sum += fifo_subscriber.try_recv().unwrap().unwrap().seq;
        ordered_publisher.offer(&Tick { seq, words: [seq; 7] }).unwrap();
        sum += ordered_subscriber.try_recv().unwrap().unwrap().seq;
    }
    assert_eq!(sum, rounds * (rounds - 1));
    sum
}

/// 16 typed messages a round, by `offer`s or one `offer_batch`, received by one `drain`
/// (or one `recv_batch`).
#[inline(never)]
fn typed<M: Mode>(config: &Config, rounds: u64, batched: bool, by_recv_batch: bool) -> u64 {
    let channel = Channel::<Tick, M, Mpsc>::create(config).unwrap();
    let (mut publisher, mut subscriber): (Publisher<Tick, M>, Subscriber<Tick, M>) =
        (channel.publisher().unwrap(), channel.subscriber().unwrap());
    let mut batch = [Tick { seq: 0, words: [0; 7] }; BATCH];
    let mut sum = 0u64;
    for round in 0..rounds {
        for (i, tick) in batch.iter_mut().enumerate() {
            let seq = round * BATCH as u64 + i as u64;
            *tick = Tick { seq, words: [seq; 7] };
        }
        if batched {
            assert_eq!(publisher.offer_batch(&batch).unwrap(), BATCH);
        } else {
            for tick in &batch {
                publisher.offer(tick).unwrap();
            }
        }
        let polled = if by_recv_batch {
            subscriber.recv_batch(BATCH, |_, tick| sum += tick.seq)
        } else {
            subscriber.drain(BATCH, |_, tick| sum += tick.seq)
        };
        assert_eq!(polled.unwrap(), BATCH);
    }
    let messages = rounds * BATCH as u64;
    assert_eq!(sum, messages * (messages - 1) / 2);
    sum
}

/// 16 raw frames of `size` bytes a round (the sequence number in their first bytes, as
/// many as fit), by `offer`s or one `offer_batch`, received by one `drain`.
#[inline(never)]
fn raw(config: Config<RawChannel>, rounds: u64, size: usize, batched: bool) -> u64 {
    let channel = RawFifoMpsc::create(&config).unwrap();
    let (mut publisher, mut subscriber): (Publisher<Bytes>, Subscriber<Bytes>) =
        (channel.publisher().unwrap(), channel.subscriber().unwrap());
    let mut frames = vec![vec![0u8; size]; BATCH];
    let head = size.min(8);
    let mut sum = 0u64;
    for round in 0..rounds {
        for (i, frame) in frames.iter_mut().enumerate() {
            let seq = round * BATCH as u64 + i as u64;
            frame[..head].copy_from_slice(&seq.to_le_bytes()[..head]);
        }
        if batched {
            assert_eq!(publisher.offer_batch(&frames).unwrap(), BATCH);
        } else {
            for frame in &frames {
                publisher.offer(frame).unwrap();
            }
        }
        let polled = subscriber
            .drain(BATCH, |_, frame| {
                let mut seq = [0u8; 8];
                seq[..head].copy_from_slice(&frame[..head]);
                sum = sum.wrapping_add(u64::from_le_bytes(seq));
            })
            .unwrap();
        assert_eq!(polled, BATCH);
    }
    sum
}

/// 16 typed messages a round by `offer`s on a Fanout channel, received by a tethered
/// subscriber's `drain` and by a lossy subscriber's `try_recv`s, which keep up (no loss).
#[inline(never)]
fn fanout(config: &Config, rounds: u64) -> u64 {
    let channel = FifoFanout::<Tick>::create(config).unwrap();
    let mut tethered = channel.subscriber().unwrap();
    let mut lossy = channel.lossy_subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut sum = 0u64;
    for round in 0..rounds {
        for i in 0..BATCH as u64 {
            let seq = round * BATCH as u64 + i;
            publisher.offer(&Tick { seq, words: [seq; 7] }).unwrap();
        }
        assert_eq!(tethered.drain(BATCH, |_, tick| sum += tick.seq).unwrap(), BATCH);
        while let Some(copy) = lossy.try_recv().unwrap() {
            sum += copy.seq;
        }
    }
    // Not asserted, so that an engine that counts losses here can be measured too.
    eprintln!("fanout: the lossy subscriber missed {} messages", lossy.missed());
    sum
}
