//! The quote the cross-language examples exchange: the Rust twin of the C++ struct in
//! ../quote.hpp, and the command line they share.

use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// One two-sided quote.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
#[salias(version = 1)]
pub struct Quote {
    pub instrument: u64,
    pub bid: f64,
    pub ask: f64,
    pub bid_size: u32,
    pub ask_size: u32,
}

/// The `index`th quote a publisher sends, so the receiver can check each one.
pub fn quote(index: u64) -> Quote {
    Quote {
        instrument: index,
        bid: 100.0 + index as f64 * 0.01,
        ask: 100.02 + index as f64 * 0.01,
        bid_size: (index % 500) as u32 + 1,
        ask_size: (index % 300) as u32 + 1,
    }
}

/// The channel name and message count from the command line: `[NAME] [COUNT]`.
pub fn arguments() -> (String, u64) {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "quotes-demo".to_owned());
    let count = args
        .next()
        .map_or(10, |count| count.parse().expect("COUNT is a number"));
    (name, count)
}
