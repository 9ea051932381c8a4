//! The smallest ordered channel: two publishers, one global order.
//!
//! Run: `cargo run --example minimal_ordered`
//!
//! Each message gets a global sequence number when it is published; the subscriber
//! delivers strictly in that order, whichever publisher sent it.

use salias::{Config, OrderedMpsc, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug)]
#[repr(C)]
struct Order {
    gateway: u64,
    client_order_id: u64,
}

fn main() -> Result<(), salias::Error> {
    let name = format!("minimal-ordered-{}", std::process::id());
    let channel = OrderedMpsc::<Order>::create(&Config::new(&name).publishers(2).capacity(64 * 1024))?;
    let mut gateway_a = channel.publisher()?;
    let mut gateway_b = channel.publisher()?;
    let mut engine = channel.subscriber()?;

    gateway_a.offer(&Order {
        gateway: 0,
        client_order_id: 1,
    })?;
    gateway_b.offer(&Order {
        gateway: 1,
        client_order_id: 1,
    })?;
    gateway_b.offer(&Order {
        gateway: 1,
        client_order_id: 2,
    })?;
    gateway_a.offer(&Order {
        gateway: 0,
        client_order_id: 2,
    })?;

    while let Some(order) = engine.try_recv()? {
        println!(
            "sequence {} from publisher slot {}: {:?}",
            order.sequence(),
            order.publisher_slot(),
            *order
        );
    }
    Ok(())
}
