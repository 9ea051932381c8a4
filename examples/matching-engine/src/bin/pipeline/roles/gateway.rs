//! The gateway: sends its pre-generated requests at their planned times (open loop).

use hdrhistogram::Histogram;
use matching_engine::OrderMsg;
use serde::{Deserialize, Serialize};
use support::clock::now_ns;
use support::hist::histogram;

use crate::codec;
use crate::pacing::wait_until;
use crate::params::Params;
use crate::transport::OrderTx;

#[derive(Serialize, Deserialize)]
pub struct GatewayReport {
    pub sent: u64,
    pub refused: u64,
    pub first_send_ns: u64,
    pub last_send_ns: u64,
    #[serde(with = "codec::histogram")]
    pub queueing: Histogram<u64>,
}

pub fn run_gateway(tx: &mut impl OrderTx, g: u32, p: &Params, requests: &[OrderMsg], t0: u64) -> GatewayReport {
    let interval = p.interval_ns();
    let measure_from = t0 + p.warmup_ms * 1_000_000;
    let mut report = GatewayReport {
        sent: 0,
        refused: 0,
        first_send_ns: 0,
        last_send_ns: 0,
        queueing: histogram(),
    };
    for (i, request) in requests.iter().enumerate() {
        let planned = t0 + ((i as u64 * u64::from(p.gateways) + u64::from(g)) as f64 * interval) as u64;
        wait_until(planned, p.gateway_wait);
        let mut message = OrderMsg {
            gateway_ts_ns: planned,
            ..*request
        };
        loop {
            let now = now_ns();
            message.send_delay_ns = u32::try_from(now - planned).unwrap_or(u32::MAX);
            if tx.try_send(&message) {
                if planned >= measure_from {
                    report.queueing.saturating_record(now - planned);
                }
                if i == 0 {
                    report.first_send_ns = now;
                }
                report.last_send_ns = now;
                break;
            }
            report.refused += 1;
            std::hint::spin_loop();
        }
        report.sent += 1;
    }
    report
}
