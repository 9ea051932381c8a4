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
    // A view pins its message in the ring; a second receive would move past it.
    let first = subscriber.try_recv()?;
    let second = subscriber.try_recv()?;
    drop((first, second));
    Ok(())
}
