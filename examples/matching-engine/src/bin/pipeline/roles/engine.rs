//! The engine: takes requests in the channel's order, matches them, publishes each
//! request's events in one batch, and hashes what went in and out.

use std::io::Write;

use hdrhistogram::Histogram;
use matching_engine::{Engine, EventMsg, WireHash, pipeline_engine_config};
use serde::{Deserialize, Serialize};
use support::clock::now_ns;
use support::hist::histogram;

use crate::codec::{self, WireHashDef};
use crate::params::Params;
use crate::transport::{EventTx, OrderRx};

#[derive(Serialize, Deserialize)]
pub struct EngineReport {
    pub received: u64,
    pub events: u64,
    pub refused: u64,
    pub gaps: u64,
    pub out_of_order: u64,
    #[serde(with = "WireHashDef")]
    pub input: WireHash,
    #[serde(with = "WireHashDef")]
    pub output: WireHash,
    pub first_recv_ns: u64,
    pub last_done_ns: u64,
    #[serde(with = "codec::histogram")]
    pub processing: Histogram<u64>,
    /// Actual send → received by the engine: the request channel's hop.
    #[serde(with = "codec::histogram")]
    pub inbound: Histogram<u64>,
}

impl EngineReport {
    /// Nothing received yet.
    pub fn empty() -> EngineReport {
        EngineReport {
            received: 0,
            events: 0,
            refused: 0,
            gaps: 0,
            out_of_order: 0,
            input: WireHash::default(),
            output: WireHash::default(),
            first_recv_ns: 0,
            last_done_ns: 0,
            processing: histogram(),
            inbound: histogram(),
        }
    }
}

/// A fresh engine for a run, built (and its memory allocated) before the start.
pub fn fresh_engine() -> Engine {
    Engine::new(&pipeline_engine_config()).expect("valid engine config")
}

pub fn run_engine(
    mut engine: Engine,
    rx: &mut impl OrderRx,
    tx: &mut impl EventTx,
    p: &Params,
    t0: u64,
    mut record: Option<&mut dyn Write>,
) -> EngineReport {
    let measure_from = t0 + p.warmup_ms * 1_000_000;
    let total = p.total();
    let mut events: Vec<EventMsg> = Vec::with_capacity(4096);
    let mut report = EngineReport::empty();
    let mut first_sequence = None;
    while report.received < total {
        let Some((sequence, request)) = rx.try_recv() else {
            rx.idle();
            continue;
        };
        let received_ns = now_ns();
        let index = report.received;
        let first = *first_sequence.get_or_insert(sequence);
        if sequence != first + index {
            report.out_of_order += 1;
        }
        events.clear();
        // Rejections are events like any other.
        let _ = engine.apply_stamped(&request, index, &mut events);
        let mut published = 0;
        while published < events.len() {
            match tx.try_send(&events[published..]) {
                0 => {
                    report.refused += 1;
                    std::hint::spin_loop();
                }
                n => published += n,
            }
        }
        let done_ns = now_ns();
        if request.gateway_ts_ns >= measure_from {
            report.processing.saturating_record(done_ns - received_ns);
            let sent = request.gateway_ts_ns + u64::from(request.send_delay_ns);
            report.inbound.saturating_record(received_ns.saturating_sub(sent));
        }
        if index == 0 {
            report.first_recv_ns = received_ns;
        }
        report.last_done_ns = done_ns;
        // Verification, after the timestamp: it is not the engine's work.
        report.input.add_words(&request.untimed().to_words());
        for event in &events {
            report.output.add_words(&event.untimed().to_words());
        }
        if let Some(out) = record.as_deref_mut() {
            out.write_all(&request.to_bytes()).expect("record input");
        }
        report.received += 1;
        report.events += events.len() as u64;
    }
    report.gaps = rx.gaps();
    report
}
