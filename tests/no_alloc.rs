//! The hot paths allocate nothing: a counting global allocator watches every publish and
//! receive path after setup.

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use std::time::{Duration, Instant};

use salias::{
    Channel, Config, Fanout, FifoFanout, FifoMpsc, Ordered, PublishError, RawFifoMpsc, SaliasMessage, kind::Mode,
    kind::Topology,
};
use support::{HOLDER_ROLE, HeldNumber, role, unique_name};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; only counts calls on this thread.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(work: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    work();
    ALLOCATIONS.with(Cell::get) - before
}

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Tick {
    seq: u64,
    words: [u64; 7],
}

const ROUNDS: u64 = 100_000;

fn typed_hot_paths<M: Mode, K: Topology>() {
    let config = Config::new(unique_name(&format!("alloc-{}{}", M::NAME, K::NAME))).capacity(64 * 1024);
    let channel = Channel::<Tick, M, K>::create(&config).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let batch = [Tick { seq: 0, words: [1; 7] }; 8];
    let mut sum = 0u64;
    // Boxed here, outside the count; its `caught_up` runs on every short `recv_batch`.
    subscriber.set_wait_strategy(salias::wait::Batching::default());
    let allocations = allocations_during(|| {
        for seq in 0..ROUNDS {
            publisher.offer(&Tick { seq, words: [seq; 7] }).unwrap();
            sum += subscriber.try_recv().unwrap().unwrap().seq;

            let mut claim = publisher.claim().unwrap();
            claim.seq = seq;
            claim.commit();
            let _abandoned_at_once = publisher.claim().unwrap();
            sum += subscriber.recv().unwrap().seq;

            assert_eq!(publisher.offer_batch(&batch).unwrap(), 8);
            subscriber.drain(8, |_, tick| sum += tick.seq).unwrap();
            assert_eq!(publisher.offer_batch(&batch).unwrap(), 8);
            assert_eq!(subscriber.recv_batch(16, |_, tick| sum += tick.seq).unwrap(), 8);

            publisher.send(&Tick { seq, words: [0; 7] }).unwrap();
            sum += subscriber.recv_timeout(std::time::Duration::from_secs(1)).unwrap().seq;
            assert!(subscriber.try_recv().unwrap().is_none());
        }
    });
    assert_eq!(allocations, 0, "{}{}", M::NAME, K::NAME);
    assert_eq!(sum, 3 * (ROUNDS * (ROUNDS - 1) / 2));
}

#[test]
fn typed_hot_paths_do_not_allocate() {
    typed_hot_paths::<salias::Fifo, salias::Mpsc>();
    typed_hot_paths::<salias::Fifo, Fanout>();
    typed_hot_paths::<Ordered, salias::Mpsc>();
    typed_hot_paths::<Ordered, Fanout>();
}

#[test]
fn backpressure_and_empty_paths_do_not_allocate() {
    let channel = FifoMpsc::<Tick>::create(&Config::new(unique_name("alloc-bp")).capacity(4096)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let tick = Tick { seq: 1, words: [0; 7] };
    let allocations = allocations_during(|| {
        for _ in 0..1_000 {
            while publisher.offer(&tick).is_ok() {}
            assert_eq!(publisher.offer(&tick), Err(PublishError::Backpressured));
            while subscriber.try_recv().unwrap().is_some() {}
        }
    });
    assert_eq!(allocations, 0);
}

#[test]
fn raw_hot_paths_do_not_allocate() {
    let channel = RawFifoMpsc::create(&Config::new(unique_name("alloc-raw")).capacity(64 * 1024)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let payload = [5u8; 300];
    let batch = [&payload[..10], &payload[..200], &payload[..]];
    let mut bytes = 0usize;
    let allocations = allocations_during(|| {
        for round in 0..ROUNDS as usize {
            publisher.offer(&payload[..round % 300]).unwrap();
            bytes += subscriber.try_recv().unwrap().unwrap().len();

            let mut claim = publisher.claim(300).unwrap();
            claim[0] = 1;
            claim.commit_len(17).unwrap();
            bytes += subscriber.recv().unwrap().len();

            assert_eq!(publisher.offer_batch(&batch).unwrap(), 3);
            subscriber.drain(3, |_, message| bytes += message.len()).unwrap();

            assert_eq!(publisher.offer_packed(&payload[..240], 80).unwrap(), 3);
            subscriber.drain(3, |_, message| bytes += message.len()).unwrap();
        }
    });
    assert_eq!(allocations, 0);
    let offered: usize = (0..ROUNDS as usize).map(|round| round % 300).sum();
    assert_eq!(bytes, offered + ROUNDS as usize * (17 + 10 + 200 + 300 + 240));
}

/// Long enough for many liveness checks, which run at most once a millisecond.
const LIVENESS_SPAN: Duration = Duration::from_millis(25);
/// Calls made at least, however fast they run.
const MIN_CALLS: u64 = 100_000;

/// Calls `call` until both `MIN_CALLS` calls and `LIVENESS_SPAN` have gone by.
fn for_many_liveness_checks(mut call: impl FnMut()) {
    let started = Instant::now();
    let mut calls = 0u64;
    while calls < MIN_CALLS || started.elapsed() < LIVENESS_SPAN {
        call();
        calls += 1;
    }
}

#[test]
fn backpressured_fanout_publisher_checking_liveness_does_not_allocate() {
    let channel = FifoFanout::<Tick>::create(&Config::new(unique_name("alloc-fanout-bp")).capacity(4096)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let _never_reads = channel.subscriber().unwrap();
    let tick = Tick { seq: 1, words: [0; 7] };
    while publisher.offer(&tick).is_ok() {}
    let allocations = allocations_during(|| {
        // Each refused offer may look for a dead subscriber (every REAP_INTERVAL).
        for_many_liveness_checks(|| assert_eq!(publisher.offer(&tick), Err(PublishError::Backpressured)));
    });
    assert_eq!(allocations, 0);
}

#[test]
fn ordered_subscriber_waiting_on_a_held_number_does_not_allocate() {
    const TEST: &str = "ordered_subscriber_waiting_on_a_held_number_does_not_allocate";
    if role().as_deref() == Some(HOLDER_ROLE) {
        support::hold_next_number();
    }
    let mut held = HeldNumber::new(TEST);
    let allocations = allocations_during(|| {
        // Each empty poll may check the holder's health (every HEALTH_INTERVAL).
        for_many_liveness_checks(|| assert!(matches!(held.subscriber.try_recv(), Ok(None))));
    });
    assert_eq!(allocations, 0);
    assert_eq!(
        held.subscriber.gaps().events,
        0,
        "a gap declared while its holder lives"
    );
    held.kill_holder_then_expect_gap();
}
