//! Synthetic order flow: deterministic from a seed, realistic enough to exercise every path.
//!
//! Each symbol has a mid price that random-walks one tick at a time inside its band.
//! Passive orders land a few ticks behind the mid (mostly close to it); marketable ones
//! reach a few ticks through it, so they sweep one or more levels. Cancels and modifies
//! target orders the generator sent earlier, some of which will have filled already (the
//! engine then rejects them, as it would a real late cancel). A small share of requests is
//! deliberately invalid.

use crate::engine::SymbolConfig;
use crate::types::{MAX_ORDER_QTY, OrderId, OrderType, Price, Qty, Side, SymbolId};
use crate::wire::{OrderMsg, order_kind};

/// SplitMix64 (Steele, Lea, Flood 2014): one 64-bit state, passes BigCrush, and every seed
/// is a good seed, which is all a reproducible workload needs.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound > 0`), by multiply-shift: the bias is below 2^-32
    /// for the small bounds used here.
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// True with probability `numerator / denominator`.
    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }
}

/// Relative weights of the request kinds the generator produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowMix {
    /// New limit or post-only orders at or behind the mid.
    pub passive_adds: u32,
    /// New limit, IOC, FOK or market orders priced through the mid.
    pub marketable_adds: u32,
    /// Cancels of earlier passive orders.
    pub cancels: u32,
    /// Modifies of earlier passive orders (quantity down, quantity up, or a new price).
    pub modifies: u32,
    /// Requests the engine must reject: unknown symbol, zero quantity, quantity too large,
    /// price out of band, duplicate id, malformed bytes, cancel of an id never sent.
    pub invalid: u32,
}

impl Default for FlowMix {
    /// Roughly the shape of a busy book: most traffic is quoting and cancelling.
    fn default() -> FlowMix {
        FlowMix {
            passive_adds: 45,
            marketable_adds: 12,
            cancels: 30,
            modifies: 10,
            invalid: 3,
        }
    }
}

/// Parameters of an [`OrderFlow`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowConfig {
    /// Everything is derived from this.
    pub seed: u64,
    /// The engine's symbols; each mid starts at the middle of its band.
    pub symbols: Vec<SymbolConfig>,
    /// Owners are drawn from `1..=owners`; few owners mean frequent self-trade attempts.
    pub owners: u64,
    /// Quantities are drawn from `1..=max_qty`.
    pub max_qty: Qty,
    /// Passive orders rest up to this many ticks behind the mid.
    pub passive_depth: u32,
    /// Marketable orders reach up to this many ticks through the mid.
    pub sweep_depth: u32,
    /// How many orders that can rest are remembered as cancel and modify targets. At most
    /// this many rest at once (bar a few left by reused ids): while memory is full, adds
    /// become cancels. Orders that filled stay remembered until the flow cancels them (and
    /// the engine rejects that late cancel).
    pub remembered_orders: usize,
    /// The request mix.
    pub mix: FlowMix,
}

