//! The 64-byte message of the benchmarks and of comparison/, written once. Each includes
//! this file with `#[path]` rather than taking it from a crate: a crate that held it would
//! depend on salias while salias's benches depend on it, and the type must be local to
//! comparison/, which implements iceoryx2's `ZeroCopySend` for it.

use salias::SaliasMessage;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// 64 bytes: {producer u64, seq u64, 6 × u64 = seq ^ producer}.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug)]
#[repr(C)]
pub struct Msg64 {
    pub producer: u64,
    pub seq: u64,
    pub words: [u64; 6],
}

impl Msg64 {
    /// Message `seq` of publisher `producer`; receivers check `words[5]`.
    pub fn new(producer: u64, seq: u64) -> Self {
        Msg64 {
            producer,
            seq,
            words: [seq ^ producer; 6],
        }
    }
}

const _: () = assert!(size_of::<Msg64>() == 64);
