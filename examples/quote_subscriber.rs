//! Typed `Quote` subscriber; pair it with `quote_publisher` in another terminal.
//!
//! Run: `cargo run --release --example quote_subscriber [channel]`, then
//!      `cargo run --release --example quote_publisher [channel] [count]`.
//!
//! The subscriber owns the channel: it creates it, sleeps in the kernel while idle, and
//! removes the channel when it exits, also when stopped with Ctrl-C or SIGTERM (a process
//! killed by a signal runs no destructors, so the signals are caught here and turned into
//! an ordinary return). A publisher that stops is reported, and the subscriber waits for
//! the next one.

#[path = "common/quote.rs"]
mod quote;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use salias::{Config, FifoMpsc, ReceiveError};

use quote::{CHANNEL, Quote};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let name = std::env::args().nth(1).unwrap_or_else(|| CHANNEL.to_owned());
    // Set by SIGINT or SIGTERM; the receive loop looks at it between waits.
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, stop.clone())?;
    }
    let channel = FifoMpsc::<Quote>::create(&Config::new(&name).publishers(4))?;
    if let Some(stale) = channel.recovered() {
        println!(
            "quote_subscriber: removed a stale channel {name:?} left by pid {:?}",
            stale.owner_pid
        );
    }
    let mut subscriber = channel.subscriber()?;
    println!("quote_subscriber: waiting on channel {name:?} (up to 4 publishers)");

    let mut received = 0u64;
    let mut next_sequence = [0u64; 4];
    let mut spread_sum = 0.0;
    while !stop.load(Ordering::Relaxed) {
        let quote = match subscriber.recv_timeout(Duration::from_millis(100)) {
            Ok(quote) => quote,
            Err(ReceiveError::TimedOut) => continue,
            Err(ReceiveError::Disconnected) => {
                println!("quote_subscriber: every publisher has gone after {received} quotes; waiting for the next");
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let publisher = quote.publisher_slot();
        if quote.sequence == 0 {
            next_sequence[publisher] = 0; // a new publisher on this slot starts again
        }
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
    println!("quote_subscriber: stopped by a signal after {received} quotes; the channel is removed");
    Ok(()) // dropping `channel` removes it
}
