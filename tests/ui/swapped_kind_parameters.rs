use salias::{Channel, Config, Fifo, Mpsc, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Quote {
    bid: u64,
}

fn main() {
    let _ = Channel::<Quote, Mpsc, Fifo>::create(&Config::new("quotes"));
}
