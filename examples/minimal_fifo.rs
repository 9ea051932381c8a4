//! The smallest FIFO channel: create, publish, receive, in one process.
//!
//! Run: `cargo run --example minimal_fifo`

use salias::{Config, FifoMpsc, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug)]
#[repr(C)]
struct Tick {
    sequence: u64,
    value: f64,
}

fn main() -> Result<(), salias::Error> {
    let name = format!("minimal-fifo-{}", std::process::id());
    let channel = FifoMpsc::<Tick>::create(&Config::new(&name).capacity(64 * 1024))?;
    let mut publisher = channel.publisher()?;
    let mut subscriber = channel.subscriber()?;

    for sequence in 0..5 {
        publisher.offer(&Tick {
            sequence,
            value: sequence as f64 * 1.5,
        })?;
    }
    while let Some(tick) = subscriber.try_recv()? {
        println!("received {:?}", *tick);
    }
    Ok(())
}
