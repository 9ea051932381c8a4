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
    let mut claim = publisher.claim()?;
    // The claim lives in the publisher's ring: the publisher cannot go first.
    drop(publisher);
    claim.bid = 1;
    claim.commit();
    Ok(())
}
