//! Latency: ping-pong round trip / 2 between cores 0 and 1, stamped with the latency
//! clock (`support::clock::latency`, the parent's calibration); the pinger's and the
//! ponger's loops, generic over the system's ends, and the parent's run.

use std::time::Duration;

use support::barrier::Barrier;
use support::hist::Quantiles;
use support::records::System;
use support::role::Children;
use support::state::{Bracket, SpeedProbe};
use support::trips::{Batched, TripTimer, Trips};

use crate::error::RunError;
use crate::message::Msg64;
use crate::parent;
use crate::platform::latency_cores;
use crate::resources::{Ctx, Resources, unique_name};
use crate::roles::{Params, Report, system_name};
use crate::transport::PingPong;

/// Unrecorded round trips before the recorded ones.
pub const PING_WARMUP: u64 = 10_000;

/// The pinger: after the barrier, PING_WARMUP unrecorded then `a.messages` recorded
/// round trips, each message `seq` sent and its echo awaited. Reports the round trips.
pub fn ping(a: &Params, barrier: &Barrier, mut ends: impl PingPong) {
    let pings = a.messages;
    barrier.arrive_and_wait();
    let mut timer = TripTimer::start(pings);
    for seq in 0..PING_WARMUP + pings {
        ends.send(&Msg64::new(0, seq));
        let back = ends.recv();
        timer.lap(seq >= PING_WARMUP);
        assert_eq!(back.seq, seq, "ping-pong out of step");
        assert_eq!(back.words[5], seq, "ping-pong corrupted");
    }
    report_round_trips(timer.into_trips());
}

/// Reports round trips `in_order` (ns, in the order taken, one stamp per trip) to the
/// parent: their quantiles, and the one-way figures of 16-trip samples.
pub fn report_round_trips(in_order: Vec<u64>) {
    let trips = Trips::of(in_order);
    Report::Pings {
        round_trip_ns: Quantiles::of_sorted(&trips.sorted),
        batched: trips.batched,
    }
    .send();
}

/// The ponger: after echoing every ping, lets the run finish.
pub fn pong(a: &Params, barrier: &Barrier, mut ends: impl PingPong) {
    barrier.arrive_and_wait();
    for _ in 0..PING_WARMUP + a.messages {
        ends.echo();
    }
    barrier.done();
}

/// One ping-pong run's figures.
pub struct PingPongRun {
    /// The round trips' quantiles, ns.
    pub round_trips: Quantiles,
    /// The one-way figures of 16-trip samples.
    pub batched: Option<Batched>,
    /// The pinger's and the ponger's core.
    pub cores: [usize; 2],
    /// The speed state around the run.
    pub state: Option<SpeedProbe>,
}

/// One ping-pong run of `system`, `pings` round trips.
pub fn pingpong_run(system: System, pings: u64, round: usize, ctx: &mut Ctx) -> Result<PingPongRun, RunError> {
    let name = unique_name(system_name(system), round);
    let stream = ctx.stream();
    let _resources = Resources::for_pingpong(system, &name)?;
    let barrier = Barrier::create(&name).map_err(RunError::shm(&name))?;
    let cores = latency_cores();
    let params = |core| Params {
        name: name.clone(),
        core,
        api: None,
        batch: 1,
        publishers: 1,
        subscribers: 1,
        messages: pings,
        param: 0,
        index: 0,
        aeron_dir: ctx.aeron_dir.clone(),
        stream,
        plan: None,
        subscriber_pauses: 0,
    };
    let bracket = Bracket::open(cores);
    let mut children = Children::new();
    parent::spawn(&mut children, system, "pong", &params(cores[1]))?;
    parent::spawn(&mut children, system, "ping", &params(cores[0]))?;
    // A minute to start and end, and 1 ms a round trip (a thousand times the slowest).
    let limit = Duration::from_secs(60) + Duration::from_millis(PING_WARMUP + pings);
    let reports = parent::collect(&name, &barrier, children, limit)?;
    let state = bracket.close();
    let round_trips = reports.into_iter().find_map(|r| match r {
        Report::Pings { round_trip_ns, batched } => Some((round_trip_ns, batched)),
        _ => None,
    });
    match round_trips {
        Some((round_trips, batched)) => Ok(PingPongRun {
            round_trips,
            batched,
            cores,
            state,
        }),
        None => Err(RunError::Missing {
            run: name,
            what: "the pinger's round trips",
        }),
    }
}
