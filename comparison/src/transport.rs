//! What a system's role processes do with its ends, in the same calls for every system.
//! The throughput, open-loop, ping-pong and wake-up loops are generic over these traits,
//! so each is compiled once per system with the system's own calls inlined in its hot
//! path; a system's module implements them and knows nothing of the loops.

use crate::message::Msg64;
use crate::roles::Params;

/// Most messages a subscriber takes per poll.
pub const POLL_LIMIT: usize = 256;

/// A system compared: how a role process connects its ends, from what its parent told it.
/// The open-loop roles use the throughput ends (one publisher, one subscriber).
pub trait Transport {
    type Publisher: Publish;
    type Subscriber: Subscribe;
    type PingPong: PingPong;

    /// Publisher `a.index` of run `a.name`, as `a.api` publishes.
    fn publisher(a: &Params) -> Self::Publisher;
    /// A subscriber of run `a.name`, seeing every message of `a.publishers`.
    fn subscriber(a: &Params) -> Self::Subscriber;
    /// The pinger's ends: sends pings, receives pongs.
    fn pinger(a: &Params) -> Self::PingPong;
    /// The ponger's ends: receives pings, sends pongs.
    fn ponger(a: &Params) -> Self::PingPong;
}

/// A publishing end that refuses what it has no room for.
pub trait Publish {
    /// Publishes `message`, or refuses it (false), to be offered again.
    fn offer(&mut self, message: &Msg64) -> bool;

    /// Publishes the first of `messages` that fit, in order: how many (0: refused). Only
    /// batching systems take more than one.
    fn offer_batch(&mut self, messages: &[Msg64]) -> usize {
        usize::from(self.offer(&messages[0]))
    }

    /// Refusals that the system's own send retried within `offer`, so that the caller
    /// never saw them: they count as attempts and refusals too.
    fn refused_within(&self) -> u64 {
        0
    }
}

/// A receiving end that never waits.
pub trait Subscribe {
    /// Hands what has arrived, at most [`POLL_LIMIT`] messages, to `receive`.
    fn poll(&mut self, receive: impl FnMut(&Msg64));
}

/// One side of a ping-pong: busy-waits both ways.
pub trait PingPong {
    /// Publishes `message`, retrying until it is taken.
    fn send(&mut self, message: &Msg64);

    /// The next message.
    fn recv(&mut self) -> Msg64;

    /// Receives one message and sends it back.
    fn echo(&mut self) {
        let message = self.recv();
        self.send(&message);
    }
}

/// A wake-up run's sender.
pub trait WakeSender {
    /// Commits `message` and wakes the receiver sleeping on it.
    fn send(&mut self, message: Msg64);
}

/// A wake-up run's receiver, which sleeps while nothing comes.
pub trait WakeReceiver {
    /// The next message, and the clock as the wait for it returned; none if the message
    /// was there before the receiver slept (then it is counted, not timed).
    fn wait(&mut self) -> (Msg64, Option<u64>);
}
