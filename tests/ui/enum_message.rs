use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(u8)]
enum Side {
    Buy,
    Sell,
}

fn main() {}
