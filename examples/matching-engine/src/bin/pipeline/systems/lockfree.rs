//! The lock-free baseline: the same roles as threads over `rtrb` SPSC rings.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use matching_engine::{EventMsg, OrderMsg};

use super::threads::{DoneFlag, run_threads};
use crate::params::{Params, SubscriberWait};
use crate::roles::subscriber::{IDLE_YIELDS, NAP};
use crate::systems::RunResult;
use crate::transport::{EventRx, EventTx, OrderRx, OrderTx};

/// Lock-free: one `rtrb` SPSC ring per gateway into the engine, which takes from them in
/// turn (so the merged order is the engine's, not a global sequence), and one ring per
/// subscriber out of it.
pub struct RingOrderTx(pub rtrb::Producer<OrderMsg>);

impl OrderTx for RingOrderTx {
    fn try_send(&mut self, order: &OrderMsg) -> bool {
        self.0.push(*order).is_ok()
    }
}

pub struct RingOrderRx {
    pub rings: Vec<rtrb::Consumer<OrderMsg>>,
    pub turn: usize,
    pub next: u64,
}

impl OrderRx for RingOrderRx {
    fn try_recv(&mut self) -> Option<(u64, OrderMsg)> {
        for _ in 0..self.rings.len() {
            let ring = self.turn;
            self.turn = (self.turn + 1) % self.rings.len();
            if let Ok(order) = self.rings[ring].pop() {
                self.next += 1;
                return Some((self.next - 1, order));
            }
        }
        None
    }

    fn idle(&mut self) {
        std::hint::spin_loop();
    }
}

/// Lets a lock-free subscriber sleep when idle instead of holding the core it shares:
/// it raises `sleeping`, checks its ring once more and parks; the engine, after pushing,
/// unparks it if the flag is up. The `SeqCst` fences on both sides make sure that either
/// the subscriber sees the new event or the engine sees the flag.
#[derive(Default)]
pub struct Sleeper {
    pub sleeping: AtomicBool,
    pub thread: std::sync::OnceLock<std::thread::Thread>,
}

impl Sleeper {
    pub fn wake(&self) {
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed)
            && let Some(thread) = self.thread.get()
        {
            thread.unpark();
        }
    }
}

pub struct RingEventTx(pub Vec<(rtrb::Producer<EventMsg>, Arc<Sleeper>)>);

impl EventTx for RingEventTx {
    fn try_send(&mut self, events: &[EventMsg]) -> usize {
        // All-or-nothing per batch, so every subscriber gets the same events.
        if self.0.iter().any(|(ring, _)| ring.slots() < events.len()) {
            return 0;
        }
        for (ring, sleeper) in &mut self.0 {
            for event in events {
                let _ = ring.push(*event);
            }
            sleeper.wake();
        }
        events.len()
    }
}

pub struct RingEventRx {
    pub ring: rtrb::Consumer<EventMsg>,
    pub nap: bool,
    pub sleeper: Arc<Sleeper>,
    pub done: Arc<DoneFlag>,
    pub idle_polls: u32,
}

impl EventRx for RingEventRx {
    fn poll(&mut self, mut handle: impl FnMut(&EventMsg)) -> usize {
        let mut count = 0;
        while let Ok(event) = self.ring.pop() {
            handle(&event);
            count += 1;
        }
        if count > 0 {
            self.idle_polls = 0;
        }
        count
    }

    /// Like the salias subscriber's strategy: a few yields, then sleep until woken (or nap).
    fn idle(&mut self) {
        self.idle_polls += 1;
        if self.idle_polls < IDLE_YIELDS {
            std::thread::yield_now();
            return;
        }
        if self.nap {
            std::thread::sleep(NAP);
            return;
        }
        self.idle_polls = 0;
        self.sleeper.thread.get_or_init(std::thread::current);
        self.sleeper.sleeping.store(true, Ordering::Relaxed);
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.ring.is_empty() {
            std::thread::park_timeout(Duration::from_millis(1));
        }
        self.sleeper.sleeping.store(false, Ordering::Relaxed);
    }

    fn engine_done(&mut self) -> Option<u64> {
        self.done.get()
    }
}

pub fn run_lockfree(p: &Params) -> RunResult {
    // The same room as the salias rings: 4 MiB of requests per gateway, 16 MiB of events.
    let (order_txs, order_rxs): (Vec<_>, Vec<_>) = (0..p.gateways)
        .map(|_| rtrb::RingBuffer::<OrderMsg>::new((4 << 20) / 64))
        .unzip();
    let (event_txs, event_rxs): (Vec<_>, Vec<_>) = (0..p.subscribers)
        .map(|_| {
            let (tx, rx) = rtrb::RingBuffer::<EventMsg>::new((16 << 20) / 64);
            let sleeper = Arc::new(Sleeper::default());
            ((tx, sleeper.clone()), (rx, sleeper))
        })
        .unzip();
    let done = Arc::new(DoneFlag::default());
    run_threads(
        p,
        order_txs.into_iter().map(RingOrderTx).collect(),
        RingOrderRx {
            rings: order_rxs,
            turn: 0,
            next: 0,
        },
        RingEventTx(event_txs),
        event_rxs
            .into_iter()
            .map(|(ring, sleeper)| RingEventRx {
                ring,
                nap: p.subscriber_wait == SubscriberWait::Nap,
                sleeper,
                done: done.clone(),
                idle_polls: 0,
            })
            .collect(),
        done,
    )
}
