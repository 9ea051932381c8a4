//! The wire types really travel over salias: requests from two gateway publishers through
//! an `OrderedMpsc<OrderMsg>` into the engine, its events through a `FifoFanout<EventMsg>`
//! to a market-data subscriber, in one process. What the subscriber decodes must equal what
//! the engine produces when fed the same requests directly in the channel's global order.
//! This checks the message types (layout, fingerprint, decoding), not the pipeline, which
//! is future work with separate processes.

use matching_engine::{
    Engine, EngineConfig, Event, EventMsg, FlowConfig, OrderFlow, OrderMsg, SelfTradePrevention, SymbolConfig,
};
use salias::{Config, FifoFanout, OrderedMpsc};

fn engine(bands: &[SymbolConfig]) -> Engine {
    Engine::new(&EngineConfig {
        symbols: bands.to_vec(),
        max_resting_orders: 1 << 14,
        self_trade_prevention: SelfTradePrevention::CancelIncoming,
    })
    .unwrap()
}

#[test]
fn requests_and_events_cross_salias_channels_unchanged() {
    let bands = vec![
        SymbolConfig {
            min_price: 500,
            max_price: 1_500,
        },
        SymbolConfig {
            min_price: -100,
            max_price: 100,
        },
    ];
    let requests: Vec<OrderMsg> = OrderFlow::new(&FlowConfig::new(77, bands.clone()))
        .take(20_000)
        .collect();

    let pid = std::process::id();
    let orders =
        OrderedMpsc::<OrderMsg>::create(&Config::new(format!("me-orders-{pid}")).publishers(2).capacity(1 << 20))
            .unwrap();
    let events = FifoFanout::<EventMsg>::create(&Config::new(format!("me-events-{pid}")).capacity(4 << 20)).unwrap();
    let mut gateways = [orders.publisher().unwrap(), orders.publisher().unwrap()];
    let mut engine_input = orders.subscriber().unwrap();
    let mut engine_output = events.publisher().unwrap();
    let mut market_data = events.subscriber().unwrap();

    let mut matching = engine(&bands);
    let mut produced: Vec<EventMsg> = Vec::with_capacity(1024);
    let mut received_requests: Vec<OrderMsg> = Vec::new();
    let mut received_events: Vec<Event> = Vec::new();
    let mut expected_sequence = None;
    // Small batches keep every ring far from full, so no offer is refused.
    for (batch_number, batch) in requests.chunks(64).enumerate() {
        for (i, request) in batch.iter().enumerate() {
            let gateway = (batch_number + i) % 2;
            gateways[gateway]
                .offer(&OrderMsg {
                    gateway_id: gateway as u32,
                    ..*request
                })
                .unwrap();
        }
        while let Some(request) = engine_input.try_recv().unwrap() {
            let sequence = request.sequence();
            if let Some(expected) = expected_sequence {
                assert_eq!(sequence, expected, "the ordered channel must deliver without gaps");
            }
            expected_sequence = Some(sequence + 1);
            let request: OrderMsg = *request;
            received_requests.push(request);
            produced.clear();
            let _ = matching.apply(&request, &mut produced);
            for event in &produced {
                engine_output
                    .offer(&EventMsg {
                        gateway_ts_ns: request.gateway_ts_ns,
                        ..*event
                    })
                    .unwrap();
            }
        }
        while let Some(event) = market_data.try_recv().unwrap() {
            received_events.push(event.decode().unwrap());
        }
    }

    assert_eq!(received_requests.len(), requests.len());
    let mut direct = engine(&bands);
    let mut direct_events: Vec<Event> = Vec::new();
    for request in &received_requests {
        let _ = direct.apply(request, &mut direct_events);
    }
    let trades = direct_events
        .iter()
        .filter(|event| matches!(event, Event::Trade { .. }))
        .count();
    assert!(trades > 1_000, "the flow must trade ({trades} trades)");
    assert_eq!(received_events.len(), direct_events.len());
    assert!(
        received_events == direct_events,
        "events changed on the way through salias"
    );
}
