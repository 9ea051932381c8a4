use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

// The bytemuck `pod` option is gone: zerocopy's derives check plain data now.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
#[salias(pod)]
struct Quote {
    bid: u64,
}

fn main() {}
