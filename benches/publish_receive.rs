//! The cost of salias's code paths in one thread: publish then receive, per message, for
//! every kind, single offers and batches. No core crossing is involved, so these figures
//! are the floor of the engine's own work, not cross-process throughput (that is the
//! cross-process harness's job).
//!
//! Run: `cargo bench --bench publish_receive`
//!
//! Following doc/benchmarking.md: the variants run alternately, round by round; each round
//! rebuilds nothing it times, checks a checksum, and the report is the median with min
//! and max over the rounds.

use std::time::Instant;

use salias::{Channel, Config, Fanout, Fifo, Mpsc, Ordered, kind::Mode, kind::Topology};

#[path = "common/msg64.rs"]
mod msg64;
use msg64::Msg64;

const MESSAGES: u64 = 5_000_000;
const ROUNDS: usize = 7;
const BATCH: usize = 16;

struct Variant {
    label: String,
    run: Box<dyn FnMut() -> f64>,
    samples: Vec<f64>,
}

/// ns per message for `MESSAGES` messages published (singly or in batches) and polled.
fn variant<M: Mode, K: Topology>(batched: bool) -> Variant {
    let name = format!("bench-{}{}-{}-{}", M::NAME, K::NAME, batched, std::process::id());
    let channel = Channel::<Msg64, M, K>::create(&Config::new(&name).capacity(1 << 20)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    let run = move || {
        let _keep = &channel;
        let mut checksum = 0u64;
        let mut batch = [Msg64::new(0, 0); BATCH];
        let start = Instant::now();
        let mut seq = 0;
        while seq < MESSAGES {
            if batched {
                for message in batch.iter_mut() {
                    message.seq = seq;
                    seq += 1;
                }
                assert_eq!(publisher.offer_batch(&batch).unwrap(), BATCH);
            } else {
                for _ in 0..BATCH {
                    publisher.offer(&Msg64::new(0, seq)).unwrap();
                    seq += 1;
                }
            }
            subscriber.drain(BATCH, |_, m| checksum += m.seq).unwrap();
        }
        let elapsed = start.elapsed();
        assert_eq!(checksum, MESSAGES * (MESSAGES - 1) / 2, "every message received once");
        elapsed.as_nanos() as f64 / MESSAGES as f64
    };
    Variant {
        label: format!(
            "{}{} {}",
            M::NAME,
            K::NAME,
            if batched { "offer_batch(16)" } else { "offer" }
        ),
        run: Box::new(run),
        samples: Vec::new(),
    }
}

fn main() {
    let mut variants = vec![
        variant::<Fifo, Mpsc>(false),
        variant::<Fifo, Mpsc>(true),
        variant::<Fifo, Fanout>(false),
        variant::<Ordered, Mpsc>(false),
        variant::<Ordered, Mpsc>(true),
        variant::<Ordered, Fanout>(false),
    ];
    // A warm-up round, then alternate the variants round by round.
    for variant in variants.iter_mut() {
        (variant.run)();
    }
    for _ in 0..ROUNDS {
        for variant in variants.iter_mut() {
            let sample = (variant.run)();
            variant.samples.push(sample);
        }
    }
    let baseline = median(&variants[0].samples);
    println!("publish + receive in one thread, 64-byte messages, {MESSAGES} per round, {ROUNDS} rounds");
    println!(
        "{:<28} {:>10} {:>10} {:>10} {:>10}",
        "variant", "median ns", "min", "max", "vs first"
    );
    for variant in &variants {
        let m = median(&variant.samples);
        let min = variant.samples.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = variant.samples.iter().cloned().fold(0.0, f64::max);
        println!(
            "{:<28} {m:>10.2} {min:>10.2} {max:>10.2} {:>9.2}x",
            variant.label,
            m / baseline
        );
    }
}

fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    sorted[sorted.len() / 2]
}
