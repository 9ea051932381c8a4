use salias::{Config, FifoFanout, SaliasMessage};

#[derive(SaliasMessage, Clone, Copy)]
#[repr(C)]
struct Quote {
    bid: u64,
}

fn main() -> Result<(), salias::Error> {
    let channel = FifoFanout::<Quote>::create(&Config::new("quotes"))?;
    let mut subscriber = channel.subscriber()?;
    if let Some(quote) = subscriber.try_recv()? {
        let _ = quote.sequence();
    }
    Ok(())
}
