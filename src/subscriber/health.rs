//! A subscriber's health: noticing a truncated channel, a fork, a corrupt ring, and (Ordered)
//! numbers lost with a dead publisher.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Subscriber;
use crate::error::Result;
use crate::kind::{Mode, Topology};
use crate::message::Payload;
use crate::platform;
use crate::protocol::{self};
use crate::wire::layout::SLOT_FREE;

/// Consecutive empty polls before the subscriber starts checking, at most every
/// `HEALTH_INTERVAL`, whether it is stuck on a dead publisher or a corrupt ring.
pub(super) const HEALTH_AFTER_MISSES: u32 = 2048;
pub(super) const HEALTH_INTERVAL: Duration = Duration::from_millis(1);

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// Called while nothing arrives: in Ordered mode, declares lost the numbers that
    /// publishers took with them when they died; in every mode, reports a ring whose
    /// publisher says it has committed past a frame that is not there. Returns whether a
    /// gap was skipped (so a search may now succeed).
    #[cold]
    pub(super) fn check_health(&mut self) -> Result<bool> {
        let shared = &*self.shared;
        // Waiting on a frame that will never come may mean the memory was truncated.
        shared.check_objects()?;
        for (ring, reader) in self.readers.iter().enumerate() {
            let reported = protocol::reported_tail(&shared.publisher_slot(ring).progress.tail);
            if reported > reader.head && self.peek(ring)?.is_none() {
                // The publisher reports progress only after committing: a frame missing
                // below it was overwritten or never properly written.
                return Err(shared.corrupt(
                    format!(
                        "ring {ring}'s publisher reports frames up to position {reported}, but the frame at {} is not committed",
                        reader.head
                    ),
                ));
            }
        }
        if !M::ORDERED {
            return Ok(false);
        }
        let wanted = self.next_sequence;
        let publisher = |ring| {
            let slot = shared.publisher_slot(ring);
            let token = slot.holder.token.load(Ordering::Acquire);
            protocol::PublisherView {
                alive: token != SLOT_FREE && platform::token_alive(token),
                pending: &slot.progress.pending,
                pending_count: &slot.progress.pending_count,
            }
        };
        let sequence = &*shared.hot().sequence;
        let Some(end) = protocol::find_gap(&shared.name, wanted, sequence, self, self.readers.len(), publisher)? else {
            return Ok(false);
        };
        self.gaps.events += 1;
        self.gaps.missing = self.gaps.missing.saturating_add(end - wanted);
        self.gaps.last = Some(wanted..end);
        self.gap_before = self.gap_before.saturating_add(end - wanted);
        self.next_sequence = end;
        Ok(true)
    }

    /// Fails once the channel's memory was truncated under it, or in a `fork()` child;
    /// after this call's accesses to shared memory, so a fault in them is seen.
    #[inline(always)]
    pub(super) fn check_usable(&self) -> Result<()> {
        platform::check_cell(self.health).map_err(|bad| bad.error(&self.shared.name))
    }
}
