//! Runs the roles as pinned threads of this process, over an in-process transport.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use matching_engine::gateway_requests;

use support::clock::now_ns;

use crate::pacing::precise_sleep;
use crate::params::Params;
use crate::placement::place_role;
use crate::roles::engine::{fresh_engine, run_engine};
use crate::roles::gateway::run_gateway;
use crate::roles::subscriber::run_subscriber;
use crate::systems::RunResult;
use crate::transport::{EventRx, EventTx, OrderRx, OrderTx};

/// How the engine tells an in-process subscriber it has finished, and how many events.
#[derive(Default)]
pub struct DoneFlag {
    pub done: AtomicBool,
    pub events: AtomicU64,
}

impl DoneFlag {
    pub fn set(&self, events: u64) {
        self.events.store(events, Ordering::Relaxed);
        self.done.store(true, Ordering::Release);
    }

    pub fn get(&self) -> Option<u64> {
        self.done
            .load(Ordering::Acquire)
            .then(|| self.events.load(Ordering::Relaxed))
    }
}

/// Runs the roles as pinned threads over the given transports.
pub fn run_threads<OT, OR, ET, ER>(
    p: &Params,
    order_txs: Vec<OT>,
    mut order_rx: OR,
    mut event_tx: ET,
    event_rxs: Vec<ER>,
    done: Arc<DoneFlag>,
) -> RunResult
where
    OT: OrderTx + Send + 'static,
    OR: OrderRx + Send + 'static,
    ET: EventTx + Send + 'static,
    ER: EventRx + Send + 'static,
{
    let parties = p.gateways as usize + 1 + p.subscribers as usize + 1;
    let ready = Arc::new(std::sync::Barrier::new(parties));
    let start = Arc::new(std::sync::Barrier::new(parties));
    let t0_cell = Arc::new(AtomicU64::new(0));
    let take_t0 = {
        let (ready, start, t0_cell) = (ready.clone(), start.clone(), t0_cell.clone());
        move || {
            ready.wait();
            start.wait();
            t0_cell.load(Ordering::Acquire)
        }
    };
    let gateways: Vec<_> = order_txs
        .into_iter()
        .enumerate()
        .map(|(g, mut tx)| {
            let (p, take_t0) = (p.clone(), take_t0.clone());
            std::thread::spawn(move || {
                place_role(&p, p.gateway_core(g as u32));
                precise_sleep();
                let requests = gateway_requests(p.seed, g as u32, p.per_gateway());
                let t0 = take_t0();
                run_gateway(&mut tx, g as u32, &p, &requests, t0)
            })
        })
        .collect();
    let engine = {
        let (p, take_t0, done) = (p.clone(), take_t0.clone(), done.clone());
        std::thread::spawn(move || {
            place_role(&p, p.engine_core);
            let engine = fresh_engine();
            let t0 = take_t0();
            let report = run_engine(engine, &mut order_rx, &mut event_tx, &p, t0, None);
            done.set(report.events);
            report
        })
    };
    let subscribers: Vec<_> = event_rxs
        .into_iter()
        .enumerate()
        .map(|(s, mut rx)| {
            let (p, take_t0) = (p.clone(), take_t0.clone());
            std::thread::spawn(move || {
                place_role(&p, p.subscriber_core(s as u32));
                precise_sleep();
                let t0 = take_t0();
                run_subscriber(&mut rx, &p, t0, None)
            })
        })
        .collect();
    ready.wait();
    let t0 = now_ns() + 2_000_000;
    t0_cell.store(t0, Ordering::Release);
    start.wait();
    RunResult {
        t0,
        gateways: gateways
            .into_iter()
            .map(|h| h.join().expect("gateway thread"))
            .collect(),
        engine: engine.join().expect("engine thread"),
        subscribers: subscribers
            .into_iter()
            .map(|h| h.join().expect("subscriber thread"))
            .collect(),
    }
}
