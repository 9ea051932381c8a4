//! Creates the typed OrderedMpsc channel and prints the quotes a C++ (or any) publisher
//! sends: `cargo run -p salias-c --example rust_quote_subscriber -- [NAME] [COUNT]`, then
//! `cpp_quote_publisher NAME COUNT` (built by ffi/examples/CMakeLists.txt).

#[path = "common/quote.rs"]
mod quote;

use quote::{Quote, arguments, quote};
use salias::{Config, OrderedMpsc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (name, count) = arguments();
    let channel = OrderedMpsc::<Quote>::create(&Config::new(&name).publishers(2))?;
    let mut subscriber = channel.subscriber()?;
    for index in 0..count {
        let received = subscriber.recv()?;
        if *received != quote(index) {
            return Err(format!("quote {index} arrived as {:?}", *received).into());
        }
        println!(
            "#{} from slot {}: instrument {} bid {:.2} x {} ask {:.2} x {}",
            received.sequence(),
            received.publisher_slot(),
            received.instrument,
            received.bid,
            received.bid_size,
            received.ask,
            received.ask_size
        );
    }
    Ok(())
}
