//! Typed `Quote` publisher; start `quote_subscriber` first (see there).
//!
//! Run: `cargo run --release --example quote_publisher [channel] [count]`

#[path = "common/quote.rs"]
mod quote;

use std::time::{Duration, Instant};

use salias::{Error, FifoMpsc, PublishError};

use quote::{CHANNEL, Quote};

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| CHANNEL.to_owned());
    let count: u64 = args.next().and_then(|c| c.parse().ok()).unwrap_or(1_000_000);

    // The subscriber may still be starting: wait for the channel a little while.
    let deadline = Instant::now() + Duration::from_secs(10);
    let channel = loop {
        match FifoMpsc::<Quote>::connect(&name) {
            Err(Error::NotFound { .. } | Error::Initializing { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => break other?,
        }
    };
    let mut publisher = channel.publisher()?;

    let start = Instant::now();
    for sequence in 0..count {
        let mid = 100.0 + (sequence % 1000) as f64 * 0.01;
        // Write the quote in place in the ring: no intermediate copy.
        let mut claim = loop {
            match publisher.claim() {
                Ok(claim) => break claim,
                Err(PublishError::Backpressured) => std::hint::spin_loop(),
                // `NoSubscriber` among them: the subscriber process has gone, and nobody
                // will read what is left in the ring; `main` prints what happened.
                Err(e) => return Err(e.into()),
            }
        };
        *claim = Quote {
            instrument: sequence % 16,
            sequence,
            bid: mid - 0.005,
            ask: mid + 0.005,
            bid_size: 100,
            ask_size: 200,
            last: (sequence + 1 == count) as u64,
        };
        claim.commit();
    }
    let elapsed = start.elapsed();
    println!(
        "quote_publisher: {count} quotes in {:.3} s ({:.1} M quotes/s) on publisher slot {}, {} offers backpressured",
        elapsed.as_secs_f64(),
        count as f64 / elapsed.as_secs_f64() / 1e6,
        publisher.slot(),
        publisher.backpressured()
    );
    Ok(())
}
