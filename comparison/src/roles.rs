//! The child processes: every publisher, subscriber, pinger and ponger is this binary
//! started again with a role (`<system> <role>`, in an environment variable) and its
//! [`Params`] (JSON, in a second one). A child pins itself, opens the run's barrier, plays
//! its role and prints one [`Report`]; the parent waits for all of them under a watchdog.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use support::barrier::Barrier;
use support::cores::pin;
use support::hist::Quantiles;
use support::realtime::Realtime;
use support::records::System;
use support::role::{Children, Role, report_json};

use crate::baselines;
use crate::error::RunError;
use crate::throughput::Api;
use crate::transports::{aeron, iceoryx2 as ice, salias};
use crate::wake;

/// The variable that names a child's role.
pub const ROLE: Role = Role::new("SALIAS_COMPARISON_ROLE");

/// How long the parent waits for every process of a run to reach the start barrier
/// (connecting an Aeron client takes a while; a process that never arrives is a failure).
const START_LIMIT: Duration = Duration::from_secs(60);

/// What a role process is told: where it runs and what it sends.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Params {
    /// The run's name: its barrier, channel, service or ring.
    pub name: String,
    /// The core this process pins itself to.
    pub core: usize,
    /// How a throughput or open-loop publisher sends (ping-pong has one way per system).
    pub api: Option<Api>,
    /// Messages per call.
    pub batch: usize,
    pub publishers: u32,
    /// Subscribers of the run, each receiving every message (salias connects to a fanout
    /// channel when there are more than one).
    pub subscribers: u32,
    /// Messages per publisher (throughput, open loop) or recorded round trips (ping-pong).
    pub messages: u64,
    /// The buffer, as `Setup::param`; a wake-up sender's idle interval in ms.
    pub param: u64,
    /// This publisher's (or subscriber's) index.
    pub index: u64,
    /// The Aeron driver's directory (empty without Aeron).
    pub aeron_dir: String,
    /// The Aeron stream of the run (ping-pong: pings; pongs on the next one).
    pub stream: i32,
    /// The open-loop plan, for the open-loop roles.
    pub plan: Option<OpenLoopPlan>,
}

/// An open-loop publisher's schedule.
#[derive(Serialize, Deserialize, Clone, Copy, Debug)]
pub struct OpenLoopPlan {
    /// Δ between planned send times, in picoseconds.
    pub interval_ps: u64,
    /// The first messages, sent by the plan but not recorded.
    pub warmup: u64,
    /// The real-time policy both roles run under, if any (`--realtime`).
    pub realtime: Option<Realtime>,
}

/// What a child tells its parent, once, at the end.
#[derive(Serialize, Deserialize, Clone, Debug)]
#[serde(tag = "report", rename_all = "snake_case")]
pub enum Report {
    /// From the start barrier to the last successful offer.
    Publisher {
        elapsed_ns: u64,
        attempts: u64,
        refused: u64,
    },
    /// From the start barrier to the last message.
    Subscriber { elapsed_ns: u64, received: u64 },
    /// The recorded round trips.
    Pings { round_trip_ns: Quantiles },
    /// How the open-loop plan went.
    OpenLoopPublisher {
        span_ns: u64,
        planned_span_ns: u64,
        attempts: u64,
        refused: u64,
        late: u64,
    },
    /// The wake-up sender's reading of the idle receiver's CPU.
    WakeSender { idle: support::cpu::IdleCpu },
    /// The wake-up receiver's latencies, commit to woken receiver.
    WakeReceiver { wake_ns: Quantiles, not_slept: u64 },
    /// The open-loop histograms.
    OpenLoopSubscriber {
        queueing_ns: Quantiles,
        service_ns: Quantiles,
        total_ns: Quantiles,
    },
}

impl Report {
    /// Prints this report for the parent.
    pub fn send(&self) {
        report_json(self);
    }
}

