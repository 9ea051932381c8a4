//! A subscriber's health: noticing a truncated channel, a fork, a corrupt ring, and (Ordered)
//! numbers lost with a dead publisher.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::Subscriber;
use crate::error::Result;
use crate::handle_error::ReceiveError;
use crate::kind::{Mode, Topology};
use crate::message::Payload;
use crate::platform;
use crate::protocol::{self};
use crate::region::Shared;
use crate::wire::layout::{SLOT_FREE, SUBSCRIBER_TETHERED};

/// Consecutive empty polls before the subscriber starts checking, at most every
/// `HEALTH_INTERVAL`, whether it is stuck on a dead publisher or a corrupt ring.
pub(super) const HEALTH_AFTER_MISSES: u32 = 2048;
pub(super) const HEALTH_INTERVAL: Duration = Duration::from_millis(1);

/// What the gap search sees of publisher `ring`: whether it lives, and what it holds.
pub(super) fn publisher_view(shared: &Shared, ring: usize) -> protocol::PublisherView<'_, AtomicU64> {
    let slot = shared.publisher_slot(ring);
    let token = slot.holder.token.load(Ordering::Acquire);
    protocol::PublisherView {
        alive: token != SLOT_FREE && platform::token_alive(token),
        pending: &slot.progress.pending,
        pending_count: &slot.progress.pending_count,
    }
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// Called while nothing arrives: in Ordered mode, declares lost the numbers that
    /// publishers took with them when they died; in every mode, reports a ring whose
    /// publisher says it has committed past a frame that is not there. Returns whether a
    /// gap was skipped (so a search may now succeed).
    #[cold]
    pub(super) fn check_health(&mut self) -> Result<bool, ReceiveError> {
        let shared = &*self.shared;
        // Waiting on a frame that will never come may mean the memory was truncated.
        if let Err(error) = shared.check_objects() {
            return Err(self.fault.record(shared, error).into());
        }
        for (ring, reader) in self.readers.iter().enumerate() {
            let reported = protocol::reported_tail(&shared.publisher_slot(ring).progress.tail);
            if reported > reader.head && self.peek(ring)?.is_none() {
                // The publisher reports progress only after committing: a frame missing
                // below it was overwritten or never properly written.
                let what = format!(
                    "ring {ring}'s publisher reports frames up to position {reported}, but the frame at {} is not committed",
                    reader.head
                );
                return Err(self.fault.corrupt(shared, what).into());
            }
        }
        if !M::ORDERED {
            return Ok(false);
        }
        let wanted = self.next_sequence;
        let publisher = |ring| publisher_view(shared, ring);
        let sequence = &shared.hot().sequence.next;
        let found = protocol::find_gap(wanted, sequence, self, self.readers.len(), publisher);
        let Some(end) = found.map_err(|error| self.gap_error(error))? else {
            return Ok(false);
        };
        self.record_gap(wanted..end);
        Ok(true)
    }

    /// The numbers `lost`, from `next_sequence` on, will never arrive: counted as one gap
    /// and reported with the next message.
    pub(super) fn record_gap(&mut self, lost: std::ops::Range<u64>) {
        let missing = lost.end - lost.start;
        self.gaps.events += 1;
        self.gaps.missing = self.gaps.missing.saturating_add(missing);
        self.gap_before = self.gap_before.saturating_add(missing);
        self.next_sequence = lost.end;
        self.gaps.last = Some(lost);
    }

    /// Fails once the channel's memory was truncated under it, or in a `fork()` child;
    /// after this call's accesses to shared memory, so a fault in them is seen.
    #[inline(always)]
    pub(super) fn check_usable(&self) -> Result<(), ReceiveError> {
        platform::check_cell(self.health).map_err(|bad| self.fault.unhealthy(&self.shared, bad).into())
    }

    /// A tethered subscriber a publisher may demote: fails with `Demoted` once one did, so
    /// no view into memory a publisher may be overwriting is handed out.
    #[inline(always)]
    pub(super) fn check_tether(&mut self) -> Result<(), ReceiveError> {
        if K::FANOUT && self.tether {
            return self.check_demoted();
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn check_demoted(&mut self) -> Result<(), ReceiveError> {
        let kind = self.shared.subscriber_slot(self.slot).flow.kind.load(Ordering::Relaxed);
        if !self.demoted && kind != SUBSCRIBER_TETHERED {
            // Stop holding the other publishers back too.
            self.untether();
            self.demoted = true;
        }
        if self.demoted {
            return Err(ReceiveError::Demoted);
        }
        Ok(())
    }

    /// What the gap search found wrong, as this call's error.
    #[cold]
    pub(super) fn gap_error(&self, error: protocol::GapError<ReceiveError>) -> ReceiveError {
        let what = match error {
            protocol::GapError::Head(error) => return error,
            protocol::GapError::CounterOutOfRange { taken } => {
                format!("the global sequence counter reads {taken}, out of range")
            }
            protocol::GapError::NeverTaken { ring, sequence, taken } => {
                format!("ring {ring} has a frame that carries sequence {sequence} but only {taken} were ever taken")
            }
        };
        self.fault.corrupt(&self.shared, what).into()
    }
}
