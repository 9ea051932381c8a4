//! The salias channels of a cross-process run, and the transports over them.

use std::time::Duration;

use matching_engine::{EventMsg, OrderMsg};
use salias::kind::Topology;
use salias::{FifoMpsc, PublishError, ReceiveError, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::transport::{EventRx, EventTx, OrderRx, OrderTx};

/// Start and end of a run, on a control channel (the data channels carry only data).
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
pub struct Control {
    pub kind: u64,
    pub value: u64,
}

pub const READY: u64 = 1;

pub const GO: u64 = 2;

pub const ENGINE_DONE: u64 = 3;

pub struct Names {
    pub orders: String,
    pub events: String,
    pub ready: String,
    pub control: String,
}

impl Names {
    pub fn new(base: &str) -> Names {
        Names {
            orders: format!("{base}-orders"),
            events: format!("{base}-events"),
            ready: format!("{base}-ready"),
            control: format!("{base}-control"),
        }
    }
}

/// Checks in on the ready channel, then waits for the start time on the control channel.
pub fn ready_and_wait_for_start(
    names: &Names,
    control: &mut salias::Subscriber<Control, salias::Fifo, salias::Fanout>,
) -> u64 {
    let ready = FifoMpsc::<Control>::connect(&names.ready).expect("connect ready");
    ready
        .publisher()
        .expect("ready publisher")
        .send(&Control { kind: READY, value: 0 })
        .expect("report ready");
    loop {
        let message = match control.recv() {
            Ok(message) => *message,
            // The control channel's publisher is the parent's, which outlives the run.
            Err(e) => panic!("control: {e}"),
        };
        if message.kind == GO {
            return message.value;
        }
    }
}

/// A gateway's side of the order feed: `Mpsc`, or `Fanout` when it is recorded.
pub struct SaliasOrderTx<K: Topology>(pub salias::Publisher<OrderMsg, salias::Ordered, K>);

impl<K: Topology> OrderTx for SaliasOrderTx<K> {
    fn try_send(&mut self, order: &OrderMsg) -> bool {
        match self.0.offer(order) {
            Ok(()) => true,
            Err(PublishError::Backpressured) => false,
            Err(e) => panic!("gateway offer: {e}"),
        }
    }
}

/// The engine's side of the order feed: `Mpsc`, or `Fanout` when it is recorded.
pub struct SaliasOrderRx<K: Topology>(pub salias::Subscriber<OrderMsg, salias::Ordered, K>);

impl<K: Topology> OrderRx for SaliasOrderRx<K> {
    fn try_recv(&mut self) -> Option<(u64, OrderMsg)> {
        match self.0.try_recv() {
            Ok(received) => received.map(|received| (received.sequence(), *received)),
            // Every gateway has finished (each says how many it sent): nothing more comes.
            Err(ReceiveError::Disconnected) => None,
            Err(e) => panic!("engine receive: {e}"),
        }
    }

    fn idle(&mut self) {
        std::hint::spin_loop();
    }

    fn gaps(&self) -> u64 {
        self.0.gaps().missing
    }
}

pub struct SaliasEventTx(pub salias::Publisher<EventMsg, salias::Fifo, salias::Fanout>);

impl EventTx for SaliasEventTx {
    fn try_send(&mut self, events: &[EventMsg]) -> usize {
        match self.0.offer_batch(events) {
            Ok(n) => n,
            Err(PublishError::Backpressured) => 0,
            Err(e) => panic!("engine offer: {e}"),
        }
    }
}

pub struct SaliasEventRx {
    pub events: salias::Subscriber<EventMsg, salias::Fifo, salias::Fanout>,
    pub control: salias::Subscriber<Control, salias::Fifo, salias::Fanout>,
}

impl EventRx for SaliasEventRx {
    fn poll(&mut self, mut handle: impl FnMut(&EventMsg)) -> usize {
        let polled = match self.events.drain(1024, |_, event| handle(event)) {
            Ok(polled) => polled,
            // The engine has finished publishing; `engine_done` says how much it sent.
            Err(ReceiveError::Disconnected) => 0,
            Err(e) => panic!("subscriber poll: {e}"),
        };
        if polled > 0 {
            return polled;
        }
        // Nothing there: wait with the subscriber's strategy (a short spin, then a futex
        // sleep that the engine's next commit ends), so the core is free meanwhile.
        match self.events.recv_timeout(Duration::from_millis(1)) {
            Ok(event) => {
                handle(&event);
                1
            }
            Err(ReceiveError::TimedOut | ReceiveError::Disconnected) => 0,
            Err(e) => panic!("subscriber receive: {e}"),
        }
    }

    fn idle(&mut self) {}

    fn engine_done(&mut self) -> Option<u64> {
        let mut done = None;
        let polled = self.control.drain(16, |_, message| {
            if message.kind == ENGINE_DONE {
                done = Some(message.value);
            }
        });
        match polled {
            Ok(_) | Err(ReceiveError::Disconnected) => done,
            Err(e) => panic!("control poll: {e}"),
        }
    }
}
