use salias::SaliasMessage;

#[derive(SaliasMessage)]
#[repr(C)]
struct Envelope<T> {
    id: u64,
    body: T,
}

fn main() {}
