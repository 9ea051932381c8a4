//! examples/hello_subscriber.rs: creates the channel "quotes" and prints what arrives. Run it first.
use salias::{Config, FifoMpsc, ReceiveError, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug)]
#[repr(C)]
struct Quote {
    instrument: u64,
    bid: f64,
    ask: f64,
}

fn main() -> Result<(), salias::Error> {
    let channel = FifoMpsc::<Quote>::create(&Config::new("quotes"))?; // removed when dropped
    let mut subscriber = channel.subscriber()?;
    loop {
        match subscriber.recv() {
            // A view into shared memory: `*quote` copies it out.
            Ok(quote) => println!("{:?}", *quote),
            // Everything the publisher sent was received, and it has gone.
            Err(ReceiveError::Disconnected) => return Ok(()),
            Err(other) => return Err(other.into()),
        }
    }
}
