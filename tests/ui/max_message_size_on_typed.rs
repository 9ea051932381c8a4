use salias::{Config, FifoMpsc, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Quote {
    bid: u64,
}

fn main() -> Result<(), salias::Error> {
    // A typed channel's messages are `size_of::<Quote>()` bytes: there is no maximum to set.
    let _channel = FifoMpsc::<Quote>::create(&Config::new("quotes").max_message_size(64))?;
    Ok(())
}
