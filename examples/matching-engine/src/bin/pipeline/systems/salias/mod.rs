//! salias across processes: this process creates the channels, starts one child per
//! role (itself, re-executed with `--role`), starts them together and collects their
//! reports.

mod channels;
pub mod child;
mod reports;

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use matching_engine::{EventMsg, OrderMsg};
use salias::{Config, Error, FifoFanout, FifoMpsc, OrderedMpsc};

use crate::cli::RoleKind;
use crate::clock::now_ns;
use crate::params::Params;
use crate::systems::RunResult;
use channels::{Control, GO, Names};
use reports::parse_reports;

/// Kills the children still running when a run fails (and panics).
pub struct Children(pub Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

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

    let exe = std::env::current_exe().expect("own executable");
    let mut children = Children(Vec::new());
    let roles = std::iter::once((RoleKind::Engine, 0))
        .chain((0..p.subscribers).map(|s| (RoleKind::Subscriber, s)))
        .chain((0..p.gateways).map(|g| (RoleKind::Gateway, g)));
    for (role, index) in roles {
        children.0.push(
            Command::new(&exe)
                .args(["--role", role.name(), &base, &index.to_string()])
                .args(p.to_args())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn role"),
        );
    }
    // Everyone connected, subscribed and generated their requests: start 2 ms from now.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut checked_in = 0;
    while checked_in < children_count {
        match ready_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(_) => checked_in += 1,
            Err(Error::TimedOut) => {
                for child in &mut children.0 {
                    if let Ok(Some(status)) = child.try_wait() {
                        panic!("a pipeline process exited before the start: {status}");
                    }
                }
                assert!(Instant::now() < deadline, "pipeline processes did not check in");
            }
            Err(e) => panic!("ready channel: {e}"),
        }
    }
    let t0 = now_ns() + 2_000_000;
    go.send(&Control { kind: GO, value: t0 }).expect("start");

    let readers: Vec<_> = children
        .0
        .iter_mut()
        .map(|child| {
            let mut stdout = child.stdout.take().expect("piped stdout");
            std::thread::spawn(move || {
                let mut text = String::new();
                stdout.read_to_string(&mut text).expect("child output");
                text
            })
        })
        .collect();
    // A role that fails would leave the others waiting for it forever: watch them all,
    // and on the first failure panic, which kills the rest (`Children::drop`).
    loop {
        let mut running = 0;
        for child in &mut children.0 {
            match child.try_wait().expect("wait for role") {
                Some(status) => assert!(status.success(), "a pipeline process failed: {status}"),
                None => running += 1,
            }
        }
        if running == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let outputs: Vec<String> = readers.into_iter().map(|r| r.join().expect("reader")).collect();

    parse_reports(p, t0, &outputs)
}
