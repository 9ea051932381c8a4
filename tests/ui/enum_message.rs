use salias::SaliasMessage;

#[derive(SaliasMessage)]
#[repr(u8)]
enum Side {
    Buy,
    Sell,
}

fn main() {}
