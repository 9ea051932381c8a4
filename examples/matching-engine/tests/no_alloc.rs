//! Processing requests allocates nothing: a counting global allocator watches a mixed
//! workload (adds of every type, sweeps, cancels, modifies, rejections, queries) after
//! the engine, the flow and the sinks have been built.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use matching_engine::{
    Engine, EngineConfig, EventMsg, FlowConfig, LevelSnapshot, OrderFlow, OrderMsg, SelfTradePrevention, Side,
    SymbolConfig,
};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; only counts calls on this thread.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

const SINK_CAPACITY: usize = 4096;

fn mixed_workload_allocates_nothing(policy: SelfTradePrevention, pool: u32) {
    let bands = vec![
        SymbolConfig {
            min_price: 9_000,
            max_price: 11_000,
        },
        SymbolConfig {
            min_price: -50,
            max_price: 50,
        },
    ];
    let mut engine = Engine::new(&EngineConfig {
        symbols: bands.clone(),
        max_resting_orders: pool,
        self_trade_prevention: policy,
    })
    .unwrap();
    let mut flow = OrderFlow::new(&FlowConfig::new(0xA110C, bands));
    // Requests are generated up front so the generator's own bookkeeping is outside the window.
    let requests: Vec<OrderMsg> = flow.by_ref().take(400_000).collect();
    let mut events: Vec<EventMsg> = Vec::with_capacity(SINK_CAPACITY);
    let mut depth = [LevelSnapshot::default(); 10];
    let (warm_up, measured) = requests.split_at(50_000);
    for request in warm_up {
        events.clear();
        let _ = engine.apply(request, &mut events);
    }

    let mut most_events = 0;
    let mut trades = 0;
    let mut checksum = 0_i64;
    let before = allocations();
    for request in measured {
        events.clear();
        let _ = engine.apply(request, &mut events);
        most_events = most_events.max(events.len());
        trades += events
            .iter()
            .filter(|event| event.kind == matching_engine::event_kind::TRADE)
            .count();
        let symbol = request.symbol % engine.symbol_count();
        let levels = engine.depth(symbol, Side::Buy, &mut depth).unwrap();
        let best = engine.best_bid_offer(symbol).unwrap();
        checksum += depth[..levels].iter().map(|level| level.price).sum::<i64>() + best.ask.map_or(0, |l| l.price);
    }
    let allocated = allocations() - before;

    assert!(
        most_events < SINK_CAPACITY,
        "the sink had to grow, which is an allocation of its own"
    );
    assert!(
        trades > 10_000,
        "the workload must trade to mean anything ({trades} trades)"
    );
    assert!(checksum != 0);
    assert_eq!(allocated, 0, "{allocated} allocations in {} requests", measured.len());
}

#[test]
fn mixed_workload_allocates_nothing_cancel_resting() {
    mixed_workload_allocates_nothing(SelfTradePrevention::CancelResting, 1 << 16);
}

#[test]
fn mixed_workload_allocates_nothing_cancel_incoming() {
    mixed_workload_allocates_nothing(SelfTradePrevention::CancelIncoming, 1 << 16);
}

#[test]
fn mixed_workload_with_an_exhausted_pool_allocates_nothing() {
    mixed_workload_allocates_nothing(SelfTradePrevention::None, 64);
}

#[test]
fn the_counter_does_count() {
    let before = allocations();
    let boxed = std::hint::black_box(Box::new(7_u64));
    assert_eq!(allocations() - before, 1);
    drop(boxed);
}
