//! The workload of the showcase pipeline (`src/bin/pipeline/`), shared with its tests so
//! that a recorded run can be replayed against the same engine.

use crate::engine::{EngineConfig, SymbolConfig};
use crate::generator::{FlowConfig, OrderFlow};
use crate::types::SelfTradePrevention;
use crate::wire::OrderMsg;

/// Four symbols; symbol `s` trades around `10_000 * (s + 1)` ticks in a band of ±2,000.
pub fn pipeline_symbols() -> Vec<SymbolConfig> {
    (0..4_i64)
        .map(|s| SymbolConfig {
            min_price: 10_000 * (s + 1) - 2_000,
            max_price: 10_000 * (s + 1) + 2_000,
        })
        .collect()
}

/// The pipeline's engine: room for 2^16 resting orders, far more than the gateways' flows
/// keep resting (each remembers at most 4,096), so the pool never fills.
pub fn pipeline_engine_config() -> EngineConfig {
    EngineConfig {
        symbols: pipeline_symbols(),
        max_resting_orders: 1 << 16,
        self_trade_prevention: SelfTradePrevention::CancelResting,
    }
}

/// The first `count` requests gateway `gateway` sends for a run seeded with `seed`: its
/// own seeded flow, with ids and owners in the gateway's own range
/// ([`OrderMsg::for_gateway`]). Timestamps are left zero; the gateway stamps them.
pub fn gateway_requests(seed: u64, gateway: u32, count: usize) -> Vec<OrderMsg> {
    let flow_seed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(gateway);
    OrderFlow::new(&FlowConfig::new(flow_seed, pipeline_symbols()))
        .take(count)
        .map(|request| request.for_gateway(gateway))
        .collect()
}
