//! salias across processes: this process creates the channels, starts one child per
//! role (itself, re-executed by `support::role` with the role and the run's parameters in
//! its environment), starts them together and collects their reports.

mod channels;
pub mod child;
mod reports;

use std::time::{Duration, Instant};

use matching_engine::{EventMsg, OrderMsg};
use salias::{Config, FifoFanout, FifoMpsc, OrderedMpsc, ReceiveError};
use support::clock::now_ns;
use support::role::Children;

use crate::params::Params;
use crate::systems::RunResult;
use channels::{Control, GO, Names};
use child::{ROLE, RoleKind, RoleParams};
use reports::collect_reports;

pub fn run_salias(p: &Params, run: usize) -> RunResult {
    let base = format!("me-pipe-{}-{run}", std::process::id());
    let names = Names::new(&base);
    let children_count = p.gateways + 1 + p.subscribers;
    let _orders = OrderedMpsc::<OrderMsg>::create(
        &Config::new(names.orders.as_str())
            .publishers(p.gateways)
            .capacity(4 << 20),
    )
    .expect("create orders channel");
    let _events = FifoFanout::<EventMsg>::create(
        &Config::new(names.events.as_str())
            .subscribers(p.subscribers)
            .capacity(16 << 20),
    )
    .expect("create events channel");
    let ready = FifoMpsc::<Control>::create(
        &Config::new(names.ready.as_str())
            .publishers(children_count)
            .capacity(64 << 10),
    )
    .expect("create ready channel");
    let control = FifoFanout::<Control>::create(
        &Config::new(names.control.as_str())
            .publishers(2)
            .subscribers(children_count)
            .capacity(64 << 10),
    )
    .expect("create control channel");
    let mut ready_rx = ready.subscriber().expect("ready subscriber");
    let mut go = control.publisher().expect("control publisher");

    let mut children = Children::new();
    let roles = std::iter::once((RoleKind::Engine, 0))
        .chain((0..p.subscribers).map(|s| (RoleKind::Subscriber, s)))
        .chain((0..p.gateways).map(|g| (RoleKind::Gateway, g)));
    for (role, index) in roles {
        let params = RoleParams {
            base: base.clone(),
            index,
            params: p.clone(),
        };
        let mut command = ROLE
            .command_with(role.name(), &params)
            .unwrap_or_else(|e| panic!("{e}"));
        children
            .spawn(role.child_name(index), &mut command)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // Everyone connected, subscribed and generated their requests: start 2 ms from now.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut checked_in = 0;
    while checked_in < children_count {
        match ready_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(_) => checked_in += 1,
            // Each child drops its ready publisher after checking in: between two, none is
            // left for a moment, which the receive says once.
            Err(ReceiveError::Disconnected) => {}
            Err(ReceiveError::TimedOut) => {
                if let Err(e) = children.check_running() {
                    panic!("a pipeline process exited before the start: {e}");
                }
                assert!(Instant::now() < deadline, "pipeline processes did not check in");
            }
            Err(e) => panic!("ready channel: {e}"),
        }
    }
    let t0 = now_ns() + 2_000_000;
    go.send(&Control { kind: GO, value: t0 }).expect("start");

    // A role that fails would leave the others waiting for it forever: the watchdog ends
    // the run at the first failure, or when the run takes far longer than planned, and
    // kills the rest.
    let limit = Duration::from_secs(60) + 10 * Duration::from_millis(p.duration_ms);
    let outputs = children.wait_all(limit).unwrap_or_else(|e| panic!("{e}"));
    collect_reports(p, t0, outputs)
}
