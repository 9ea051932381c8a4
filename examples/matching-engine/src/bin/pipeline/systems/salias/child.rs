//! One role of a cross-process run, in the child process the parent started for it.

use std::io::Write;

use matching_engine::{EventMsg, OrderMsg, gateway_requests};
use salias::{Adaptive, FifoFanout, OrderedMpsc};

use super::channels::{
    Control, ENGINE_DONE, Names, SaliasEventRx, SaliasEventTx, SaliasOrderRx, SaliasOrderTx, ready_and_wait_for_start,
};
use super::reports::{print_engine_report, print_gateway_report, print_subscriber_report};
use crate::cli::{Role, RoleKind};
use crate::clock::precise_sleep;
use crate::params::{Params, SubscriberWait};
use crate::placement::place_role;
use crate::roles::engine::{fresh_engine, run_engine};
use crate::roles::gateway::run_gateway;
use crate::roles::subscriber::{IDLE_YIELDS, YieldThenNap, run_subscriber};

pub fn record_file(p: &Params, name: &str) -> Option<std::io::BufWriter<std::fs::File>> {
    p.record
        .as_ref()
        .map(|dir| std::io::BufWriter::new(std::fs::File::create(dir.join(name)).expect("create record file")))
}

/// One role of a cross-process run, in this (child) process.
pub fn run_role(role: &Role, p: &Params) {
    let (base, index) = (role.base.as_str(), role.index);
    let names = Names::new(base);
    let control_channel = FifoFanout::<Control>::connect(&names.control).expect("connect control");
    // Subscribe before checking in: a fanout subscriber sees only what comes after it joins.
    let mut control = control_channel.subscriber().expect("control subscriber");
    match role.role {
        RoleKind::Gateway => {
            place_role(p, p.gateway_core(index));
            precise_sleep();
            let requests = gateway_requests(p.seed, index, p.per_gateway());
            let channel = OrderedMpsc::<OrderMsg>::connect(&names.orders).expect("connect orders");
            let mut tx = SaliasOrderTx(channel.publisher().expect("gateway publisher"));
            let t0 = ready_and_wait_for_start(&names, &mut control);
            let report = run_gateway(&mut tx, index, p, &requests, t0);
            print_gateway_report(index, &report);
        }
        RoleKind::Engine => {
            place_role(p, p.engine_core);
            let orders = OrderedMpsc::<OrderMsg>::connect(&names.orders).expect("connect orders");
            let events = FifoFanout::<EventMsg>::connect(&names.events).expect("connect events");
            let mut rx = SaliasOrderRx(orders.subscriber().expect("engine subscriber"));
            let mut tx = SaliasEventTx(events.publisher().expect("engine publisher"));
            let mut done = control_channel.publisher().expect("control publisher");
            let mut record = record_file(p, "input.bin");
            let engine = fresh_engine();
            let t0 = ready_and_wait_for_start(&names, &mut control);
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
            print_engine_report(&report);
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
            print_subscriber_report(index, &report);
        }
    }
}
