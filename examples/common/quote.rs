//! The `Quote` message shared by `quote_publisher` and `quote_subscriber`.

use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Channel both examples use unless given another name.
pub const CHANNEL: &str = "quotes";

/// A top-of-book quote: 48 bytes, no padding.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Quote {
    pub instrument: u64,
    pub sequence: u64,
    pub bid: f64,
    pub ask: f64,
    pub bid_size: u32,
    pub ask_size: u32,
    /// 1 on the publisher's last quote.
    pub last: u64,
}
