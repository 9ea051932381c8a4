use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct Order {
    id: u64,
    next: *const u8,
}

fn main() {}
