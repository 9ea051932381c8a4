use salias::{Config, FifoMpsc, SaliasMessage};

#[derive(SaliasMessage, Clone, Copy)]
#[repr(C)]
struct Quote {
    bid: u64,
}

fn main() -> Result<(), salias::Error> {
    let channel = FifoMpsc::<Quote>::create(&Config::new("quotes"))?;
    let publisher = channel.publisher()?;
    let shared = &publisher;
    std::thread::scope(|scope| {
        scope.spawn(move || format!("{shared:?}"));
    });
    Ok(())
}
