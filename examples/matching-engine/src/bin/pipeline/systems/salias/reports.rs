//! The `REPORT` lines a child prints for the parent, and their parsing.

use matching_engine::WireHash;

use crate::histograms::{dump, undump};
use crate::params::Params;
use crate::roles::engine::EngineReport;
use crate::roles::gateway::GatewayReport;
use crate::roles::subscriber::SubscriberReport;
use crate::systems::RunResult;

pub fn print_gateway_report(index: u32, report: &GatewayReport) {
    println!(
        "REPORT gateway {index} sent {} refused {} first_send {} last_send {} queueing {}",
        report.sent,
        report.refused,
        report.first_send_ns,
        report.last_send_ns,
        dump(report.queueing.as_ref().expect("histogram"))
    );
}

pub fn print_engine_report(r: &EngineReport) {
    println!(
        "REPORT engine 0 received {} events {} refused {} gaps {} out_of_order {} input_count {} input_hash {} output_count {} output_hash {} first_recv {} last_done {} processing {} inbound {}",
        r.received,
        r.events,
        r.refused,
        r.gaps,
        r.out_of_order,
        r.input.count,
        r.input.hash,
        r.output.count,
        r.output.hash,
        r.first_recv_ns,
        r.last_done_ns,
        dump(&r.processing),
        dump(&r.inbound)
    );
}

pub fn print_subscriber_report(index: u32, r: &SubscriberReport) {
    println!(
        "REPORT subscriber {index} requests {} undecodable {} out_of_order {} output_count {} output_hash {} last_arrival {} service {} total {}",
        r.requests,
        r.undecodable,
        r.out_of_order,
        r.output.count,
        r.output.hash,
        r.last_arrival_ns,
        dump(&r.service),
        dump(&r.total)
    );
}

pub fn key<'a>(words: &[&'a str], name: &str) -> &'a str {
    let at = words
        .iter()
        .position(|w| *w == name)
        .unwrap_or_else(|| panic!("{name} missing in report"));
    words[at + 1]
}

pub fn num(words: &[&str], name: &str) -> u64 {
    key(words, name).parse().expect("number in report")
}

/// Every child's `REPORT` line, gathered into one result.
pub fn parse_reports(p: &Params, t0: u64, outputs: &[String]) -> RunResult {
    let mut result = RunResult {
        t0,
        gateways: Vec::new(),
        engine: EngineReport::empty(),
        subscribers: Vec::new(),
    };
    for line in outputs
        .iter()
        .flat_map(|o| o.lines())
        .filter(|l| l.starts_with("REPORT "))
    {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w[1] {
            "gateway" => result.gateways.push(GatewayReport {
                sent: num(&w, "sent"),
                refused: num(&w, "refused"),
                first_send_ns: num(&w, "first_send"),
                last_send_ns: num(&w, "last_send"),
                queueing: Some(undump(key(&w, "queueing"))),
            }),
            "engine" => {
                result.engine = EngineReport {
                    received: num(&w, "received"),
                    events: num(&w, "events"),
                    refused: num(&w, "refused"),
                    gaps: num(&w, "gaps"),
                    out_of_order: num(&w, "out_of_order"),
                    input: WireHash {
                        count: num(&w, "input_count"),
                        hash: num(&w, "input_hash"),
                    },
                    output: WireHash {
                        count: num(&w, "output_count"),
                        hash: num(&w, "output_hash"),
                    },
                    first_recv_ns: num(&w, "first_recv"),
                    last_done_ns: num(&w, "last_done"),
                    processing: undump(key(&w, "processing")),
                    inbound: undump(key(&w, "inbound")),
                }
            }
            _ => result.subscribers.push(SubscriberReport {
                requests: num(&w, "requests"),
                undecodable: num(&w, "undecodable"),
                out_of_order: num(&w, "out_of_order"),
                output: WireHash {
                    count: num(&w, "output_count"),
                    hash: num(&w, "output_hash"),
                },
                last_arrival_ns: num(&w, "last_arrival"),
                service: undump(key(&w, "service")),
                total: undump(key(&w, "total")),
            }),
        }
    }
    assert_eq!(result.gateways.len(), p.gateways as usize, "a gateway did not report");
    assert_eq!(
        result.subscribers.len(),
        p.subscribers as usize,
        "a subscriber did not report"
    );
    result
}
