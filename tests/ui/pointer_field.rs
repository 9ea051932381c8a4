use salias::SaliasMessage;

#[derive(SaliasMessage)]
#[repr(C)]
struct Order {
    id: u64,
    next: *const u8,
}

fn main() {}
