//! Fault injection for the crash tests: a publisher that takes a sequence number and dies
//! (or stops) before committing it.

use super::Publisher;
use crate::kind::Topology;
use crate::message::Payload;

impl<T: Payload, M: crate::kind::GlobalOrder, K: Topology> Publisher<T, M, K> {
    /// Fault injection for crash tests: reserves room for a frame (waiting out
    /// backpressure), takes the next global sequence number and writes half a header,
    /// exactly as a publish would up to that point, then kills this process with SIGKILL
    /// before committing. Not for production.
    #[doc(hidden)]
    pub fn __take_sequence_then_die(&mut self) -> ! {
        self.take_sequence_uncommitted();
        // SAFETY: raise has no memory-safety preconditions.
        unsafe { libc::raise(libc::SIGKILL) };
        unreachable!("SIGKILL cannot be caught")
    }

    /// Fault injection for tests: like [`__take_sequence_then_die`], but stops this
    /// process with SIGSTOP instead, so it stays alive holding the number (as a publisher
    /// descheduled mid-publish would) until it is killed. Not for production.
    ///
    /// [`__take_sequence_then_die`]: Self::__take_sequence_then_die
    #[doc(hidden)]
    pub fn __take_sequence_then_stop(&mut self) -> ! {
        self.take_sequence_uncommitted();
        loop {
            // SAFETY: raise has no memory-safety preconditions.
            unsafe { libc::raise(libc::SIGSTOP) };
            // Continued: keep holding the number, never commit it.
        }
    }

    /// Takes the next sequence number into a reserved frame and leaves it uncommitted.
    pub(super) fn take_sequence_uncommitted(&mut self) {
        let frame = self.shape().len(T::FIXED_LEN.unwrap_or(0)) as u64;
        // Wait out backpressure: holding no number would leave no gap to report.
        let pos = match self.block(None, |p| p.reserve(frame)) {
            Ok(pos) => pos,
            Err(e) => panic!("fault injection could not reserve a frame: {e}"),
        };
        self.take_sequence_unchecked(1);
        self.ring.write_len(pos, 0xdead);
    }
}
