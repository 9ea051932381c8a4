//! One raw-data record per run, in the shared records' structs (`support::records`):
//! every fact of a run in a field of its own, the label only a caption.

use support::records::{OpenLoop, PingPong, System, Throughput, oversubscribed};

use crate::message::MESSAGE_BYTES;
use crate::openloop;
use crate::pingpong::PingPongRun;
use crate::setup::Setup;
use crate::throughput::Run;

/// The throughput record of `setup`'s `run` in `round`.
pub fn throughput(setup: &Setup, round: usize, run: &Run) -> Throughput {
    let (kind, ring_bytes, buffer_messages) = match setup.system {
        System::Salias => (Some(setup.salias_kind()), Some(setup.param), None),
        System::Aeron => (Some("ipc"), Some(setup.param), None),
        System::Iceoryx2 => (Some("ipc::Service"), None, Some(setup.param)),
        System::SpscFloor | System::Floor | System::MessageFloor | System::RingFloor | System::WriteFloor => {
            (None, Some(setup.param), None)
        }
    };
    // Every publisher and subscriber polls in a loop (`Setup::busy_processes`); iceoryx2's
    // blocking send, whose own wait yields and then sleeps, is counted as busy too.
    let busy_processes = setup.busy_processes();
    Throughput {
        bench: setup.bench,
        system: setup.system,
        round,
        label: setup.label(),
        kind: kind.map(str::to_owned),
        publishers: setup.publishers,
        subscribers: setup.subscribers,
        ring_bytes,
        buffer_messages,
        api: setup.api,
        batch: setup.batch as u32,
        message_bytes: MESSAGE_BYTES as u64,
        messages_per_publisher: setup.messages,
        published_per_s: run.published_per_s,
        delivered_per_s: run.delivered_per_s,
        delivered_bytes_per_s: Some(run.delivered_per_s * MESSAGE_BYTES as f64),
        refused_fraction: run.refused,
        placement: run.placement.clone(),
        busy_processes,
        oversubscribed: setup.marked_oversubscribed || oversubscribed(busy_processes),
        state: run.state,
        messages_per_drain: None,
        receive: None,
        subscriber_pauses: (setup.subscriber_pauses > 0).then_some(setup.subscriber_pauses),
        huge_page_bytes: None,
    }
}

/// The ping-pong record: one way = round trip / 2, the count as it is.
pub fn pingpong(system: System, round: usize, run: &PingPongRun) -> PingPong {
    PingPong {
        system,
        round,
        cores: run.cores,
        one_way_ns: run.round_trips.map(|ns| ns / 2),
        batched: run.batched,
        state: run.state,
    }
}

/// The open-loop record of `system`'s run `r` at `offered_per_s`, for `plan` = (duration,
/// warm-up) seconds.
pub fn openloop(
    system: System,
    round: usize,
    offered_per_s: f64,
    plan: (f64, f64),
    r: &openloop::OpenLoop,
) -> OpenLoop {
    OpenLoop {
        system,
        round,
        offered_per_s,
        achieved_per_s: r.achieved_per_s,
        duration_s: plan.0,
        warmup_s: plan.1,
        refused_fraction: r.refused,
        late_fraction: r.late_fraction,
        saturated: r.saturated(),
        placement: r.placement.clone(),
        queueing_ns: r.queueing,
        service_ns: r.service,
        total_ns: r.total,
        realtime: r.realtime,
        state: r.state,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use support::records::Api;

    /// The record as it is written.
    fn test_line(setup: &Setup, round: usize, run: &Run) -> serde_json::Value {
        serde_json::to_value(throughput(setup, round, run)).unwrap()
    }

    fn run() -> Run {
        Run {
            published_per_s: 2e6,
            delivered_per_s: 1e6,
            refused: 0.5,
            placement: "S0@1 P0@0".into(),
            state: None,
        }
    }

    #[test]
    fn a_throughput_line_names_its_setup_in_fields() {
        let setup = Setup::new(System::Salias, Api::OfferBatch, 2, 1000, 1 << 20);
        let line = test_line(&setup, 3, &run());
        assert_eq!(line["bench"], "throughput");
        assert_eq!(line["system"], "salias");
        assert_eq!(line["kind"], "FifoMpsc");
        assert_eq!(line["api"], "offer_batch");
        assert_eq!(line["batch"], 16);
        assert_eq!(line["ring_bytes"], 1 << 20);
        assert_eq!(line["buffer_messages"], Value::Null);
        assert_eq!(line["busy_processes"], 3);
        assert_eq!(line["delivered_bytes_per_s"], 64e6);
        let written = serde_json::to_string(&throughput(&setup, 3, &run())).unwrap();
        assert!(
            written.starts_with(r#"{"bench":"throughput","system":"salias","round":3,"label":"#),
            "{written}"
        );
    }

    #[test]
    fn iceoryx2s_blocking_send_keeps_its_own_api() {
        let blocking = Setup::new(System::Iceoryx2, Api::LoanUninitBlock, 1, 1000, 16384);
        let line = test_line(&blocking, 0, &run());
        assert_eq!(line["api"], "loan_uninit_block");
        assert_eq!(line["kind"], "ipc::Service");
        assert_eq!(line["buffer_messages"], 16384);
        assert_eq!(line["ring_bytes"], Value::Null);
        let retrying = Setup::new(System::Iceoryx2, Api::LoanUninit, 1, 1000, 16384);
        assert_eq!(test_line(&retrying, 0, &run())["api"], "loan_uninit");
    }

    #[test]
    fn a_fanout_headline_run_counts_every_busy_process() {
        let salias = Setup::new(System::Salias, Api::Offer, 2, 1000, 4 << 20)
            .with_subscribers(2)
            .headline(false);
        let line = test_line(&salias, 1, &run());
        assert_eq!(line["bench"], "headline");
        assert_eq!(line["kind"], "FifoFanout");
        assert_eq!(
            (line["publishers"].clone(), line["subscribers"].clone()),
            (2.into(), 2.into())
        );
        assert_eq!(line["busy_processes"], 4);
        assert_eq!(line["oversubscribed"], oversubscribed(4));
        let aeron = Setup::new(System::Aeron, Api::TryClaim, 2, 1000, 4 << 20)
            .with_subscribers(2)
            .headline(true);
        let line = test_line(&aeron, 1, &run());
        assert_eq!(line["busy_processes"], 4, "the driver parks between duty cycles");
        assert_eq!(line["ring_bytes"], 4 << 20, "the term length");
        assert_eq!(line["oversubscribed"], true, "marked, whatever the cores");
        assert!(line["label"].as_str().unwrap().contains("2P2S"));
    }

    #[test]
    fn the_spsc_floor_has_no_kind() {
        let setup = Setup::new(System::SpscFloor, Api::Batch, 1, 1000, 1 << 20);
        let line = test_line(&setup, 0, &run());
        assert_eq!(
            (line["kind"].clone(), line["api"].clone()),
            (Value::Null, "batch".into())
        );
    }
}
