//! Open-loop latency (doc/benchmarking.md rule 5): the publisher sends message i at its
//! planned time t0 + i·Δ, never skipping or rebasing the plan when it falls behind, and
//! stamps the planned and the actual send time into the message (words[0], words[1]); the
//! subscriber stamps the receive time. All stamps are ns of the latency clock
//! (`support::clock::latency`: the counter on the parent's calibration, which every child
//! inherits, so the stamps of two processes subtract; or CLOCK_MONOTONIC where the counter
//! was refused). Queueing = sent − planned, service = received − sent, total = received −
//! planned, each in an HdrHistogram (1 ns resolution, 3 significant digits). The first
//! `warmup` messages follow the same plan but are not recorded.

use std::time::Duration;

use hdrhistogram::Histogram;
use support::barrier::Barrier;
use support::clock::{LatencyClock, latency};
use support::cores::{Placement, Side};
use support::hist::{Quantiles, histogram};
use support::realtime::Realtime;
use support::records::System;
use support::role::Children;
use support::state::{Bracket, SpeedProbe};

use crate::error::RunError;
use crate::message::{Msg64, stamped};
use crate::parent;
use crate::platform::latency_cores;
use crate::resources::{Ctx, Resources, unique_name};
use crate::roles::{OpenLoopPlan, Params, Report, system_name};
use crate::setup::{Api, Setup};
use crate::transport::{Publish, Subscribe};
use crate::verification::Verifier;

/// Planned send time of message `i`: Δ is given in picoseconds so that rates like
/// 3 M msg/s (333.3 ns) keep their exact mean.
#[inline(always)]
pub fn planned_ns(t0: u64, i: u64, interval_ps: u64) -> u64 {
    t0 + ((i as u128 * interval_ps as u128) / 1000) as u64
}

/// Runs the plan: for each message, busy-waits until its planned time (if already late,
/// sends at once), then offers it until it is accepted, restamping the send time on each
/// retry. Reports attempts, refusals and how long the plan took.
pub fn publish(a: &Params, barrier: &Barrier, mut publisher: impl Publish) {
    let plan = plan_of(a);
    apply_realtime(&plan);
    let interval_ps = plan.interval_ps;
    let (mut attempts, mut refused, mut late) = (0u64, 0u64, 0u64);
    let clock = latency();
    barrier.arrive_and_wait();
    let t0 = clock.now_ns();
    let mut last_sent = t0;
    for seq in 0..a.messages {
        let planned = planned_ns(t0, seq, interval_ps);
        let mut now = clock.now_ns();
        if now > planned {
            late += 1;
        }
        while now < planned {
            std::hint::spin_loop();
            now = clock.now_ns();
        }
        // The first attempt goes out stamped with the clock read that ended the wait (one
        // clock read per message at high rates); a retry after a refusal is restamped.
        let mut sent = now;
        loop {
            attempts += 1;
            if publisher.offer(&stamped(a.index, seq, planned, sent)) {
                last_sent = sent;
                break;
            }
            refused += 1;
            std::hint::spin_loop();
            sent = clock.now_ns();
        }
    }
    let planned_span = planned_ns(t0, a.messages - 1, interval_ps) - t0;
    Report::OpenLoopPublisher {
        span_ns: last_sent - t0,
        planned_span_ns: planned_span,
        attempts,
        refused,
        late,
    }
    .send();
    barrier.wait_done(1);
}

/// The open-loop plan a child was given.
fn plan_of(a: &Params) -> OpenLoopPlan {
    a.plan.expect("an open-loop role is started with its plan")
}

