//! FNV-1a, 64-bit: the hash of the shared-memory object names (`platform::names`) and of
//! message layouts (`message`'s fingerprints). Every process must compute both alike, so
//! there is one.

/// The hash of no bytes, to start from.
pub(crate) const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// `hash` continued over `bytes`.
pub(crate) const fn hash(mut hash: u64, bytes: &[u8]) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(PRIME);
        i += 1;
    }
    hash
}

#[cfg(test)]
mod tests {
    /// The published FNV-1a test vectors: object names and fingerprints of every salias
    /// version depend on exactly this function.
    #[test]
    fn matches_the_reference_vectors() {
        assert_eq!(super::hash(super::OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(super::hash(super::OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(super::hash(super::OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
    }
}
