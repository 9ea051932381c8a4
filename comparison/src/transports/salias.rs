//! salias: `Channel<Msg64, Fifo, Mpsc>` (and `Fanout` for several subscribers), `offer`
//! and `offer_batch`; ping-pong with `send`/`recv` and busy-spinning subscribers; the
//! wake-up ends: `recv` with its default `Adaptive` strategy, or the subscriber's
//! readiness descriptor in epoll.

use std::marker::PhantomData;

use salias::{Channel, Fifo, Mpsc, PublishError, kind::Topology, wait::BusySpin};
use support::clock::now_ns;
use support::epoll::Readable;

use crate::message::Msg64;
use crate::roles::Params;
use crate::transport::{POLL_LIMIT, PingPong, Publish, Subscribe, Transport, WakeReceiver, WakeSender};

/// salias with channels of topology `K`: the parent creates a `Fanout` channel for more
/// than one subscriber, since each of them sees every message.
pub struct Salias<K>(PhantomData<K>);

fn connect<K: Topology>(name: &str) -> Channel<Msg64, Fifo, K> {
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

/// An end of a channel, with the channel it keeps.
pub struct End<E, K: Topology> {
    end: E,
    _channel: Channel<Msg64, Fifo, K>,
}

impl<E, K: Topology> End<E, K> {
    /// The end that `open` makes of channel `name`.
    fn connect(name: &str, open: impl FnOnce(&Channel<Msg64, Fifo, K>) -> E) -> End<E, K> {
        let channel = connect::<K>(name);
        End {
            end: open(&channel),
            _channel: channel,
        }
    }
}

/// A publisher: `offer` and `offer_batch` for throughput and the open loop, `send` for
/// the wake-up runs.
pub type Publisher<K> = End<salias::Publisher<Msg64, Fifo, K>, K>;

fn publisher<K: Topology>(name: &str) -> Publisher<K> {
    End::connect(name, |channel| channel.publisher().expect("a publisher slot"))
}

impl<K: Topology> Publish for Publisher<K> {
    #[inline(always)]
    fn offer(&mut self, message: &Msg64) -> bool {
        accepted(self.end.offer(message)).is_some()
    }

    #[inline(always)]
    fn offer_batch(&mut self, messages: &[Msg64]) -> usize {
        accepted(self.end.offer_batch(messages)).unwrap_or(0)
    }
}

/// `send` commits and wakes a sleeping subscriber.
impl WakeSender for Publisher<Mpsc> {
    fn send(&mut self, message: Msg64) {
        self.end.send(&message).expect("salias send");
    }
}

/// A subscriber: `poll` for throughput and the open loop, `recv` (its default `Adaptive`
/// strategy, which sleeps) for the wake-up runs.
pub type Subscriber<K> = End<salias::Subscriber<Msg64, Fifo, K>, K>;

fn subscriber<K: Topology>(name: &str) -> Subscriber<K> {
    End::connect(name, |channel| channel.subscriber().expect("a subscriber slot"))
}

impl<K: Topology> Subscribe for Subscriber<K> {
    #[inline(always)]
    fn poll(&mut self, mut receive: impl FnMut(&Msg64)) {
        self.end.drain(POLL_LIMIT, |_, m| receive(m)).expect("salias drain");
    }
}

impl WakeReceiver for Subscriber<Mpsc> {
    fn wait(&mut self) -> (Msg64, Option<u64>) {
        let message = self.end.recv().expect("salias recv");
        let woke = now_ns();
        (*message, Some(woke))
    }
}

/// One side of a ping-pong, both ends busy-spinning: `<name>-ping` carries pings,
/// `<name>-pong` pongs.
pub struct Ends {
    outbound: Publisher<Mpsc>,
    inbound: Subscriber<Mpsc>,
}

impl Ends {
    fn connect(outbound: &str, inbound: &str) -> Ends {
        let mut inbound = subscriber(inbound);
        inbound.end.set_wait_strategy(BusySpin);
        Ends {
            outbound: publisher(outbound),
            inbound,
        }
    }
}

impl PingPong for Ends {
    #[inline(always)]
    fn send(&mut self, message: &Msg64) {
        self.outbound.end.send(message).expect("salias send");
    }

    #[inline(always)]
    fn recv(&mut self) -> Msg64 {
        *self.inbound.end.recv().expect("salias recv")
    }
}

impl<K: Topology> Transport for Salias<K> {
    type Publisher = Publisher<K>;
    type Subscriber = Subscriber<K>;
    type PingPong = Ends;

    fn publisher(a: &Params) -> Publisher<K> {
        publisher(&a.name)
    }

    fn subscriber(a: &Params) -> Subscriber<K> {
        subscriber(&a.name)
    }

    fn pinger(a: &Params) -> Ends {
        Ends::connect(&format!("{}-ping", a.name), &format!("{}-pong", a.name))
    }

    fn ponger(a: &Params) -> Ends {
        Ends::connect(&format!("{}-pong", a.name), &format!("{}-ping", a.name))
    }
}

/// The wake-up receiver that sleeps in epoll on the subscriber's own readiness
/// descriptor: its empty `try_recv` arms it, and receiving drains it.
pub struct Readiness {
    epoll: Readable,
    subscriber: Subscriber<Mpsc>,
}

impl Readiness {
    pub fn connect(a: &Params) -> Readiness {
        let subscriber = subscriber(&a.name);
        let epoll = Readable::watching(&subscriber.end).expect("an epoll set");
        Readiness { epoll, subscriber }
    }

    fn take(&mut self) -> Option<Msg64> {
        self.subscriber.end.try_recv().expect("salias try_recv").map(|m| *m)
    }
}

impl WakeReceiver for Readiness {
    fn wait(&mut self) -> (Msg64, Option<u64>) {
        loop {
            if let Some(message) = self.take() {
                // Found before sleeping: not a wake-up.
                return (message, None);
            }
            self.epoll.wait().expect("epoll_wait");
            let woke = now_ns();
            if let Some(message) = self.take() {
                return (message, Some(woke));
            }
        }
    }
}
