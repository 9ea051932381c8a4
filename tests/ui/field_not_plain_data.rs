use salias::SaliasMessage;

/// Plain-looking, but it derives nothing that proves it.
#[repr(C)]
struct Price {
    ticks: u64,
}

#[derive(SaliasMessage)]
#[repr(C)]
struct Order {
    id: u64,
    price: Price,
}

fn main() {}
