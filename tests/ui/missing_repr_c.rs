use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout)]
struct Order {
    id: u64,
    price: u64,
}

fn main() {}
