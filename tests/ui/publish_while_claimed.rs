use salias::{Config, FifoMpsc, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Quote {
    bid: u64,
}

fn main() -> Result<(), salias::Error> {
    let channel = FifoMpsc::<Quote>::create(&Config::new("quotes"))?;
    let mut publisher = channel.publisher()?;
    // A claim holds its room in the ring; publishing past it would reorder the ring.
    let mut claim = publisher.claim()?;
    publisher.offer(&Quote { bid: 1 })?;
    claim.bid = 2;
    claim.commit();
    Ok(())
}
