//! Slots changing hands on a mapped channel: claiming a free one, taking over a dead
//! holder's, reaping the dead, and recovering the true end of a ring a dead publisher left.

use std::sync::atomic::Ordering;

use super::Shared;
use crate::error::{Error, Result, Role};
use crate::platform::{self, Identity};
use crate::protocol;
use crate::wire::frame::Shape;
use crate::wire::layout::{CURSOR_IDLE, Holder, MAX_POSITION, SLOT_FREE};

/// How often a claim looks again at a slot whose holder word changed under it.
pub(super) const CLAIM_ATTEMPTS_PER_SLOT: u32 = 8;

/// Replaces `holder`'s word with `to` if its holder died (this process never counts as
/// dead: a reaper is alive).
fn replace_if_dead(holder: &Holder, to: u64) -> bool {
    protocol::replace_if_dead(&holder.token, to, platform::holder_alive)
}

/// Takes `holder`'s slot for `me` if it is free or its holder died.
fn take_if_free_or_dead(holder: &Holder, me: u64) -> bool {
    protocol::take_over(&holder.token, me, platform::token_alive, CLAIM_ATTEMPTS_PER_SLOT)
}

impl Shared {
    /// Claims the first free slot of `holders`, or takes over one whose holder died.
    pub(crate) fn claim_slot<'a>(
        &'a self,
        role: Role,
        holders: impl Iterator<Item = &'a Holder> + Clone,
    ) -> Result<usize> {
        let me = Identity::current().token();
        for (index, holder) in holders.clone().enumerate() {
            if protocol::claim_free(&holder.token, me) {
                return Ok(index);
            }
        }
        // All taken: a holder that died without releasing its slot gives it up.
        for (index, holder) in holders.enumerate() {
            if take_if_free_or_dead(holder, me) {
                return Ok(index);
            }
        }
        let slots = match role {
            Role::Publisher => self.publishers,
            Role::Subscriber => self.subscribers,
        };
        Err(Error::NoFreeSlot {
            name: self.name.clone(),
            role,
            slots,
        })
    }

    /// Frees the slots of holders that died. A dead fanout subscriber's cursors turn idle,
    /// so it stops holding publishers back; a dead Mpsc subscriber's cursors stay, so the
    /// next subscriber resumes there. Returns (publishers, subscribers) reaped.
    pub(crate) fn reap(&self, fanout: bool) -> (u32, u32) {
        (self.reap_publishers(), self.reap_subscribers(fanout))
    }

    /// Frees the slots of publishers that died; returns how many. Their rings keep what
    /// they committed (a successor recovers the true end, `recover_tail`), and an Ordered
    /// publisher's pending numbers stay readable for the gap search.
    pub(crate) fn reap_publishers(&self) -> u32 {
        // A dead publisher's slot is freed in one step: a slot taken over even for a
        // moment would make a concurrent claim fail with `NoFreeSlot`.
        (0..self.publishers as usize)
            .map(|p| u32::from(replace_if_dead(&self.publisher_slot(p).holder, SLOT_FREE)))
            .sum()
    }

    /// Frees the slots of subscribers that died; returns how many (see `reap`).
    pub(crate) fn reap_subscribers(&self, fanout: bool) -> u32 {
        let me = Identity::current().token();
        // Taken over under this process's own word, which `replace_if_dead` never
        // mistakes for a dead holder.
        let mut subscribers = 0;
        for s in 0..self.subscribers as usize {
            let holder = &self.subscriber_slot(s).holder;
            if !fanout {
                subscribers += u32::from(replace_if_dead(holder, SLOT_FREE));
            } else if replace_if_dead(holder, me) {
                // Taken over first, so no one claims it while its cursors are reset.
                for p in 0..self.publishers as usize {
                    self.cursor(s, p).store(CURSOR_IDLE, Ordering::Release);
                }
                protocol::release_slot(&holder.token);
                subscribers += 1;
            }
        }
        subscribers
    }

    /// How many of `holders` are held by a live process. This process's own slots count
    /// without asking the system; every other holder costs a liveness check (system
    /// calls): for cold paths.
    pub(crate) fn live_holders<'a>(&'a self, holders: impl Iterator<Item = &'a Holder>) -> u32 {
        holders
            .map(|holder| holder.token.load(Ordering::Acquire))
            .filter(|&token| token != SLOT_FREE && platform::holder_alive(token))
            .count() as u32
    }

    /// Fails with `SlotOutOfRange` unless the channel has a `role` slot `index`.
    pub(crate) fn check_slot_index(&self, role: Role, index: usize) -> Result<()> {
        let slots = match role {
            Role::Publisher => self.publishers,
            Role::Subscriber => self.subscribers,
        };
        if index >= slots as usize {
            return Err(Error::SlotOutOfRange {
                name: self.name.clone(),
                role,
                slot: index,
                slots,
            });
        }
        Ok(())
    }

    /// Claims subscriber slot `index` specifically (fanout).
    pub(crate) fn claim_subscriber_slot_at(&self, index: usize) -> Result<usize> {
        self.check_slot_index(Role::Subscriber, index)?;
        let holder = &self.subscriber_slot(index).holder;
        if take_if_free_or_dead(holder, Identity::current().token()) {
            return Ok(index);
        }
        Err(Error::SlotInUse {
            name: self.name.clone(),
            slot: index,
            holder_pid: platform::token_pid(holder.token.load(Ordering::Relaxed)),
        })
    }

    /// Recovers the true end of ring `publisher`: the reported tail, plus any frames a
    /// previous holder committed but died before reporting.
    pub(crate) fn recover_tail(&self, publisher: usize, shape: Shape) -> Result<u64> {
        let tail = self.publisher_slot(publisher).progress.tail.load(Ordering::Acquire);
        if !tail.is_multiple_of(self.frame_align as u64) || tail >= MAX_POSITION {
            return Err(Error::corrupt(
                &self.name,
                format!("ring {publisher} reports tail {tail}, which is not a frame-aligned position"),
            ));
        }
        // SAFETY: the view is used only here, while `self` keeps the ring mapped.
        let ring = unsafe { self.ring(publisher).view() };
        Ok(ring.committed_end(tail, shape, self.max_message_len, crate::protocol::is_committed))
    }
}
