//! `recv_batch`: waits for the first message, hands out up to its maximum, and tells the
//! wait strategy when a batch came back short (the subscriber caught up), which is where
//! `wait::Batching` pauses.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use salias::wait::{Park, WaitStrategy};
use salias::{Config, FifoMpsc, RawFifoMpsc, ReceiveError, SaliasMessage};
use support::unique_name;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Tick {
    seq: u64,
}

/// Counts the calls a receive makes to its strategy, and spins as `BusySpin` does.
#[derive(Clone, Default)]
struct Counting {
    waits: Arc<AtomicU32>,
    caught_up: Arc<AtomicU32>,
}

impl WaitStrategy for Counting {
    fn wait(&mut self, _idle: u32, _park: &mut Park<'_>) {
        self.waits.fetch_add(1, Ordering::SeqCst);
        std::hint::spin_loop();
    }

    fn caught_up(&mut self) {
        self.caught_up.fetch_add(1, Ordering::SeqCst);
    }
}

/// Five committed, taken two at a time: two full batches, then one of one, which alone
/// tells the strategy it caught up; no call waited.
#[test]
fn only_a_short_batch_tells_the_strategy_it_caught_up() {
    let channel = FifoMpsc::<Tick>::create(&Config::new(unique_name("recv-batch-short"))).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let counting = Counting::default();
    subscriber.set_wait_strategy(counting.clone());
    for seq in 0..5 {
        publisher.offer(&Tick { seq }).unwrap();
    }
    let mut seen = Vec::new();
    let mut sizes = Vec::new();
    for _ in 0..3 {
        sizes.push(subscriber.recv_batch(2, |_, tick| seen.push(tick.seq)).unwrap());
        sizes.push(counting.caught_up.load(Ordering::SeqCst) as usize);
    }
    // Batch sizes interleaved with the caught-up count after each.
    assert_eq!(sizes, [2, 0, 2, 0, 1, 1]);
    assert_eq!(seen, [0, 1, 2, 3, 4]);
    assert_eq!(counting.waits.load(Ordering::SeqCst), 0);
}

/// On an empty channel the call waits with the strategy until a message is committed
/// (here only once it has waited), then hands it out.
#[test]
fn an_empty_channel_waits_for_the_first_message() {
    let channel = FifoMpsc::<Tick>::create(&Config::new(unique_name("recv-batch-wait"))).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let counting = Counting::default();
    subscriber.set_wait_strategy(counting.clone());
    let waits = counting.waits.clone();
    std::thread::scope(|s| {
        s.spawn(move || {
            while waits.load(Ordering::SeqCst) == 0 {
                std::hint::spin_loop();
            }
            publisher.offer(&Tick { seq: 7 }).unwrap();
        });
        let mut seen = Vec::new();
        let count = subscriber.recv_batch(256, |_, tick| seen.push(tick.seq)).unwrap();
        assert_eq!((count, seen), (1, vec![7]));
    });
    assert!(counting.waits.load(Ordering::SeqCst) > 0);
    assert_eq!(counting.caught_up.load(Ordering::SeqCst), 1);
}

#[test]
fn a_timeout_with_nothing_committed_is_timed_out() {
    let channel = FifoMpsc::<Tick>::create(&Config::new(unique_name("recv-batch-timeout"))).unwrap();
    let _publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut handled = 0;
    let outcome = subscriber.recv_batch_timeout(16, Duration::from_millis(5), |_, _| handled += 1);
    assert_eq!((outcome, handled), (Err(ReceiveError::TimedOut), 0));
}

/// A batch of at most 0 hands out nothing and returns at once rather than waiting for a
/// message it may not hand out.
#[test]
fn a_batch_of_zero_returns_at_once() {
    let channel = FifoMpsc::<Tick>::create(&Config::new(unique_name("recv-batch-zero"))).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    assert_eq!(
        subscriber.recv_batch_timeout(0, Duration::from_secs(10), |_, _| {}),
        Ok(0)
    );
    publisher.offer(&Tick { seq: 1 }).unwrap();
    assert_eq!(
        subscriber.recv_batch_timeout(0, Duration::from_secs(10), |_, _| {}),
        Ok(0)
    );
    assert_eq!(subscriber.recv_batch(1, |_, tick| assert_eq!(tick.seq, 1)), Ok(1));
}

/// Messages committed before the last publisher left are handed out; the call after
/// reports the departure instead of waiting for messages that cannot come.
#[test]
fn the_publishers_leaving_ends_the_wait() {
    let channel = FifoMpsc::<Tick>::create(&Config::new(unique_name("recv-batch-gone"))).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    publisher.offer_batch(&[Tick { seq: 1 }, Tick { seq: 2 }]).unwrap();
    drop(publisher);
    let mut sum = 0;
    assert_eq!(subscriber.recv_batch(16, |_, tick| sum += tick.seq), Ok(2));
    assert_eq!(sum, 3);
    assert_eq!(
        subscriber.recv_batch(16, |_, _| sum += 100),
        Err(ReceiveError::Disconnected)
    );
    assert_eq!(sum, 3);
}

/// The raw handle takes the same path: a short batch tells the strategy, a full one not.
#[test]
fn raw_batches_tell_the_strategy_too() {
    let channel = RawFifoMpsc::create(&Config::new(unique_name("recv-batch-raw"))).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let counting = Counting::default();
    subscriber.set_wait_strategy(counting.clone());
    publisher.offer_batch(&[&b"ab"[..], b"cde", b"f"]).unwrap();
    let mut bytes = Vec::new();
    assert_eq!(subscriber.recv_batch(2, |_, m| bytes.extend_from_slice(m)), Ok(2));
    assert_eq!(counting.caught_up.load(Ordering::SeqCst), 0);
    assert_eq!(subscriber.recv_batch(2, |_, m| bytes.extend_from_slice(m)), Ok(1));
    assert_eq!(counting.caught_up.load(Ordering::SeqCst), 1);
    assert_eq!(bytes, b"abcdef");
}
