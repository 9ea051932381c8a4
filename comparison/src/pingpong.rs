//! Latency: ping-pong round trip / 2 between cores 0 and 1, stamped with the latency
//! clock (`support::clock::latency`, the parent's calibration); the pinger's loop and
//! the parent's run.

use std::time::Duration;

use support::barrier::Barrier;
use support::clock::latency;
use support::hist::Quantiles;
use support::records::System;
use support::role::Children;

use crate::error::RunError;
use crate::message::Msg64;
use crate::platform::latency_cores;
use crate::resources::{Ctx, Resources, unique_name};
use crate::roles::{self, Params, Report, system_name};

/// Unrecorded round trips before the recorded ones.
pub const PING_WARMUP: u64 = 10_000;

/// Runs PING_WARMUP unrecorded then `pings` recorded round trips, after the barrier;
/// `round_trip(seq)` sends message `seq` and returns the echo. Reports the round trips.
pub fn ping_loop(pings: u64, barrier: &Barrier, mut round_trip: impl FnMut(u64) -> Msg64) {
    let clock = latency();
    let mut samples = Vec::with_capacity(pings as usize);
    barrier.arrive_and_wait();
    for seq in 0..PING_WARMUP + pings {
        let sent = clock.now_ns();
        let back = round_trip(seq);
        let rtt = clock.now_ns() - sent;
        assert_eq!(back.seq, seq, "ping-pong out of step");
        assert_eq!(back.words[5], seq, "ping-pong corrupted");
        if seq >= PING_WARMUP {
            samples.push(rtt);
        }
    }
    report_round_trips(&mut samples);
}

/// Reports the quantiles of round trips `samples` (ns) to the parent.
pub fn report_round_trips(samples: &mut [u64]) {
    samples.sort_unstable();
    Report::Pings {
        round_trip_ns: Quantiles::of_sorted(samples),
    }
    .send();
}

/// The ponger's end: after echoing every ping, lets the run finish.
pub fn pong_loop(pings: u64, barrier: &Barrier, mut echo: impl FnMut()) {
    barrier.arrive_and_wait();
    for _ in 0..PING_WARMUP + pings {
        echo();
    }
    barrier.done();
}

/// One ping-pong run of `system`: the round trips' quantiles (ns) and the pinger's and
/// ponger's cores.
pub fn pingpong_run(
    system: System,
    pings: u64,
    round: usize,
    ctx: &mut Ctx,
) -> Result<(Quantiles, [usize; 2]), RunError> {
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
    };
    let mut children = Children::new();
    roles::spawn(&mut children, system, "pong", &params(cores[1]))?;
    roles::spawn(&mut children, system, "ping", &params(cores[0]))?;
    // A minute to start and end, and 1 ms a round trip (a thousand times the slowest).
    let limit = Duration::from_secs(60) + Duration::from_millis(PING_WARMUP + pings);
    let reports = roles::collect(&name, &barrier, children, limit)?;
    let round_trips = reports.into_iter().find_map(|r| match r {
        Report::Pings { round_trip_ns } => Some(round_trip_ns),
        _ => None,
    });
    match round_trips {
        Some(q) => Ok((q, cores)),
        None => Err(RunError::Missing {
            run: name,
            what: "the pinger's round trips",
        }),
    }
}
