//! The message: the benchmarks' 64 bytes (`benches/common/msg64.rs`), and what the
//! comparison adds to it.

#[path = "../../benches/common/msg64.rs"]
mod msg64;
pub use msg64::Msg64;

// SAFETY: plain `repr(C)` data of eight u64 words: no pointers, no padding, valid for any
// bit pattern, so it may live in iceoryx2's shared memory.
unsafe impl iceoryx2::prelude::ZeroCopySend for Msg64 {}

impl Msg64 {
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `self` is MESSAGE_BYTES = 64 bytes (asserted below) of `repr(C)` u64s
        // without padding, so every byte is initialised; the slice borrows `self`.
        unsafe { std::slice::from_raw_parts(self as *const Msg64 as *const u8, 64) }
    }

    pub fn read_from(bytes: &[u8]) -> Msg64 {
        assert_eq!(bytes.len(), 64, "message length");
        // SAFETY: `bytes` holds 64 readable bytes (asserted above); the read is unaligned-safe
        // and every bit pattern is a valid Msg64 (plain u64s).
        unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const Msg64) }
    }
}

/// Bytes of one message.
pub const MESSAGE_BYTES: usize = 64;

const _: () = assert!(std::mem::size_of::<Msg64>() == MESSAGE_BYTES);

/// The open-loop message: the stamps take words 0 and 1; word 5 stays `seq ^ producer`
/// so the usual verification (count, order, payload word, checksum) still applies.
#[inline(always)]
pub fn stamped(producer: u64, seq: u64, planned: u64, sent: u64) -> Msg64 {
    let mut m = Msg64::new(producer, seq);
    m.words[0] = planned;
    m.words[1] = sent;
    m
}
