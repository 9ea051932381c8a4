//! Finding room: the cached write limit and its refresh from subscriber cursors,
//! backpressure, and the rate-limited checks a held-back publisher makes.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Publisher;
use crate::error::Result;
use crate::handle_error::PublishError;
use crate::kind::{Mode, Topology};
use crate::message::Payload;
use crate::platform;
use crate::protocol;

/// How often a backpressured publisher checks for truncation and dead subscribers.
const REAP_INTERVAL: Duration = Duration::from_millis(1);

impl<T: Payload, M: Mode, K: Topology> Publisher<T, M, K> {
    /// Recomputes the write limit from the subscribers' cursors: the slowest subscriber
    /// still holding a slot bounds how far this publisher may write.
    pub(super) fn refresh_limit(&mut self) -> Result<(), PublishError> {
        let shared = &*self.shared;
        let cursors = (0..shared.subscribers as usize).map(|subscriber| &**shared.cursor(subscriber, self.slot));
        let before = self.hot.limit;
        self.hot.limit = protocol::write_limit(self.hot.tail, self.window, self.ring.capacity(), K::FANOUT, cursors).map_err(
            |protocol::BadCursor { subscriber, cursor }| {
                let what = format!(
                    "subscriber {subscriber}'s cursor in ring {} is {cursor}, outside the {} bytes before the publisher's position {}",
                    self.slot,
                    self.ring.capacity(),
                    self.hot.tail
                );
                PublishError::from(self.fault.corrupt(shared, what))
            },
        )?;
        if !K::FANOUT && self.hot.limit > before {
            // Room released: a subscriber is there (or was, and its leaving is news).
            self.expects_subscriber = true;
        }
        if K::FANOUT {
            // Lossy subscribers read the limit as what may be overwritten: it runs at most a
            // step ahead of the tail (`frontier_step`).
            self.hot.limit = self.hot.limit.min(self.hot.tail + self.frontier_step);
            if self.hot.limit > self.hot.frontier {
                // Before any write past the old frontier: lossy subscribers must know.
                self.advance_frontier();
            }
        }
        Ok(())
    }

    /// Fails once the channel's memory was truncated under it, or in a `fork()` child:
    /// checked before a publish touches shared memory, so such a handle writes nothing.
    #[inline(always)]
    pub(super) fn check_health(&self) -> Result<(), PublishError> {
        platform::check_cell(self.health).map_err(|bad| self.fault.unhealthy(&self.shared, bad).into())
    }

    /// Finds room for `frames` bytes of frames, returning the first one's position, and
    /// asks for the lines ahead of them.
    #[inline(always)]
    pub(super) fn reserve(&mut self, frames: u64) -> Result<u64, PublishError> {
        let pos = self.reserve_room(frames)?;
        self.prefetch_ahead(pos, pos + frames);
        Ok(pos)
    }

    /// Finds room for `frames` bytes of frames, returning the first one's position; the
    /// caller asks for the lines ahead.
    #[inline(always)]
    pub(super) fn reserve_room(&mut self, frames: u64) -> Result<u64, PublishError> {
        // An inherited (fork) or poisoned handle writes nothing: the one check a publish
        // makes. A truncation during this publish sends its frames to zero pages, and the
        // next call reports it.
        self.check_health()?;
        let pos = self.hot.tail;
        if pos + frames > self.hot.limit {
            self.refresh_limit()?;
            if pos + frames > self.hot.limit {
                self.reap_dead_subscribers()?;
            }
            if pos + frames > self.hot.limit {
                self.hot.backpressured = self.hot.backpressured.wrapping_add(1);
                self.progress
                    .get()
                    .backpressured
                    .store(self.hot.backpressured, Ordering::Relaxed);
                let departed = !K::FANOUT && self.subscriber_departed();
                self.refused(pos + frames);
                return Err(if departed {
                    PublishError::NoSubscriber
                } else {
                    PublishError::Backpressured
                });
            }
        }
        Ok(pos)
    }

    /// Backpressured: checks whether the channel's objects were truncated (a subscriber
    /// that stopped releasing may be one that lost its memory) and frees the slots of dead
    /// subscribers: on a fanout channel the limit is then recomputed without them, on an
    /// Mpsc channel the refusal becomes `NoSubscriber`. At most every `REAP_INTERVAL`,
    /// since both make system calls.
    #[cold]
    pub(super) fn reap_dead_subscribers(&mut self) -> Result<(), PublishError> {
        let now = Instant::now();
        if self.last_reap.is_some_and(|last| now - last < REAP_INTERVAL) {
            return Ok(());
        }
        self.last_reap = Some(now);
        if let Err(error) = self.shared.check_objects() {
            return Err(self.fault.record(&self.shared, error).into());
        }
        if !K::FANOUT {
            // A dead Mpsc subscriber's slot is freed, its cursors kept for its successor;
            // the refusal then says no subscriber is left.
            self.shared.reap_subscribers(false);
            return Ok(());
        }
        if self.shared.reap(true).1 > 0 {
            self.refresh_limit()?;
        }
        if self.shared.tether_timeout.is_some() {
            self.demote_stuck_subscribers(now)?;
        }
        Ok(())
    }

    /// Mpsc: whether the subscriber slot is free (its holder left, or a check freed a dead
    /// one's slot). One load of a line only claims and releases write.
    pub(super) fn no_subscriber(&self) -> bool {
        let shared = &*self.shared;
        (0..shared.subscribers as usize).all(|s| protocol::is_free(&shared.subscriber_slot(s).holder.token))
    }

    /// Mpsc, refused for lack of room: whether the subscriber this publisher expected has
    /// gone, so nobody will release room. Reported once: from then on the publisher waits
    /// for a next subscriber as one does that started before any (`Backpressured`).
    fn subscriber_departed(&mut self) -> bool {
        let gone = self.no_subscriber();
        let departed = gone && self.expects_subscriber;
        self.expects_subscriber = !gone;
        departed
    }

    /// How many frames of `frame` bytes fit now, refreshing the limit if fewer than
    /// `wanted` do.
    pub(super) fn room_for(&mut self, frame: u64, wanted: usize) -> Result<usize, PublishError> {
        if self.hot.tail + frame * wanted as u64 > self.hot.limit {
            self.refresh_limit()?;
        }
        Ok(((self.hot.limit.saturating_sub(self.hot.tail)) / frame).min(wanted as u64) as usize)
    }
}
