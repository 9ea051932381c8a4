use salias::{Config, FifoFanout, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Quote {
    bid: u64,
}

fn main() -> Result<(), salias::Error> {
    let channel = FifoFanout::<Quote>::create(&Config::new("quotes"))?;
    let mut subscriber = channel.subscriber()?;
    if let Some(quote) = subscriber.try_recv()? {
        let _ = quote.sequence();
    }
    Ok(())
}
