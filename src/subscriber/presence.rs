//! Whether anyone still publishes: a subscriber that has received everything and finds
//! every publisher slot free (or held by a process that died) reports
//! [`ReceiveError::Disconnected`] once, then waits for a next publisher as at the start.
//!
//! A subscriber expects publishers once it has seen one: a slot held by a live process
//! when it joined or when it looked since, or a message received since its last report.
//! One that joined before any publisher waits for the first, as channels usually start.
//!
//! The look is cheap where it can be: one load of each publisher's holder word (lines
//! only claims and releases write), on empty receives past the spin phase and on every
//! empty receive of a watched handle. A dropped publisher frees its slot and wakes the
//! sleepers, so that is seen at once; a crashed one is found by the liveness check (system
//! calls), which runs with the health check, at most once a millisecond, and frees its
//! slot.

use super::Subscriber;
use crate::handle_error::ReceiveError;
use crate::kind::{Mode, Topology};
use crate::message::Payload;
use crate::protocol;

/// What a subscriber knows about its publishers' presence.
pub(super) struct Presence {
    /// A publisher was seen since the last report, or since the join.
    expecting: bool,
    /// `received` when `Disconnected` was last reported: a message since means a
    /// publisher came (and perhaps went) since.
    received_at_report: u64,
}

impl Presence {
    pub(super) fn new() -> Self {
        Presence {
            expecting: false,
            received_at_report: 0,
        }
    }
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// At the join: a subscriber that joins while a publisher lives expects it.
    pub(super) fn note_publishers_at_join(&mut self) {
        self.presence.expecting = self.live_publishers() > 0;
    }

    /// How many publisher slots are held by a live process now. Checks each holder
    /// (system calls): for monitoring, not for every receive.
    pub fn live_publishers(&self) -> u32 {
        let shared = &*self.shared;
        shared.live_holders((0..shared.publishers as usize).map(|p| &*shared.publisher_slot(p).holder))
    }

    /// Whether every publisher is gone while this subscriber expected one. `check_alive`:
    /// first free the slots of publishers that died (system calls; rate-limited by the
    /// caller). After `true`, look for messages once more before reporting: the loads here
    /// order the holders' last commits before that look.
    pub(super) fn publishers_gone(&mut self, check_alive: bool) -> bool {
        if check_alive {
            // Their frames stay in the rings and their numbers in their slots, for the
            // look and the gap search that follow.
            self.shared.reap_publishers();
        }
        if !self.every_publisher_slot_free() {
            self.presence.expecting = true;
            return false;
        }
        self.expects_publishers()
    }

    /// Every publisher slot free (one load of each holder word, `SYNC POINT departure`).
    fn every_publisher_slot_free(&self) -> bool {
        (0..self.readers.len()).all(|ring| protocol::is_free(&self.shared.publisher_slot(ring).holder.token))
    }

    /// Whether a publisher was seen since the last report.
    fn expects_publishers(&self) -> bool {
        self.presence.expecting || self.hot.received != self.presence.received_at_report
    }

    /// The cheap half of `publishers_gone` for a sleeper's last look: every slot free
    /// while a publisher was expected. Changes nothing.
    pub(super) fn departure_visible(&self) -> bool {
        self.expects_publishers() && self.every_publisher_slot_free()
    }

    /// Reports the departure: from now on the subscriber waits for a next publisher.
    #[cold]
    pub(super) fn disconnected(&mut self) -> ReceiveError {
        self.presence.expecting = false;
        self.presence.received_at_report = self.hot.received;
        ReceiveError::Disconnected
    }
}
