//! Every run's check of what a subscriber received: count, per-publisher order, a payload
//! word and the checksum.

use crate::message::Msg64;

/// Checks one received message against the per-publisher expectation.
pub struct Verifier {
    pub next: Vec<u64>,
    pub received: u64,
    pub checksum: u64,
}

impl Verifier {
    pub fn new(publishers: usize) -> Self {
        Verifier {
            next: vec![0; publishers],
            received: 0,
            checksum: 0,
        }
    }

    #[inline(always)]
    pub fn check(&mut self, m: &Msg64) {
        let producer = m.producer as usize;
        assert_eq!(m.seq, self.next[producer], "lost or reordered");
        assert_eq!(m.words[5], m.seq ^ m.producer, "corrupted");
        self.next[producer] += 1;
        self.received += 1;
        self.checksum = self.checksum.wrapping_add(m.seq);
    }

    pub fn finish(&self, publishers: u64, messages: u64) {
        assert_eq!(self.received, publishers * messages, "count");
        let expected = publishers.wrapping_mul(messages * (messages - 1) / 2);
        assert_eq!(self.checksum, expected, "checksum");
    }
}
