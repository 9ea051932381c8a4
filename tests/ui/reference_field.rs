use salias::SaliasMessage;

#[derive(SaliasMessage)]
#[repr(C)]
struct Order {
    id: u64,
    price: &'static u64,
}

fn main() {}
