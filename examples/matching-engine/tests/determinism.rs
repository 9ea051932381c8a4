//! The same seed gives a byte-identical event stream: replaying the input reproduces every
//! trade, which is what lets a replica or a post-mortem replay trust the engine.

use matching_engine::{
    Engine, EngineConfig, EventMsg, EventSink, EventTally, FlowConfig, OrderFlow, SelfTradePrevention, SymbolConfig,
};

fn bands() -> Vec<SymbolConfig> {
    vec![
        SymbolConfig {
            min_price: 9_000,
            max_price: 11_000,
        },
        SymbolConfig {
            min_price: 1,
            max_price: 64,
        },
    ]
}

/// Every event's wire bytes, in order, and the tally over them.
fn event_stream(seed: u64, requests: usize) -> (Vec<u8>, EventTally) {
    let mut engine = Engine::new(&EngineConfig {
        symbols: bands(),
        max_resting_orders: 1 << 15,
        self_trade_prevention: SelfTradePrevention::CancelResting,
    })
    .unwrap();
    let mut bytes = Vec::new();
    let mut tally = EventTally::default();
    let mut events: Vec<EventMsg> = Vec::with_capacity(1024);
    for request in OrderFlow::new(&FlowConfig::new(seed, bands())).take(requests) {
        events.clear();
        let _ = engine.apply(&request, &mut events);
        for event in &events {
            bytes.extend_from_slice(&event.to_bytes());
            tally.emit(event.decode().unwrap());
        }
    }
    (bytes, tally)
}

#[test]
fn the_same_seed_gives_a_byte_identical_event_stream() {
    let (first_bytes, first) = event_stream(0xD15EA5E, 300_000);
    let (second_bytes, second) = event_stream(0xD15EA5E, 300_000);
    assert!(first.trades > 10_000, "the run must trade to prove anything: {first:?}");
    assert_eq!(first_bytes.len(), first.events as usize * 64);
    assert!(first_bytes == second_bytes, "the streams differ");
    assert_eq!(first, second);
}

#[test]
fn a_different_seed_gives_a_different_stream() {
    let (_, first) = event_stream(1, 50_000);
    let (_, second) = event_stream(2, 50_000);
    assert_ne!(first.hash, second.hash);
}

#[test]
fn the_stream_of_a_fixed_seed_never_changes() {
    // Pinned from a run that the differential test agreed with: a change here means the
    // engine's observable behaviour, the generator or the wire encoding changed. The bytes
    // are little-endian by construction, so the figures hold on any host. If the change was
    // intended, update them and say so in the commit.
    let (_, tally) = event_stream(42, 100_000);
    assert_eq!(
        (
            tally.events,
            tally.trades,
            tally.traded_qty,
            tally.rejects,
            tally.cancels,
            tally.hash
        ),
        (203_352, 29_952, 1_178_548, 36_354, 16_584, 6_046_926_998_302_692_087),
        "{tally:?}"
    );
}
