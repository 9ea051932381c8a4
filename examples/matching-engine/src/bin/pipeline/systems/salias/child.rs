//! One role of a cross-process run, in the child process the parent started for it.

use std::io::Write;
use std::process::ExitCode;

use matching_engine::{EventMsg, OrderMsg, gateway_requests};
use salias::kind::Topology;
use salias::{FifoFanout, OrderedFanout, OrderedMpsc, wait::Adaptive};
use serde::{Deserialize, Serialize};
use support::role::{Role, report_json};

use super::channels::{
    Control, ENGINE_DONE, Names, SaliasEventRx, SaliasEventTx, SaliasOrderRx, SaliasOrderTx, ready_and_wait_for_start,
};
use crate::pacing::precise_sleep;
use crate::params::{Params, SubscriberWait};
use crate::placement::place_role;
use crate::roles::engine::{fresh_engine, run_engine};
use crate::roles::gateway::run_gateway;
use crate::roles::subscriber::{IDLE_YIELDS, YieldThenNap, run_subscriber};

/// The environment variable that names a pipeline process's role.
pub const ROLE: Role = Role::new("MATCHING_ENGINE_PIPELINE_ROLE");

/// The roles of a cross-process run, by the names their processes are started with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoleKind {
    Gateway,
    Engine,
    Subscriber,
}

impl RoleKind {
    pub fn name(self) -> &'static str {
        match self {
            RoleKind::Gateway => "gateway",
            RoleKind::Engine => "engine",
            RoleKind::Subscriber => "subscriber",
        }
    }

    fn from_name(name: &str) -> Option<RoleKind> {
        [RoleKind::Gateway, RoleKind::Engine, RoleKind::Subscriber]
            .into_iter()
            .find(|role| role.name() == name)
    }

    /// What the parent calls the child: `engine`, `gateway1`, `subscriber0`.
    pub fn child_name(self, index: u32) -> String {
        match self {
            RoleKind::Engine => "engine".into(),
            other => format!("{}{index}", other.name()),
        }
    }
}

/// What a role process is started with: the run's parameters, the base name of its
/// channels and its index among the processes of its role.
#[derive(Serialize, Deserialize)]
pub struct RoleParams {
    pub base: String,
    pub index: u32,
    pub params: Params,
}

/// A role process's `main`: `role` is what its environment names.
pub fn main(role: &str) -> ExitCode {
    let Some(kind) = RoleKind::from_name(role) else {
        eprintln!(
            "pipeline: {}={role:?} names no role (gateway, engine or subscriber); the pipeline sets it for the processes it starts",
            ROLE.var()
        );
        return ExitCode::FAILURE;
    };
    match ROLE.params::<RoleParams>() {
        Ok(params) => {
            run_role(kind, &params);
            ExitCode::SUCCESS
        }
        Err(problem) => {
            eprintln!("pipeline: {problem}");
            ExitCode::FAILURE
        }
    }
}

pub fn record_file(p: &Params, name: &str) -> Option<std::io::BufWriter<std::fs::File>> {
    p.record
        .as_ref()
        .map(|dir| std::io::BufWriter::new(std::fs::File::create(dir.join(name)).expect("create record file")))
}

/// One role of a cross-process run, in this (child) process.
fn run_role(role: RoleKind, role_params: &RoleParams) {
    let (p, index) = (&role_params.params, role_params.index);
    let names = Names::new(&role_params.base);
    let control_channel = FifoFanout::<Control>::connect(&names.control).expect("connect control");
    // Subscribe before checking in: a fanout subscriber sees only what comes after it joins.
    let mut control = control_channel.subscriber().expect("control subscriber");
    match role {
        RoleKind::Gateway => {
            place_role(p, p.gateway_core(index));
            precise_sleep();
            let requests = gateway_requests(p.seed, index, p.per_gateway());
            let report = if p.record_feed.is_some() {
                let channel = OrderedFanout::<OrderMsg>::connect(&names.orders).expect("connect orders");
                let mut tx = SaliasOrderTx(channel.publisher().expect("gateway publisher"));
                let t0 = ready_and_wait_for_start(&names, &mut control);
                run_gateway(&mut tx, index, p, &requests, t0)
            } else {
                let channel = OrderedMpsc::<OrderMsg>::connect(&names.orders).expect("connect orders");
                let mut tx = SaliasOrderTx(channel.publisher().expect("gateway publisher"));
                let t0 = ready_and_wait_for_start(&names, &mut control);
                run_gateway(&mut tx, index, p, &requests, t0)
            };
            report_json(&report);
        }
        RoleKind::Engine => {
            place_role(p, p.engine_core);
            if p.record_feed.is_some() {
                let orders = OrderedFanout::<OrderMsg>::connect(&names.orders).expect("connect orders");
                run_engine_role(
                    p,
                    &names,
                    &mut control,
                    SaliasOrderRx(orders.subscriber().expect("engine subscriber")),
                );
            } else {
                let orders = OrderedMpsc::<OrderMsg>::connect(&names.orders).expect("connect orders");
                run_engine_role(
                    p,
                    &names,
                    &mut control,
                    SaliasOrderRx(orders.subscriber().expect("engine subscriber")),
                );
            }
        }
        RoleKind::Subscriber => {
            place_role(p, p.subscriber_core(index));
            let events = FifoFanout::<EventMsg>::connect(&names.events).expect("connect events");
            let mut subscriber = events.subscriber().expect("market-data subscriber");
            precise_sleep();
            if p.subscriber_wait == SubscriberWait::Nap {
                subscriber.set_wait_strategy(YieldThenNap);
            } else {
                subscriber.set_wait_strategy(Adaptive {
                    spins: 0,
                    yields: IDLE_YIELDS,
                    ..Adaptive::default()
                });
            }
            let mut rx = SaliasEventRx {
                events: subscriber,
                control,
            };
            let mut record = record_file(p, &format!("events-{index}.bin"));
            let t0 = ready_and_wait_for_start(&names, &mut rx.control);
            let report = run_subscriber(&mut rx, p, t0, record.as_mut().map(|r| r as &mut dyn Write));
            if let Some(mut record) = record {
                record.flush().expect("flush record");
            }
            report_json(&report);
        }
    }
}

/// The engine's role once it has the order feed: publishes its events, reports when it is
/// done, and records its input if asked.
fn run_engine_role<K: Topology>(
    p: &Params,
    names: &Names,
    control: &mut salias::Subscriber<Control, salias::Fifo, salias::Fanout>,
    mut rx: SaliasOrderRx<K>,
) {
    let control_channel = FifoFanout::<Control>::connect(&names.control).expect("connect control");
    let events = FifoFanout::<EventMsg>::connect(&names.events).expect("connect events");
    let mut tx = SaliasEventTx(events.publisher().expect("engine publisher"));
    let mut done = control_channel.publisher().expect("control publisher");
    let mut record = record_file(p, "input.bin");
    let engine = fresh_engine();
    let t0 = ready_and_wait_for_start(names, control);
    let report = run_engine(
        engine,
        &mut rx,
        &mut tx,
        p,
        t0,
        record.as_mut().map(|r| r as &mut dyn Write),
    );
    done.send(&Control {
        kind: ENGINE_DONE,
        value: report.events,
    })
    .expect("report done");
    if let Some(mut record) = record {
        record.flush().expect("flush record");
    }
    report_json(&report);
}
