use salias::SaliasMessage;

#[derive(SaliasMessage)]
#[repr(C)]
struct Order {
    id: u64,
    is_buy: bool,
}

fn main() {}
