//! salias across processes: this process creates the channels, starts one child per
//! role (itself, re-executed by `support::role` with the role and the run's parameters in
//! its environment), starts them together and collects their reports.

mod channels;
pub mod child;
mod reports;

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use matching_engine::{EventMsg, OrderMsg};
use salias::{Config, FifoFanout, FifoMpsc, OrderedFanout, OrderedMpsc, ReceiveError};
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
    let orders = Config::new(names.orders.as_str())
        .publishers(p.gateways)
        .capacity(4 << 20);
    // Recorded, the feed is a Fanout channel: the recorder is a second subscriber, and
    // sees every request in the same global order as the engine.
    let (_orders, _recorded_orders) = match &p.record_feed {
        None => (
            Some(OrderedMpsc::<OrderMsg>::create(&orders).expect("create orders channel")),
            None,
        ),
        Some(_) => (
            None,
            Some(OrderedFanout::<OrderMsg>::create(&orders.subscribers(2)).expect("create orders channel")),
        ),
    };
    let recorder = p
        .record_feed
        .as_ref()
        .map(|file| record_feed(&names.orders, file, p.total()));
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
    if let Some(recorder) = &recorder {
        wait_for_recorder(&names.orders, recorder, deadline);
    }
    let t0 = now_ns() + 2_000_000;
    go.send(&Control { kind: GO, value: t0 }).expect("start");

    // A role that fails would leave the others waiting for it forever: the watchdog ends
    // the run at the first failure, or when the run takes far longer than planned, and
    // kills the rest.
    let limit = Duration::from_secs(60) + 10 * Duration::from_millis(p.duration_ms);
    let outputs = children.wait_all(limit).unwrap_or_else(|e| panic!("{e}"));
    if let Some(recorder) = recorder {
        let code = recorder.join().expect("the recorder thread");
        assert_eq!(code, 0, "salias record failed (its error is above)");
    }
    collect_reports(p, t0, outputs)
}

/// Records `count` messages of the order feed `orders` to `file` with `salias record`
/// (tethered), on a thread of this process; its exit code when it is done.
fn record_feed(orders: &str, file: &Path, count: u64) -> std::thread::JoinHandle<u8> {
    let args: Vec<OsString> = vec![
        "salias".into(),
        "record".into(),
        orders.into(),
        "-o".into(),
        file.into(),
        "--count".into(),
        count.to_string().into(),
    ];
    std::thread::spawn(move || salias_cli::run(args))
}

/// Waits until the recorder holds its subscriber slot beside the engine's, so that it
/// records from the first request.
fn wait_for_recorder(orders: &str, recorder: &std::thread::JoinHandle<u8>, deadline: Instant) {
    loop {
        let status = salias::status::channel_status(orders).expect("the orders channel's status");
        let held = status
            .subscribers
            .iter()
            .filter(|slot| slot.holder != salias::status::SlotHolder::Free)
            .count();
        if held == 2 {
            return;
        }
        assert!(!recorder.is_finished(), "salias record failed (its error is above)");
        assert!(Instant::now() < deadline, "salias record did not join the order feed");
        std::thread::sleep(Duration::from_millis(1));
    }
}
