//! The mutex + condvar baseline: the same roles as threads over locked queues.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use matching_engine::{EventMsg, OrderMsg};

use super::threads::{DoneFlag, run_threads};
use crate::params::Params;
use crate::systems::RunResult;
use crate::transport::{EventRx, EventTx, OrderRx, OrderTx};

/// A mutex + condvar queue, as in the textbook (and the C++ original's baseline): the
/// consumer sleeps on the condvar when the queue is empty, every push notifies.
pub struct LockedQueue<T> {
    pub queue: Mutex<VecDeque<T>>,
    pub ready: Condvar,
}

impl<T: Copy> LockedQueue<T> {
    pub fn new(capacity: usize) -> Arc<LockedQueue<T>> {
        Arc::new(LockedQueue {
            queue: Mutex::new(VecDeque::with_capacity(capacity)),
            ready: Condvar::new(),
        })
    }

    pub fn push_all(&self, items: &[T]) {
        self.queue.lock().expect("queue lock").extend(items.iter().copied());
        self.ready.notify_one();
    }

    pub fn pop(&self) -> Option<T> {
        self.queue.lock().expect("queue lock").pop_front()
    }

    /// Sleeps until something is queued (or 1 ms passes, so a finished run is noticed).
    pub fn wait(&self) {
        let queue = self.queue.lock().expect("queue lock");
        if queue.is_empty() {
            let _ = self
                .ready
                .wait_timeout(queue, Duration::from_millis(1))
                .expect("queue lock");
        }
    }
}

pub struct MutexOrderTx(pub Arc<LockedQueue<OrderMsg>>);

impl OrderTx for MutexOrderTx {
    fn try_send(&mut self, order: &OrderMsg) -> bool {
        self.0.push_all(std::slice::from_ref(order));
        true
    }
}

pub struct MutexOrderRx {
    pub queue: Arc<LockedQueue<OrderMsg>>,
    pub next: u64,
}

impl OrderRx for MutexOrderRx {
    fn try_recv(&mut self) -> Option<(u64, OrderMsg)> {
        let order = self.queue.pop()?;
        self.next += 1;
        Some((self.next - 1, order))
    }

    fn idle(&mut self) {
        self.queue.wait();
    }
}

pub struct MutexEventTx(pub Vec<Arc<LockedQueue<EventMsg>>>);

impl EventTx for MutexEventTx {
    fn try_send(&mut self, events: &[EventMsg]) -> usize {
        for queue in &self.0 {
            queue.push_all(events);
        }
        events.len()
    }
}

pub struct MutexEventRx {
    pub queue: Arc<LockedQueue<EventMsg>>,
    pub done: Arc<DoneFlag>,
    pub batch: Vec<EventMsg>,
}

impl EventRx for MutexEventRx {
    fn poll(&mut self, mut handle: impl FnMut(&EventMsg)) -> usize {
        // Take everything queued under one lock, then handle it outside the lock.
        self.batch.clear();
        self.batch
            .extend(self.queue.queue.lock().expect("queue lock").drain(..));
        for event in &self.batch {
            handle(event);
        }
        self.batch.len()
    }

    fn idle(&mut self) {
        self.queue.wait();
    }

    fn engine_done(&mut self) -> Option<u64> {
        self.done.get()
    }
}

pub fn run_mutex(p: &Params) -> RunResult {
    let orders = LockedQueue::new(p.total() as usize);
    let done = Arc::new(DoneFlag::default());
    let event_queues: Vec<_> = (0..p.subscribers).map(|_| LockedQueue::new(1 << 16)).collect();
    run_threads(
        p,
        (0..p.gateways).map(|_| MutexOrderTx(orders.clone())).collect(),
        MutexOrderRx { queue: orders, next: 0 },
        MutexEventTx(event_queues.clone()),
        event_queues
            .into_iter()
            .map(|queue| MutexEventRx {
                queue,
                done: done.clone(),
                batch: Vec::with_capacity(1 << 16),
            })
            .collect(),
        done,
    )
}
