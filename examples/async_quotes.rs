//! Quotes awaited in tokio beside a timer, from a publisher process this program starts.
//!
//! Run: `cargo run --example async_quotes --features tokio [-- --quotes N]`.
//!
//! The program creates a channel, starts itself again as the publisher (which sends quotes
//! in bursts with pauses between, awaiting room with `send_async`), and in one `select!`
//! awaits the next quote (`recv_async`) and a heartbeat timer that ticks while the channel
//! is quiet. It prints what it got and exits once it has N quotes.

#[path = "common/quote.rs"]
mod quote;

use std::process::Command;
use std::time::Duration;

use clap::Parser;
use salias::{Config, FifoMpsc};

use quote::{CHANNEL, Quote};

#[derive(Parser)]
#[command(about = "Await salias quotes and a timer in one tokio select!")]
struct Args {
    /// How many quotes to receive before exiting.
    #[arg(long, default_value_t = 40)]
    quotes: u64,
    /// Run as the publisher of this channel (the program starts itself so).
    #[arg(long, hide = true)]
    publish_to: Option<String>,
}

/// Quotes per burst, and the pause before each burst.
const BURST: u64 = 8;
const PAUSE: Duration = Duration::from_millis(120);

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    match args.publish_to {
        Some(name) => publish(&name, args.quotes).await,
        None => subscribe(args.quotes).await,
    }
}

async fn subscribe(quotes: u64) -> Result<(), Box<dyn std::error::Error>> {
    let name = format!("{CHANNEL}-async-{}", std::process::id());
    let channel = FifoMpsc::<Quote>::create(&Config::new(&name))?;
    let mut subscriber = channel.subscriber()?;
    let mut publisher = Command::new(std::env::current_exe()?)
        .args(["--quotes", &quotes.to_string(), "--publish-to", &name])
        .spawn()?;
    println!(
        "async_quotes: awaiting {quotes} quotes on {name:?} from publisher process {}",
        publisher.id()
    );

    // A heartbeat every half pause; each quote pushes it back, so it ticks only when quiet.
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + PAUSE / 2, PAUSE / 2);
    let (mut received, mut quiet_ticks, mut next_sequence) = (0, 0, 0);
    while received < quotes {
        tokio::select! {
            quote = subscriber.recv_async() => {
                let quote = quote?;
                if quote.sequence != next_sequence {
                    return Err(format!("quote {} arrived where {next_sequence} was due", quote.sequence).into());
                }
                next_sequence += 1;
                received += 1;
                println!(
                    "quote {:>3}: instrument {} bid {:.2} ask {:.2}",
                    quote.sequence, quote.instrument, quote.bid, quote.ask
                );
                heartbeat.reset();
            }
            _ = heartbeat.tick() => {
                quiet_ticks += 1;
                println!("heartbeat: channel quiet, {received} quotes so far");
            }
        }
    }
    let status = publisher.wait()?;
    if !status.success() {
        return Err(format!("the publisher process failed: {status}").into());
    }
    println!("async_quotes: {received} quotes received, {quiet_ticks} heartbeats while the channel was quiet");
    Ok(())
}

async fn publish(name: &str, quotes: u64) -> Result<(), Box<dyn std::error::Error>> {
    let mut publisher = FifoMpsc::<Quote>::connect(name)?.publisher()?;
    for sequence in 0..quotes {
        if sequence % BURST == 0 {
            tokio::time::sleep(PAUSE).await;
        }
        let mid = 100.0 + (sequence % 17) as f64 * 0.25;
        let quote = Quote {
            instrument: 7 + sequence % 3,
            sequence,
            bid: mid - 0.05,
            ask: mid + 0.05,
            bid_size: 100,
            ask_size: 200,
            last: u64::from(sequence + 1 == quotes),
        };
        publisher.send_async(&quote).await?;
    }
    Ok(())
}
