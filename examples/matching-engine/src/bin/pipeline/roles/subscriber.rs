//! The market-data subscriber: stamps each request's first event, decodes and hashes
//! every event, and checks they come in the engine's order.

use std::io::Write;
use std::time::Duration;

use hdrhistogram::Histogram;
use matching_engine::WireHash;
use salias::wait::WaitStrategy;
use serde::{Deserialize, Serialize};
use support::clock::now_ns;
use support::hist::histogram;

use crate::codec::{self, WireHashDef};
use crate::params::Params;
use crate::transport::EventRx;

/// How many times an idle subscriber yields before it sleeps. It shares its core with
/// the gateways: spinning there would take their turn, and sleeping at once would make
/// the engine pay for a wake-up after nearly every request.
pub const IDLE_YIELDS: u32 = 20;

/// An idle subscriber's alternative to a futex: yield a few times, then sleep 5 µs at a
/// time and look again. Nobody has to wake it, so the engine never pays for a wake-up.
pub struct YieldThenNap;

pub const NAP: Duration = Duration::from_micros(5);

impl WaitStrategy for YieldThenNap {
    fn wait(&mut self, idle: u32, _park: &mut salias::wait::Park<'_>) {
        if idle < IDLE_YIELDS {
            std::thread::yield_now();
        } else {
            std::thread::sleep(NAP);
        }
    }
}

#[derive(Serialize, Deserialize)]
pub struct SubscriberReport {
    pub requests: u64,
    pub undecodable: u64,
    pub out_of_order: u64,
    #[serde(with = "WireHashDef")]
    pub output: WireHash,
    pub last_arrival_ns: u64,
    #[serde(with = "codec::histogram")]
    pub service: Histogram<u64>,
    #[serde(with = "codec::histogram")]
    pub total: Histogram<u64>,
}

pub fn run_subscriber(
    rx: &mut impl EventRx,
    p: &Params,
    t0: u64,
    mut record: Option<&mut dyn Write>,
) -> SubscriberReport {
    let measure_from = t0 + p.warmup_ms * 1_000_000;
    let total_requests = p.total();
    let mut report = SubscriberReport {
        requests: 0,
        undecodable: 0,
        out_of_order: 0,
        output: WireHash::default(),
        last_arrival_ns: 0,
        service: histogram(),
        total: histogram(),
    };
    let mut current = u64::MAX;
    let mut engine_events = None;
    loop {
        let polled = rx.poll(|event| {
            if event.engine_seq != current {
                // The first event of the next request: the engine published all of this
                // request's events at once, after it had finished the request.
                let arrival = now_ns();
                if event.engine_seq != report.requests {
                    report.out_of_order += 1;
                }
                current = event.engine_seq;
                report.requests += 1;
                report.last_arrival_ns = arrival;
                if event.gateway_ts_ns >= measure_from {
                    let sent = event.gateway_ts_ns + u64::from(event.send_delay_ns);
                    report.service.saturating_record(arrival.saturating_sub(sent));
                    report
                        .total
                        .saturating_record(arrival.saturating_sub(event.gateway_ts_ns));
                }
            }
            if event.decode().is_err() {
                report.undecodable += 1;
            }
            let untimed = event.untimed();
            report.output.add_words(&untimed.to_words());
            if let Some(out) = record.as_deref_mut() {
                out.write_all(&untimed.to_bytes()).expect("record events");
            }
        });
        if polled > 0 {
            continue;
        }
        if report.requests >= total_requests {
            if engine_events.is_none() {
                engine_events = rx.engine_done();
            }
            // Every request's first event is here; the last request's later events may
            // still be on their way, and the engine's count says how many there are.
            if engine_events.is_some_and(|events| report.output.count >= events) {
                break;
            }
        }
        rx.idle();
    }
    report
}
