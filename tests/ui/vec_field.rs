use salias::SaliasMessage;

#[derive(SaliasMessage)]
#[repr(C)]
struct Order {
    id: u64,
    fills: Vec<u64>,
}

fn main() {}