/// A system's name in role names and run names, as the records spell it.
pub fn system_name(system: System) -> &'static str {
    match system {
        System::Salias => "salias",
        System::Aeron => "aeron",
        System::Iceoryx2 => "iceoryx2",
        System::SpscFloor => "spsc-floor",
        System::Floor => "floor",
        System::MessageFloor => "message-floor",
    }
}

/// Starts `role` of `system` with `params` as one of `children`.
pub fn spawn(children: &mut Children, system: System, role: &str, params: &Params) -> Result<(), RunError> {
    let role = format!("{} {role}", system_name(system));
    let mut command = ROLE.command_with(&role, params).map_err(RunError::role(&params.name))?;
    children
        .spawn(format!("{role} {}", params.index), &mut command)
        .map_err(RunError::role(&params.name))
}

/// The parent's side of a run: releases the `children` from the start barrier once all
/// have arrived, waits for them to finish within `limit`, and returns their reports.
pub fn collect(
    name: &str,
    barrier: &Barrier,
    mut children: Children,
    limit: Duration,
) -> Result<Vec<Report>, RunError> {
    let parties = children.len() as u64;
    barrier
        .release(parties, &mut children, START_LIMIT)
        .map_err(RunError::role(name))?;
    let mut reports = Vec::new();
    for output in children.wait_all(limit).map_err(RunError::role(name))? {
        reports.extend(output.json_reports::<Report>().map_err(RunError::role(name))?);
    }
    Ok(reports)
}

/// A child's whole life: `role` is what [`ROLE`] names.
pub fn child(role: &str) -> Result<(), Box<dyn std::error::Error>> {
    let a: Params = ROLE.params()?;
    pin(a.core)?;
    let barrier = Barrier::open(&a.name)?;
    let b = &barrier;
    match role.split_once(' ').unwrap_or((role, "")) {
        ("salias", "publisher") => salias::publisher(&a, b),
        ("salias", "subscriber") => salias::subscriber(&a, b),
        ("salias", "ping") => salias::pinger(&a, b),
        ("salias", "pong") => salias::ponger(&a, b),
        ("salias", "ol-publisher") => salias::ol_publisher(&a, b),
        ("salias", "ol-subscriber") => salias::ol_subscriber(&a, b),
        ("salias", "wake-sender") => wake::salias_sender(&a, b),
        ("salias", "wake-receiver") => wake::salias_receiver(&a, b),
        ("salias", "wake-receiver-fd") => wake::salias_fd_receiver(&a, b),
        ("iceoryx2", "wake-sender") => wake::ice_sender(&a, b),
        ("iceoryx2", "wake-receiver") => wake::ice_receiver(&a, b),
        ("aeron", "publisher") => aeron::publisher(&a, b),
        ("aeron", "subscriber") => aeron::subscriber(&a, b),
        ("aeron", "ping") => aeron::pinger(&a, b),
        ("aeron", "pong") => aeron::ponger(&a, b),
        ("aeron", "ol-publisher") => aeron::ol_publisher(&a, b),
        ("aeron", "ol-subscriber") => aeron::ol_subscriber(&a, b),
        ("iceoryx2", "publisher") => ice::publisher(&a, b),
        ("iceoryx2", "subscriber") => ice::subscriber(&a, b),
        ("iceoryx2", "ping") => ice::pinger(&a, b),
        ("iceoryx2", "pong") => ice::ponger(&a, b),
        ("iceoryx2", "ol-publisher") => ice::ol_publisher(&a, b),
        ("iceoryx2", "ol-subscriber") => ice::ol_subscriber(&a, b),
        ("spsc-floor", "publisher") => baselines::spsc_publisher(&a, b),
        ("spsc-floor", "subscriber") => baselines::spsc_subscriber(&a, b),
        ("floor", "ping") => baselines::floor_pinger(&a, b),
        ("floor", "pong") => baselines::floor_ponger(&a, b),
        ("message-floor", "ping") => baselines::message_floor_pinger(&a, b),
        ("message-floor", "pong") => baselines::message_floor_ponger(&a, b),
        _ => return Err(format!("unknown role `{role}` in {}", ROLE.var()).into()),
    }
    Ok(())
}
