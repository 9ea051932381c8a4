//! salias: `Channel<Msg64, Fifo, Mpsc>`, `offer` and `offer_batch`; ping-pong with
//! `send`/`recv` and busy-spinning subscribers; the open-loop roles.

use salias::{BusySpin, Channel, Error, Fifo, Mpsc};

use crate::message::Msg64;
use crate::openloop::{openloop_publish, openloop_subscribe};
use crate::pingpong::{PING_WARMUP, ping_loop, report_pings};
use crate::platform::now_ns;
use crate::roles::{ChildArgs, report_publisher, report_subscriber};
use crate::shm::Barrier;
use crate::throughput::{BATCH, POLL_LIMIT};
use crate::verification::Verifier;

pub fn publisher(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let channel = Channel::<Msg64, Fifo, Mpsc>::connect(name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let batch_len = if a.variant == "offer" { 1 } else { BATCH };
    let mut batch = vec![Msg64::new(a.index, 0); batch_len];
    let (mut attempts, mut refused, mut seq) = (0u64, 0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while seq < a.messages {
        attempts += 1;
        if batch_len > 1 {
            let count = (a.messages - seq).min(batch_len as u64) as usize;
            for (i, message) in batch[..count].iter_mut().enumerate() {
                *message = Msg64::new(a.index, seq + i as u64);
            }
            match publisher.offer_batch(&batch[..count]) {
                Ok(n) => seq += n as u64,
                Err(Error::Backpressured) => {
                    refused += 1;
                    std::hint::spin_loop()
                }
                Err(e) => panic!("{e}"),
            }
        } else {
            match publisher.offer(&Msg64::new(a.index, seq)) {
                Ok(()) => seq += 1,
                Err(Error::Backpressured) => {
                    refused += 1;
                    std::hint::spin_loop()
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    let elapsed = now_ns() - started;
    report_publisher(a.index, elapsed, attempts, refused);
    barrier.wait_subscribers_done(1);
}

pub fn subscriber(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let channel = Channel::<Msg64, Fifo, Mpsc>::connect(name).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let total = a.messages * a.publishers as u64;
    let mut v = Verifier::new(a.publishers as usize);
    barrier.arrive_and_wait();
    let started = now_ns();
    while v.received < total {
        subscriber.poll(POLL_LIMIT, |_, m| v.check(m)).unwrap();
    }
    let elapsed = now_ns() - started;
    v.finish(a.publishers as u64, a.messages);
    report_subscriber(a.index, elapsed, v.received);
    barrier.subscriber_done();
}

pub fn pinger(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let ping = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-ping")).unwrap();
    let pong = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-pong")).unwrap();
    let mut outbound = ping.publisher().unwrap();
    let mut inbound = pong.subscriber().unwrap();
    inbound.set_wait_strategy(BusySpin);
    barrier.arrive_and_wait();
    let samples = ping_loop(a.messages, |seq| {
        outbound.send(&Msg64::new(0, seq)).unwrap();
        *inbound.recv().unwrap()
    });
    report_pings(&samples);
}

pub fn ponger(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let ping = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-ping")).unwrap();
    let pong = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-pong")).unwrap();
    let mut inbound = ping.subscriber().unwrap();
    inbound.set_wait_strategy(BusySpin);
    let mut outbound = pong.publisher().unwrap();
    barrier.arrive_and_wait();
    for _ in 0..a.messages + PING_WARMUP {
        let message = *inbound.recv().unwrap();
        outbound.send(&message).unwrap();
    }
    barrier.subscriber_done();
}

pub fn ol_publisher(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let channel = Channel::<Msg64, Fifo, Mpsc>::connect(name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    openloop_publish(a, barrier, |m| match publisher.offer(m) {
        Ok(()) => true,
        Err(Error::Backpressured) => false,
        Err(e) => panic!("{e}"),
    });
}

pub fn ol_subscriber(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let channel = Channel::<Msg64, Fifo, Mpsc>::connect(name).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    openloop_subscribe(a, barrier, |r| {
        subscriber.poll(POLL_LIMIT, |_, m| r.receive(m)).unwrap();
    });
}
