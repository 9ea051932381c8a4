//! Connects to the typed OrderedMpsc channel a C++ (or any) subscriber created and
//! publishes quotes: `cpp_quote_subscriber NAME COUNT`, then `cargo run -p salias-c
//! --example rust_quote_publisher -- NAME COUNT`.

#[path = "common/quote.rs"]
mod quote;

use std::time::{Duration, Instant};

use quote::{Quote, arguments, quote};
use salias::{Error, OrderedMpsc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (name, count) = arguments();
    // The subscriber creates the channel: wait for it a little.
    let start = Instant::now();
    let channel = loop {
        match OrderedMpsc::<Quote>::connect(&name) {
            Err(Error::NotFound { .. }) if start.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => break other?,
        }
    };
    let mut publisher = channel.publisher()?;
    for index in 0..count {
        publisher.send(&quote(index))?;
    }
    println!("published {count} quotes to {name}");
    Ok(())
}
