//! Checking a run: counts and hashes must agree across every role.

use hdrhistogram::Histogram;
use support::hist::histogram;

use crate::params::Params;
use crate::systems::RunResult;

pub struct Summary {
    pub offered: f64,
    pub achieved: f64,
    pub requests: u64,
    pub events: u64,
    pub refused_gateway: u64,
    pub refused_engine: u64,
    pub queueing: Histogram<u64>,
    pub service: Histogram<u64>,
    pub total: Histogram<u64>,
    pub processing: Histogram<u64>,
    pub inbound: Histogram<u64>,
}

/// Checks counts and hashes across every role; Err says what disagreed.
pub fn verify(p: &Params, r: &RunResult) -> Result<Summary, String> {
    let total = p.total();
    let sent: u64 = r.gateways.iter().map(|g| g.sent).sum();
    let e = &r.engine;
    let mut problems = Vec::new();
    if sent != total {
        problems.push(format!("gateways sent {sent} of {total} requests"));
    }
    if e.received != total || e.input.count != total {
        problems.push(format!("engine received {} of {total} requests", e.received));
    }
    if e.gaps != 0 || e.out_of_order != 0 {
        problems.push(format!("engine saw {} gaps, {} out of order", e.gaps, e.out_of_order));
    }
    if e.output.count != e.events || e.events < total {
        problems.push(format!("engine published {} events for {total} requests", e.events));
    }
    for (s, sub) in r.subscribers.iter().enumerate() {
        if sub.requests != total || sub.out_of_order != 0 || sub.undecodable != 0 {
            problems.push(format!(
                "subscriber {s}: {} requests, {} out of order, {} undecodable",
                sub.requests, sub.out_of_order, sub.undecodable
            ));
        }
        if sub.output != e.output {
            problems.push(format!(
                "subscriber {s} received {} events hashing to {:#x}; the engine published {} hashing to {:#x}",
                sub.output.count, sub.output.hash, e.output.count, e.output.hash
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let mut queueing = histogram();
    for g in &r.gateways {
        queueing.add(&g.queueing).expect("same bounds");
    }
    let (mut service, mut all) = (histogram(), histogram());
    for s in &r.subscribers {
        service.add(&s.service).expect("same bounds");
        all.add(&s.total).expect("same bounds");
    }
    // Achieved: requests answered (first event at subscriber 0) per second from t0.
    let last = r.subscribers[0].last_arrival_ns;
    Ok(Summary {
        offered: p.rate,
        achieved: total as f64 / ((last - r.t0) as f64 / 1e9),
        requests: total,
        events: e.events,
        refused_gateway: r.gateways.iter().map(|g| g.refused).sum(),
        refused_engine: e.refused,
        queueing,
        service,
        total: all,
        processing: e.processing.clone(),
        inbound: e.inbound.clone(),
    })
}
