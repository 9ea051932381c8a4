use salias::SaliasMessage;

// Forgot zerocopy's derives: one error, saying which to add.
#[derive(SaliasMessage, Clone, Copy)]
#[repr(C)]
struct Quote {
    bid: u64,
}

fn main() {}
