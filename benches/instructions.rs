//! A fixed hot-path workload for counting instructions with callgrind, which gives the
//! same count for the same binary whatever else the machine is doing: `offer` + `try_recv`
//! of one 64-byte message on a FifoMpsc and on an OrderedMpsc, `ROUNDS` times (first
//! argument, default 200,000). Compare two commits by the difference between two round
//! counts, which cancels the setup:
//!
//! ```text
//! RUSTFLAGS="--cfg rustix_use_libc" cargo build --release --bench instructions
//! for n in 100000 200000; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/deps/instructions-* $n 2>&1 | grep Collected
//! done
//! ```
//!
//! (`rustix_use_libc`: rustix's raw auxv reader does not run under valgrind.)

use salias::{Config, FifoMpsc, OrderedMpsc, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Tick {
    seq: u64,
    words: [u64; 7],
}

fn main() {
    let rounds: u64 = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(200_000);
    let name = format!("instructions-{}", std::process::id());
    let fifo = FifoMpsc::<Tick>::create(&Config::new(&name)).unwrap();
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
    println!("{rounds} rounds");
}
