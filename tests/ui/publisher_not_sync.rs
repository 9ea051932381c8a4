use salias::{Config, FifoMpsc, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
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
