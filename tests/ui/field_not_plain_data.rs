use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Plain-looking, but it derives nothing that proves it.
#[repr(C)]
struct Price {
    ticks: u64,
}

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct Order {
    id: u64,
    price: Price,
}

fn main() {}
