//! Typed `Quote` subscriber; pair it with `quote_publisher` in another terminal.
//!
//! Run: `cargo run --release --example quote_subscriber [channel]`, then
//!      `cargo run --release --example quote_publisher [channel] [count]`.
//!
//! The subscriber owns the channel: it creates it, sleeps in the kernel while idle, and
//! removes the channel when it exits.

#[path = "common/quote.rs"]
mod quote;

use salias::{Config, FifoMpsc};

use quote::{CHANNEL, Quote};

fn main() -> Result<(), salias::Error> {
    let name = std::env::args().nth(1).unwrap_or_else(|| CHANNEL.to_owned());
    let channel = FifoMpsc::<Quote>::create(&Config::new(&name).publishers(4))?;
    let mut subscriber = channel.subscriber()?;
    println!("quote_subscriber: waiting on channel {name:?} (up to 4 publishers)");

    let mut received = 0u64;
    let mut next_sequence = [0u64; 4];
    let mut spread_sum = 0.0;
    loop {
        let quote = subscriber.recv()?;
        let publisher = quote.publisher_slot();
        assert_eq!(
            quote.sequence, next_sequence[publisher],
            "quotes from one publisher arrive in order"
        );
        next_sequence[publisher] += 1;
        received += 1;
        spread_sum += quote.ask - quote.bid;
        if quote.last == 1 {
            println!(
                "quote_subscriber: {received} quotes, last from publisher slot {publisher} on instrument {}, mean spread {:.4}",
                quote.instrument,
                spread_sum / received as f64
            );
            return Ok(());
        }
    }
}
