use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct Order {
    side: u8,
    id: u64,
}

fn main() {}
