use salias::SaliasMessage;

#[derive(SaliasMessage)]
struct Order {
    id: u64,
    price: u64,
}

fn main() {}
