//! salias: `Channel<Msg64, Fifo, Mpsc>` (and `Fanout` for several subscribers), `offer`
//! and `offer_batch`; ping-pong with `send`/`recv` and busy-spinning subscribers; the
//! open-loop roles.

use salias::{BusySpin, Channel, Fanout, Fifo, Mpsc, PublishError, Topology};
use support::barrier::Barrier;

use crate::message::Msg64;
use crate::openloop::{openloop_publish, openloop_subscribe};
use crate::pingpong::{ping_loop, pong_loop};
use crate::roles::Params;
use crate::throughput::{POLL_LIMIT, drain, flood};

type FifoMpsc = Channel<Msg64, Fifo, Mpsc>;

fn connect(name: &str) -> FifoMpsc {
    connect_as(name)
}

fn connect_as<K: Topology>(name: &str) -> Channel<Msg64, Fifo, K> {
    Channel::connect(name).unwrap_or_else(|e| panic!("connect to salias channel {name}: {e}"))
}

/// Whether an offer went in; back pressure is a refusal, any other error a failure.
#[inline(always)]
fn accepted<T>(offered: Result<T, PublishError>) -> Option<T> {
    match offered {
        Ok(taken) => Some(taken),
        Err(PublishError::Backpressured) => None,
        Err(e) => panic!("salias offer failed: {e}"),
    }
}

/// A throughput publisher, of the fanout channel the parent created for more than one
/// subscriber.
pub fn publisher(a: &Params, barrier: &Barrier) {
    if a.subscribers > 1 {
        publish::<Fanout>(a, barrier);
    } else {
        publish::<Mpsc>(a, barrier);
    }
}

/// A throughput subscriber: every one of a fanout channel's sees every message.
pub fn subscriber(a: &Params, barrier: &Barrier) {
    if a.subscribers > 1 {
        subscribe::<Fanout>(a, barrier);
    } else {
        subscribe::<Mpsc>(a, barrier);
    }
}

fn publish<K: Topology>(a: &Params, barrier: &Barrier) {
    let channel = connect_as::<K>(&a.name);
    let mut publisher = channel.publisher().expect("a publisher slot");
    let mut batch = vec![Msg64::new(a.index, 0); a.batch];
    let published = if a.batch > 1 {
        flood(a, barrier, |seq| {
            let count = (a.messages - seq).min(a.batch as u64) as usize;
            for (i, message) in batch[..count].iter_mut().enumerate() {
                *message = Msg64::new(a.index, seq + i as u64);
            }
            accepted(publisher.offer_batch(&batch[..count])).map_or(0, |n| n as u64)
        })
    } else {
        flood(a, barrier, |seq| {
            accepted(publisher.offer(&Msg64::new(a.index, seq))).map_or(0, |()| 1)
        })
    };
    published.report(barrier);
}

fn subscribe<K: Topology>(a: &Params, barrier: &Barrier) {
    let channel = connect_as::<K>(&a.name);
    let mut subscriber = channel.subscriber().expect("a subscriber slot");
    drain(a, barrier, |verifier| {
        subscriber
            .poll(POLL_LIMIT, |_, m| verifier.check(m))
            .expect("salias poll");
    });
}

/// The ping channel `<name>-ping` and the pong channel `<name>-pong`.
fn ping_pong(name: &str) -> (FifoMpsc, FifoMpsc) {
    (connect(&format!("{name}-ping")), connect(&format!("{name}-pong")))
}

pub fn pinger(a: &Params, barrier: &Barrier) {
    let (ping, pong) = ping_pong(&a.name);
    let mut outbound = ping.publisher().expect("a publisher slot");
    let mut inbound = pong.subscriber().expect("the subscriber slot");
    inbound.set_wait_strategy(BusySpin);
    ping_loop(a.messages, barrier, |seq| {
        outbound.send(&Msg64::new(0, seq)).expect("salias send");
        *inbound.recv().expect("salias recv")
    });
}

pub fn ponger(a: &Params, barrier: &Barrier) {
    let (ping, pong) = ping_pong(&a.name);
    let mut inbound = ping.subscriber().expect("the subscriber slot");
    inbound.set_wait_strategy(BusySpin);
    let mut outbound = pong.publisher().expect("a publisher slot");
    pong_loop(a.messages, barrier, || {
        let message = *inbound.recv().expect("salias recv");
        outbound.send(&message).expect("salias send");
    });
}

pub fn ol_publisher(a: &Params, barrier: &Barrier) {
    let channel = connect(&a.name);
    let mut publisher = channel.publisher().expect("a publisher slot");
    openloop_publish(a, barrier, |m| accepted(publisher.offer(m)).is_some());
}

pub fn ol_subscriber(a: &Params, barrier: &Barrier) {
    let channel = connect(&a.name);
    let mut subscriber = channel.subscriber().expect("the subscriber slot");
    openloop_subscribe(a, barrier, |r| {
        subscriber.poll(POLL_LIMIT, |_, m| r.receive(m)).expect("salias poll");
    });
}
