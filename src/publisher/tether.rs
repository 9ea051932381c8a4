//! Fanout flow control on the publisher's side: the overwrite frontier it publishes for
//! lossy subscribers, and demoting a tethered subscriber that held it back for longer than
//! the channel's `tether_timeout`.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::Publisher;
use crate::handle_error::PublishError;
use crate::kind::{Mode, Topology};
use crate::message::Payload;
use crate::protocol;
use crate::wire::layout::CURSOR_UNTETHERED;

impl<T: Payload, M: Mode, K: Topology> Publisher<T, M, K> {
    /// Publishes the new limit as this ring's overwrite frontier, with the tail and message
    /// count as the mark an overrun lossy subscriber restarts from. Once per limit raise.
    #[cold]
    #[inline(never)]
    pub(super) fn advance_frontier(&mut self) {
        let words = &self.shared.publisher_slot(self.slot).overwrite;
        protocol::advance_frontier(&**words, self.hot.limit, self.hot.tail, self.hot.published);
        self.hot.frontier = self.hot.limit;
    }

    /// Refused for lack of room at `now` (at most once per reap interval): once offers have
    /// been refused at this same tail for longer than the tether timeout, demotes the
    /// tethered subscriber whose cursor in this ring holds the publisher back (the slowest;
    /// several if they stand at the same position).
    #[cold]
    pub(super) fn demote_stuck_subscribers(&mut self, now: Instant) -> Result<(), PublishError> {
        let Some(timeout) = self.shared.tether_timeout else {
            return Ok(());
        };
        let tail = self.hot.tail;
        let since = match self.held {
            // The tail moved since: a new hold starts now.
            Some((since, at)) if at == tail => since,
            _ => {
                self.held = Some((now, tail));
                return Ok(());
            }
        };
        if now - since < timeout {
            return Ok(());
        }
        let shared = &*self.shared;
        let cursor = |subscriber| &**shared.cursor(subscriber, self.slot);
        // The slowest tethered cursor sets the limit: that subscriber holds us back.
        let slowest = (0..shared.subscribers as usize)
            .map(|subscriber| cursor(subscriber).load(Ordering::Relaxed))
            .filter(|&seen| seen < CURSOR_UNTETHERED)
            .min();
        let mut demoted = false;
        for subscriber in 0..shared.subscribers as usize {
            if Some(cursor(subscriber).load(Ordering::Relaxed)) == slowest {
                protocol::demote(&shared.subscriber_slot(subscriber).flow.kind, cursor(subscriber));
                demoted = true;
            }
        }
        if demoted {
            self.held = None;
            self.refresh_limit()?;
        }
        Ok(())
    }
}