/// Puts this role under the plan's real-time policy, if it has one; the parent checked
/// the privilege before any run, so a failure here ends the run.
fn apply_realtime(plan: &OpenLoopPlan) {
    if let Some(realtime) = plan.realtime {
        realtime.apply().unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The three histograms of the subscriber.
struct OpenLoopRecorder {
    queueing: Histogram<u64>,
    service: Histogram<u64>,
    total: Histogram<u64>,
    warmup: u64,
    verifier: Verifier,
    clock: &'static LatencyClock,
}

impl OpenLoopRecorder {
    fn new(warmup: u64) -> Self {
        // Larger values than the histograms hold saturate at the top.
        OpenLoopRecorder {
            queueing: histogram(),
            service: histogram(),
            total: histogram(),
            warmup,
            verifier: Verifier::new(1),
            clock: latency(),
        }
    }

    /// Stamps the receive time of `m`, checks it and, past the warm-up, records it.
    #[inline(always)]
    fn receive(&mut self, m: &Msg64) {
        let received = self.clock.now_ns();
        self.verifier.check(m);
        if m.seq >= self.warmup {
            let (planned, sent) = (m.words[0], m.words[1]);
            self.queueing.saturating_record(sent.saturating_sub(planned));
            self.service.saturating_record(received.saturating_sub(sent));
            self.total.saturating_record(received.saturating_sub(planned));
        }
    }
}

/// The subscriber's loop: it polls into the recorder until every message is in; then the
/// checks and the histograms' report.
pub fn subscribe(a: &Params, barrier: &Barrier, mut subscriber: impl Subscribe) {
    let plan = plan_of(a);
    apply_realtime(&plan);
    let mut recorder = OpenLoopRecorder::new(plan.warmup);
    barrier.arrive_and_wait();
    while recorder.verifier.received() < a.messages {
        subscriber.poll(|m| recorder.receive(m));
    }
    recorder.verifier.finish(1, a.messages);
    Report::OpenLoopSubscriber {
        queueing_ns: Quantiles::of(&recorder.queueing),
        service_ns: Quantiles::of(&recorder.service),
        total_ns: Quantiles::of(&recorder.total),
    }
    .send();
    barrier.done();
}

/// One open-loop run's result, as the parent collects it.
pub struct OpenLoop {
    pub achieved_per_s: f64,
    /// How much longer the plan took than planned (1.0 = on time).
    pub stretch: f64,
    pub refused: f64,
    pub late_fraction: f64,
    pub queueing: Quantiles,
    pub service: Quantiles,
    pub total: Quantiles,
    pub placement: String,
    /// The real-time policy the roles ran under, if any.
    pub realtime: Option<Realtime>,
    /// The speed state around the run.
    pub state: Option<SpeedProbe>,
}

impl OpenLoop {
    /// Saturated: the publisher could not keep to the plan (it ended > 10 % late) or the
    /// median message waited more than 100 µs to be sent.
    pub fn saturated(&self) -> bool {
        self.stretch > 1.1 || self.queueing.p50() > 100_000
    }
}

/// The API each system's open-loop publisher uses.
fn openloop_api(system: System) -> Api {
    match system {
        System::Aeron => Api::TryClaim,
        System::Iceoryx2 => Api::LoanUninit,
        _ => Api::Offer,
    }
}

/// One open-loop run of `system` (buffer `param`) at `rate` msg/s for `plan` = (duration,
/// warm-up) seconds, under `realtime` if given: the publisher on core 0, the subscriber
/// on core 1.
pub fn openloop_run(
    system: System,
    param: u64,
    rate: f64,
    plan: (f64, f64),
    realtime: Option<Realtime>,
    round: usize,
    ctx: &mut Ctx,
) -> Result<OpenLoop, RunError> {
    let (duration_s, warmup_s) = plan;
    let warmup = (rate * warmup_s).round().max(1.0) as u64;
    let messages = warmup + (rate * duration_s).round().max(2.0) as u64;
    let interval_ps = (1e12 / rate).round() as u64;
    let setup = Setup::new(system, openloop_api(system), 1, messages, param);
    let name = unique_name(&format!("ol-{}", system_name(system)), round);
    let stream = ctx.stream();
    let _resources = Resources::for_setup(&setup, &name)?;
    let barrier = Barrier::create(&name).map_err(RunError::shm(&name))?;
    let [pub_core, sub_core] = latency_cores();
    let mut placement = Placement::new();
    placement.note(Side::Publisher, 0, pub_core);
    placement.note(Side::Subscriber, 0, sub_core);
    let params = |core| Params {
        plan: Some(OpenLoopPlan {
            interval_ps,
            warmup,
            realtime,
        }),
        ..setup.params(&name, core, 0, &ctx.aeron_dir, stream)
    };
    let bracket = Bracket::open([pub_core, sub_core]);
    let mut children = Children::new();
    parent::spawn(&mut children, system, "ol-subscriber", &params(sub_core))?;
    parent::spawn(&mut children, system, "ol-publisher", &params(pub_core))?;
    // A minute to start and end, plus the plan itself twice over.
    let limit = Duration::from_secs(60) + Duration::from_secs_f64(2.0 * (duration_s + warmup_s));
    let (mut sent, mut received) = (None, None);
    let reports = parent::collect(&name, &barrier, children, limit)?;
    let state = bracket.close();
    for report in reports {
        match report {
            Report::OpenLoopPublisher { .. } => sent = Some(report),
            Report::OpenLoopSubscriber { .. } => received = Some(report),
            _ => {}
        }
    }
    let (
        Some(Report::OpenLoopPublisher {
            span_ns,
            planned_span_ns,
            attempts,
            refused,
            late,
        }),
        Some(Report::OpenLoopSubscriber {
            queueing_ns,
            service_ns,
            total_ns,
        }),
    ) = (sent, received)
    else {
        let what = "the open-loop publisher's and subscriber's reports";
        return Err(RunError::Missing { run: name, what });
    };
    assert_eq!(total_ns.count, messages - warmup, "open-loop sample count");
    Ok(OpenLoop {
        achieved_per_s: (messages - 1) as f64 / (span_ns.max(1) as f64 / 1e9),
        stretch: span_ns as f64 / planned_span_ns.max(1) as f64,
        refused: refused as f64 / attempts.max(1) as f64,
        late_fraction: late as f64 / messages as f64,
        queueing: queueing_ns,
        service: service_ns,
        total: total_ns,
        placement: placement.to_string(),
        realtime,
        state,
    })
}
