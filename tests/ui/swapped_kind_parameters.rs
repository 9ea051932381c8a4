use salias::{Channel, Config, Fifo, Mpsc, SaliasMessage};

#[derive(SaliasMessage, Clone, Copy)]
#[repr(C)]
struct Quote {
    bid: u64,
}

fn main() {
    let _ = Channel::<Quote, Mpsc, Fifo>::create(&Config::new("quotes"));
}
