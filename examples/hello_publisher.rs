//! examples/hello_publisher.rs: sends ten quotes on "quotes". Then this, in another terminal.
use salias::{FifoMpsc, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug)]
#[repr(C)]
struct Quote {
    instrument: u64,
    bid: f64,
    ask: f64,
}

fn main() -> Result<(), salias::Error> {
    let channel = FifoMpsc::<Quote>::connect("quotes")?; // the same kind and type, or an error saying which differs
    let mut publisher = channel.publisher()?;
    for instrument in 0..10 {
        // Waits while the ring is full; `offer` would return `Backpressured` instead.
        publisher.send(&Quote {
            instrument,
            bid: 99.5,
            ask: 100.5,
        })?;
    }
    Ok(()) // dropping the publisher tells the subscriber, once it has everything
}
