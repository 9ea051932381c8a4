use salias::SaliasMessage;

#[derive(SaliasMessage)]
#[repr(C)]
struct Order {
    side: u8,
    id: u64,
}

fn main() {}
