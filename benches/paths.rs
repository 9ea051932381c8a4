//! Divan micro-benchmarks of the publish and receive paths on their own, in one process:
//! `offer`, `offer_batch`, `drain` and `try_recv` for every kind, 256 messages per
//! iteration. The other side's work (draining before a publish, filling before a
//! receive) runs outside the timer, and every iteration checks that all 256 went through.
//!
//! Run: `cargo bench --bench paths`. For the cost across cores, see `benches/ipc/`.

use std::cell::RefCell;

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use salias::{Channel, Config, Fanout, Fifo, Mpsc, Ordered, Publisher, Subscriber, kind::Mode, kind::Topology};

#[path = "common/msg64.rs"]
mod msg64;
use msg64::Msg64;

fn main() {
    divan::main();
}

const PER_ITERATION: usize = 256;
const BATCH: usize = 16;

/// One channel with both ends, reused across iterations so no iteration pays for setup.
struct Ends<M: Mode, K: Topology> {
    publisher: Publisher<Msg64, M, K>,
    subscriber: Subscriber<Msg64, M, K>,
    _channel: Channel<Msg64, M, K>,
}

impl<M: Mode, K: Topology> Ends<M, K> {
    fn new(path: &str) -> RefCell<Self> {
        let name = format!("paths-{path}-{}{}-{}", M::NAME, K::NAME, std::process::id());
        let channel = Channel::<Msg64, M, K>::create(&Config::new(name).capacity(1 << 20)).unwrap();
        RefCell::new(Ends {
            subscriber: channel.subscriber().unwrap(),
            publisher: channel.publisher().unwrap(),
            _channel: channel,
        })
    }

    fn drain(&mut self) {
        while self.subscriber.drain(PER_ITERATION, |_, _| {}).unwrap() > 0 {}
    }

    fn fill(&mut self) {
        for seq in 0..PER_ITERATION as u64 {
            self.publisher.offer(&Msg64::new(0, seq)).unwrap();
        }
    }
}

fn offer<M: Mode, K: Topology>(bencher: Bencher) {
    let ends = Ends::<M, K>::new("offer");
    bencher
        .counter(ItemsCount::new(PER_ITERATION))
        .with_inputs(|| ends.borrow_mut().drain())
        .bench_local_values(|()| {
            let publisher = &mut ends.borrow_mut().publisher;
            for seq in 0..PER_ITERATION as u64 {
                publisher.offer(black_box(&Msg64::new(0, seq))).unwrap();
            }
        });
}

fn offer_batch<M: Mode, K: Topology>(bencher: Bencher) {
    let ends = Ends::<M, K>::new("batch");
    let batches: Vec<[Msg64; BATCH]> = (0..PER_ITERATION / BATCH)
        .map(|b| std::array::from_fn(|i| Msg64::new(0, (b * BATCH + i) as u64)))
        .collect();
    bencher
        .counter(ItemsCount::new(PER_ITERATION))
        .with_inputs(|| ends.borrow_mut().drain())
        .bench_local_values(|()| {
            let publisher = &mut ends.borrow_mut().publisher;
            for batch in &batches {
                assert_eq!(publisher.offer_batch(black_box(batch)).unwrap(), BATCH);
            }
        });
}

fn drain<M: Mode, K: Topology>(bencher: Bencher) {
    let ends = Ends::<M, K>::new("drain");
    bencher
        .counter(ItemsCount::new(PER_ITERATION))
        .with_inputs(|| ends.borrow_mut().fill())
        .bench_local_values(|()| {
            let mut sum = 0u64;
            let received = ends
                .borrow_mut()
                .subscriber
                .drain(PER_ITERATION, |_, m| sum += m.seq)
                .unwrap();
            assert_eq!(received, PER_ITERATION);
            assert_eq!(sum, (PER_ITERATION * (PER_ITERATION - 1) / 2) as u64);
        });
}

fn try_recv<M: Mode, K: Topology>(bencher: Bencher) {
    let ends = Ends::<M, K>::new("try_recv");
    bencher
        .counter(ItemsCount::new(PER_ITERATION))
        .with_inputs(|| ends.borrow_mut().fill())
        .bench_local_values(|()| {
            let subscriber = &mut ends.borrow_mut().subscriber;
            for seq in 0..PER_ITERATION as u64 {
                let message = subscriber.try_recv().unwrap().expect("filled before the timer");
                assert_eq!(black_box(message.seq), seq);
            }
            subscriber.release_all();
        });
}

macro_rules! kinds {
    ($($module:ident: $mode:ty, $topology:ty;)*) => {$(
        mod $module {
            use super::*;
            #[divan::bench]
            fn offer(bencher: Bencher) { super::offer::<$mode, $topology>(bencher) }
            #[divan::bench]
            fn offer_batch_16(bencher: Bencher) { super::offer_batch::<$mode, $topology>(bencher) }
            #[divan::bench]
            fn drain(bencher: Bencher) { super::drain::<$mode, $topology>(bencher) }
            #[divan::bench]
            fn try_recv(bencher: Bencher) { super::try_recv::<$mode, $topology>(bencher) }
        }
    )*};
}

kinds! {
    fifo_mpsc: Fifo, Mpsc;
    fifo_fanout: Fifo, Fanout;
    ordered_mpsc: Ordered, Mpsc;
    ordered_fanout: Ordered, Fanout;
}
