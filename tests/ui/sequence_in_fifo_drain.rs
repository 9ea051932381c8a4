use salias::{Config, FifoMpsc, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Quote {
    bid: u64,
}

fn main() -> Result<(), salias::Error> {
    let channel = FifoMpsc::<Quote>::create(&Config::new("quotes"))?;
    let mut subscriber = channel.subscriber()?;
    subscriber.drain(16, |info, _quote| {
        let _ = info.sequence();
    })?;
    Ok(())
}