impl FlowConfig {
    /// A workload over `symbols` with the default mix.
    pub fn new(seed: u64, symbols: Vec<SymbolConfig>) -> FlowConfig {
        FlowConfig {
            seed,
            symbols,
            owners: 16,
            max_qty: 100,
            passive_depth: 20,
            sweep_depth: 4,
            remembered_orders: 4096,
            mix: FlowMix::default(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum RequestKind {
    PassiveAdd,
    MarketableAdd,
    Cancel,
    Modify,
    Invalid,
}

#[derive(Clone, Copy, Debug)]
struct Remembered {
    id: OrderId,
    price: Price,
    qty: Qty,
    symbol: SymbolId,
}

/// An endless, reproducible stream of [`OrderMsg`] requests.
///
/// ```
/// use matching_engine::{FlowConfig, OrderFlow, SymbolConfig};
/// let band = SymbolConfig { min_price: 1_000, max_price: 2_000 };
/// let first: Vec<_> = OrderFlow::new(&FlowConfig::new(42, vec![band])).take(100).collect();
/// let again: Vec<_> = OrderFlow::new(&FlowConfig::new(42, vec![band])).take(100).collect();
/// assert_eq!(first, again);
/// ```
#[derive(Clone, Debug)]
pub struct OrderFlow {
    rng: SplitMix64,
    config: FlowConfig,
    mids: Vec<Price>,
    remembered: Vec<Remembered>,
    last_id: OrderId,
    sequence: u64,
    mix_total: u64,
}

impl OrderFlow {
    /// A stream for `config`. Panics if `config.symbols` is empty or every mix weight is
    /// zero: those are programming errors in a test or benchmark, not runtime input.
    pub fn new(config: &FlowConfig) -> OrderFlow {
        assert!(!config.symbols.is_empty(), "the flow needs at least one symbol");
        let mix = config.mix;
        let mix_total = u64::from(mix.passive_adds)
            + u64::from(mix.marketable_adds)
            + u64::from(mix.cancels)
            + u64::from(mix.modifies)
            + u64::from(mix.invalid);
        assert!(mix_total > 0, "at least one request kind needs a weight");
        OrderFlow {
            rng: SplitMix64::new(config.seed),
            mids: config
                .symbols
                .iter()
                .map(|band| band.min_price + (band.max_price - band.min_price) / 2)
                .collect(),
            remembered: Vec::with_capacity(config.remembered_orders),
            config: config.clone(),
            last_id: 0,
            sequence: 0,
            mix_total,
        }
    }

    /// The next request. Allocates nothing once the memory of earlier orders is full.
    pub fn next_request(&mut self) -> OrderMsg {
        self.sequence += 1;
        let symbol = self.rng.below(self.config.symbols.len() as u64) as SymbolId;
        self.walk_mid(symbol);
        let mut request = match self.pick_kind() {
            // Every order that can rest is remembered until it is cancelled, so bounding the
            // memory bounds the book, as traders' risk limits do: when it is full, cancel.
            RequestKind::PassiveAdd | RequestKind::MarketableAdd if self.memory_full() => self.cancel(symbol),
            RequestKind::PassiveAdd => self.passive_add(symbol),
            RequestKind::MarketableAdd => self.marketable_add(symbol),
            RequestKind::Cancel => self.cancel(symbol),
            RequestKind::Modify => self.modify(symbol),
            RequestKind::Invalid => self.invalid(symbol),
        };
        request.client_seq = self.sequence;
        request
    }

    fn pick_kind(&mut self) -> RequestKind {
        let mix = self.config.mix;
        let mut pick = self.rng.below(self.mix_total);
        for (weight, kind) in [
            (mix.passive_adds, RequestKind::PassiveAdd),
            (mix.marketable_adds, RequestKind::MarketableAdd),
            (mix.cancels, RequestKind::Cancel),
            (mix.modifies, RequestKind::Modify),
            (mix.invalid, RequestKind::Invalid),
        ] {
            if pick < u64::from(weight) {
                return kind;
            }
            pick -= u64::from(weight);
        }
        unreachable!("the pick is below the sum of the weights")
    }

    fn memory_full(&self) -> bool {
        self.remembered.len() >= self.config.remembered_orders
    }

    fn walk_mid(&mut self, symbol: SymbolId) {
        let band = self.config.symbols[symbol as usize];
        let margin = Price::from(self.config.passive_depth.max(self.config.sweep_depth)) + 1;
        let low = (band.min_price + margin).min(band.max_price);
        let high = (band.max_price - margin).max(low);
        let mid = &mut self.mids[symbol as usize];
        match self.rng.below(16) {
            0 => *mid = (*mid - 1).clamp(low, high),
            1 => *mid = (*mid + 1).clamp(low, high),
            _ => {}
        }
    }

    fn new_id(&mut self) -> OrderId {
        self.last_id += 1;
        self.last_id
    }

    fn qty(&mut self) -> Qty {
        1 + self.rng.below(self.config.max_qty.max(1))
    }

    fn owner(&mut self) -> u64 {
        1 + self.rng.below(self.config.owners.max(1))
    }

    fn side(&mut self) -> Side {
        if self.rng.chance(1, 2) { Side::Buy } else { Side::Sell }
    }

    fn clamp_to_band(&self, symbol: SymbolId, price: Price) -> Price {
        let band = self.config.symbols[symbol as usize];
        price.clamp(band.min_price, band.max_price)
    }

    /// Keeps `order` as a future cancel or modify target. Adds are turned into cancels
    /// while memory is full, so there is room here except after a reused id (see `invalid`).
    fn remember(&mut self, order: Remembered) {
        if self.remembered.len() < self.config.remembered_orders {
            self.remembered.push(order);
        }
    }

    fn passive_add(&mut self, symbol: SymbolId) -> OrderMsg {
        let side = self.side();
        // The smaller of two draws: orders cluster near the mid, as real quotes do.
        let depth = u64::from(self.config.passive_depth.max(1));
        let behind = self.rng.below(depth).min(self.rng.below(depth)) as Price;
        let mid = self.mids[symbol as usize];
        let price = self.clamp_to_band(
            symbol,
            match side {
                Side::Buy => mid - behind,
                Side::Sell => mid + behind,
            },
        );
        let order_type = if self.rng.chance(1, 6) {
            OrderType::PostOnly
        } else {
            OrderType::Limit
        };
        let (id, qty, owner) = (self.new_id(), self.qty(), self.owner());
        self.remember(Remembered { id, price, qty, symbol });
        OrderMsg::add(id, symbol, side, order_type, price, qty, owner)
    }

    fn marketable_add(&mut self, symbol: SymbolId) -> OrderMsg {
        let side = self.side();
        let through = 1 + self.rng.below(u64::from(self.config.sweep_depth.max(1))) as Price;
        let mid = self.mids[symbol as usize];
        let price = self.clamp_to_band(
            symbol,
            match side {
                Side::Buy => mid + through,
                Side::Sell => mid - through,
            },
        );
        let order_type = match self.rng.below(20) {
            0..=7 => OrderType::Limit,
            8..=12 => OrderType::ImmediateOrCancel,
            13..=15 => OrderType::FillOrKill,
            _ => OrderType::Market,
        };
        // Marketable orders are larger so that they sweep several levels.
        let (id, qty, owner) = (self.new_id(), self.qty() * 3, self.owner());
        if order_type == OrderType::Limit {
            self.remember(Remembered { id, price, qty, symbol });
        }
        let price = if order_type == OrderType::Market { 0 } else { price };
        OrderMsg::add(id, symbol, side, order_type, price, qty, owner)
    }

    fn pick_remembered(&mut self) -> Option<usize> {
        (!self.remembered.is_empty()).then(|| self.rng.below(self.remembered.len() as u64) as usize)
    }

    fn cancel(&mut self, symbol: SymbolId) -> OrderMsg {
        match self.pick_remembered() {
            // Forgotten once cancelled, so later requests do not keep targeting a dead id.
            Some(slot) => OrderMsg::cancel(self.remembered.swap_remove(slot).id),
            None => self.passive_add(symbol),
        }
    }

    fn modify(&mut self, symbol: SymbolId) -> OrderMsg {
        let Some(slot) = self.pick_remembered() else {
            return self.passive_add(symbol);
        };
        let target = self.remembered[slot];
        let (price, qty) = match self.rng.below(3) {
            0 => (target.price, (target.qty / 2).max(1)),
            1 => (target.price, target.qty + self.qty()),
            _ => {
                let step = 1 + self.rng.below(3) as Price;
                let price = if self.rng.chance(1, 2) {
                    target.price.saturating_add(step)
                } else {
                    target.price.saturating_sub(step)
                };
                (self.clamp_to_band(target.symbol, price), self.qty())
            }
        };
        self.remembered[slot].price = price;
        self.remembered[slot].qty = qty;
        OrderMsg::modify(target.id, price, qty)
    }

    fn invalid(&mut self, symbol: SymbolId) -> OrderMsg {
        let band = self.config.symbols[symbol as usize];
        let mid = self.mids[symbol as usize];
        let (id, qty, owner) = (self.new_id(), self.qty(), self.owner());
        let valid = OrderMsg::add(id, symbol, Side::Buy, OrderType::Limit, mid, qty, owner);
        match self.rng.below(8) {
            0 => OrderMsg {
                symbol: self.config.symbols.len() as SymbolId + self.rng.below(3) as SymbolId,
                ..valid
            },
            1 => OrderMsg { qty: 0, ..valid },
            2 => OrderMsg {
                price: band.max_price.saturating_add(1 + self.rng.below(10) as Price),
                ..valid
            },
            3 => OrderMsg {
                price: band.min_price.saturating_sub(1 + self.rng.below(10) as Price),
                side: Side::Sell as u8,
                ..valid
            },
            4 => match self.pick_remembered() {
                // Reusing an id: a duplicate if that order still rests, else a new order.
                Some(slot) => {
                    let id = self.remembered[slot].id;
                    self.remember(Remembered {
                        id,
                        price: mid,
                        qty,
                        symbol,
                    });
                    OrderMsg { order_id: id, ..valid }
                }
                None => OrderMsg { qty: 0, ..valid },
            },
            5 => OrderMsg {
                kind: [0, order_kind::MODIFY + 1][self.rng.below(2) as usize],
                ..valid
            },
            6 => OrderMsg::cancel(u64::MAX - self.rng.below(1_000)),
            // Too large, for an add or for a modify of an earlier order.
            _ => match self.pick_remembered() {
                Some(slot) if self.rng.chance(1, 2) => {
                    let target = self.remembered[slot];
                    OrderMsg::modify(target.id, target.price, MAX_ORDER_QTY + 1)
                }
                _ => OrderMsg { qty: u64::MAX, ..valid },
            },
        }
    }
}

impl Iterator for OrderFlow {
    type Item = OrderMsg;

    fn next(&mut self) -> Option<OrderMsg> {
        Some(self.next_request())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // First outputs for seed 1234567 from the reference C implementation.
        let mut rng = SplitMix64::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn below_stays_below_its_bound() {
        let mut rng = SplitMix64::new(9);
        for bound in [1, 2, 3, 7, 1000] {
            for _ in 0..1000 {
                assert!(rng.below(bound) < bound);
            }
        }
    }

    #[test]
    fn prices_stay_in_band_except_the_deliberately_invalid_ones() {
        let band = SymbolConfig {
            min_price: 100,
            max_price: 140,
        };
        let mut config = FlowConfig::new(5, vec![band]);
        config.mix.invalid = 0;
        for request in OrderFlow::new(&config).take(50_000) {
            if request.kind == order_kind::ADD && request.order_type != OrderType::Market as u8 {
                assert!((100..=140).contains(&request.price), "{request:?}");
            }
            if request.kind == order_kind::MODIFY {
                assert!((100..=140).contains(&request.price), "{request:?}");
            }
            assert!(request.kind == order_kind::CANCEL || request.qty > 0);
        }
    }

    #[test]
    fn different_seeds_give_different_flows() {
        let band = SymbolConfig {
            min_price: 0,
            max_price: 1000,
        };
        let a: Vec<_> = OrderFlow::new(&FlowConfig::new(1, vec![band])).take(50).collect();
        let b: Vec<_> = OrderFlow::new(&FlowConfig::new(2, vec![band])).take(50).collect();
        assert_ne!(a, b);
    }
}
