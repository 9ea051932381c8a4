//! Every run's check of what a subscriber received: count, per-publisher order, a payload
//! word and the checksum.

use crate::message::Msg64;

/// Checks one received message after another against the per-publisher expectation.
pub struct Verifier {
    next: Vec<u64>,
    received: u64,
    checksum: u64,
}

impl Verifier {
    pub fn new(publishers: usize) -> Self {
        Verifier {
            next: vec![0; publishers],
            received: 0,
            checksum: 0,
        }
    }

    /// Messages checked so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Panics (failing the subscriber's process, and so the run) on a lost, reordered or
    /// corrupted message.
    #[inline(always)]
    pub fn check(&mut self, m: &Msg64) {
        let producer = m.producer as usize;
        assert_eq!(m.seq, self.next[producer], "lost or reordered");
        assert_eq!(m.words[5], m.seq ^ m.producer, "corrupted");
        self.next[producer] += 1;
        self.received += 1;
        self.checksum = self.checksum.wrapping_add(m.seq);
    }

    /// Panics unless exactly `messages` from each of `publishers` came, with the checksum
    /// of sequence numbers 0 .. messages each.
    pub fn finish(&self, publishers: u64, messages: u64) {
        assert_eq!(self.received, publishers * messages, "count");
        let expected = publishers.wrapping_mul(messages * (messages - 1) / 2);
        assert_eq!(self.checksum, expected, "checksum");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_publishers_interleaved_in_order_pass() {
        let mut v = Verifier::new(2);
        for seq in 0..5 {
            v.check(&Msg64::new(1, seq));
            v.check(&Msg64::new(0, seq));
        }
        assert_eq!(v.received(), 10);
        v.finish(2, 5);
    }

    #[test]
    #[should_panic(expected = "lost or reordered")]
    fn a_lost_message_fails() {
        let mut v = Verifier::new(1);
        v.check(&Msg64::new(0, 0));
        v.check(&Msg64::new(0, 2));
    }

    #[test]
    #[should_panic(expected = "corrupted")]
    fn a_corrupted_payload_fails() {
        let mut v = Verifier::new(1);
        let mut m = Msg64::new(0, 0);
        m.words[5] = 7;
        v.check(&m);
    }

    #[test]
    #[should_panic(expected = "count")]
    fn too_few_messages_fail() {
        let mut v = Verifier::new(1);
        v.check(&Msg64::new(0, 0));
        v.finish(1, 2);
    }
}
