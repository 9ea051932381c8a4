//! The latency floors between two processes: the bare cache-line ping-pong of
//! `support::floor` and the 64-byte message ping-pong of `support::message_floor`.

use support::barrier::Barrier;
use support::{floor, message_floor};

use crate::pingpong::{PING_WARMUP, report_round_trips};
use crate::roles::Params;

/// The cache-line floor's pinger.
pub fn floor_pinger(a: &Params, barrier: &Barrier) {
    let slots = barrier.slots();
    barrier.arrive_and_wait();
    report_round_trips(floor::round_trips(slots, PING_WARMUP, a.messages));
}

/// The cache-line floor's ponger.
pub fn floor_ponger(a: &Params, barrier: &Barrier) {
    let slots = barrier.slots();
    barrier.arrive_and_wait();
    floor::pong(slots, PING_WARMUP + a.messages);
    barrier.done();
}

/// The 64-byte message floor's pinger.
pub fn message_floor_pinger(a: &Params, barrier: &Barrier) {
    let slots = barrier.slots();
    barrier.arrive_and_wait();
    report_round_trips(message_floor::round_trips(slots, PING_WARMUP, a.messages));
}

/// The 64-byte message floor's ponger.
pub fn message_floor_ponger(a: &Params, barrier: &Barrier) {
    let slots = barrier.slots();
    barrier.arrive_and_wait();
    message_floor::pong(slots, PING_WARMUP + a.messages);
    barrier.done();
}
