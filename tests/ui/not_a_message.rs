use salias::{Config, FifoMpsc};

#[derive(Clone, Copy)]
#[repr(C)]
struct Order {
    id: u64,
}

fn main() {
    let _ = FifoMpsc::<Order>::create(&Config::new("orders"));
}
