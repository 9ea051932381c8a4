use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct Envelope<T> {
    id: u64,
    body: T,
}

fn main() {}
