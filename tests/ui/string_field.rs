use salias::SaliasMessage;

#[derive(SaliasMessage)]
#[repr(C)]
struct Order {
    id: u64,
    symbol: String,
}

fn main() {}
