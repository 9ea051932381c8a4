//! The message: its number and the publisher's clock just before the commit.

use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug)]
#[repr(C)]
pub struct Stamp {
    pub seq: u64,
    /// `CLOCK_MONOTONIC` just before the publisher committed, in ns.
    pub sent_ns: u64,
}
