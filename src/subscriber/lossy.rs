//! The lossy subscriber of a Fanout channel: publishers never wait for it. It receives
//! copies, each checked against being overwritten while it was copied, and counts every
//! message it missed when a publisher overran it.
//!
//! Why copies rather than borrowed views: a view is a reference into the ring, and a
//! publisher that never waits may overwrite those bytes while the view lives; a view
//! validated only at release would hand the caller torn data first and the bad news
//! after. A copy is checked before the caller sees it, so what a lossy subscriber hands
//! out is always a message that was published, whole.

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::health::{HEALTH_AFTER_MISSES, HEALTH_INTERVAL};
use super::overrun::Skipped;
use super::{Gaps, MessageInfo, Next, Subscriber};
use crate::error::{Error, Result};
use crate::handle_error::ReceiveError;
use crate::kind::{Fanout, Fifo, GlobalOrder, Mode};
use crate::message::{Bytes, Message, Payload};
use crate::region::Shared;
use crate::wait::{Adaptive, WaitStrategy, Waiter};
use crate::wire::layout::{SUBSCRIBER_LOSSY, SUBSCRIBER_TETHERED};

/// Receives copies of the messages of a Fanout channel without ever holding its
/// publishers back. When it falls a ring behind, a publisher overwrites what it has not
/// read: it notices, starts again where the publisher is, and reports exactly what it
/// missed: FIFO as [`Losses`] (how many messages, from which ring and positions) and
/// [`Copied::missed_before`]; Ordered as gaps of sequence numbers ([`gaps`](Self::gaps),
/// [`MessageInfo::gap_before`]), every number either received or reported missing. It
/// hands out no borrowed views (see the module's note on copies).
///
/// Made by [`Channel::lossy_subscriber`](crate::Channel::lossy_subscriber), or from a
/// tethered [`Subscriber`] with [`Subscriber::into_lossy`] (what a subscriber a publisher
/// demoted after the channel's `tether_timeout` does). Mpsc channels have none: their one
/// subscriber must see everything.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-lossy-{}", std::process::id());
/// let channel = salias::FifoFanout::<Tick>::create(&Config::new(&name).capacity(4096))?;
/// let mut logger = channel.lossy_subscriber()?;
/// let mut publisher = channel.publisher()?;
/// // The logger never reads, yet the publisher never waits for it.
/// for seq in 0..1000 {
///     publisher.offer(&Tick { seq })?;
/// }
/// let first = logger.try_recv()?.expect("the publisher's latest messages");
/// // Everything before it was overwritten, and is counted.
/// assert_eq!(first.missed_before(), first.seq);
/// assert_eq!(logger.losses().messages, first.seq);
/// # Ok::<(), salias::Error>(())
/// ```
pub struct LossySubscriber<T: Payload, M: Mode = Fifo> {
    inner: Subscriber<T, M, Fanout>,
    losses: Losses,
    /// FIFO: messages of each ring missed right before its next message.
    missed_before: Box<[u64]>,
}

/// What a FIFO lossy subscriber missed because publishers overran it.
///
/// ```
/// assert_eq!(salias::receive::Losses::default().messages, 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Losses {
    /// How many times it was overrun.
    pub events: u64,
    /// How many messages it missed in all.
    pub messages: u64,
    /// The most recent overrun.
    pub last: Option<Loss>,
}

/// One overrun of a FIFO lossy subscriber.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Loss {
    /// The publisher slot whose ring overran it.
    pub publisher_slot: usize,
    /// The ring positions (bytes) skipped: from where it was to where it started again
    /// (empty for the messages a history join asked for that the ring no longer held).
    pub positions: Range<u64>,
    /// How many messages those positions held.
    pub messages: u64,
}

/// A message a lossy subscriber (or a last-value read) copied out, with where it came
/// from.
#[derive(Clone, Copy, Debug)]
pub struct Copied<V, M: Mode> {
    value: V,
    info: MessageInfo<M>,
    missed_before: u64,
}

impl<V, M: Mode> Copied<V, M> {
    pub(crate) fn new(value: V, info: MessageInfo<M>, missed_before: u64) -> Self {
        Copied {
            value,
            info,
            missed_before,
        }
    }

    /// Where the message came from (publisher slot; Ordered: sequence, `gap_before`).
    pub fn info(&self) -> MessageInfo<M> {
        self.info
    }

    /// Messages missed right before this one: FIFO, from its publisher's ring; Ordered,
    /// sequence numbers (the same as `info().gap_before()`).
    pub fn missed_before(&self) -> u64 {
        self.missed_before
    }

    /// The message (for a raw receive, its length in the caller's buffer).
    pub fn into_inner(self) -> V {
        self.value
    }
}

impl<V, M: Mode> std::ops::Deref for Copied<V, M> {
    type Target = V;
    fn deref(&self) -> &V {
        &self.value
    }
}

impl<T: Payload, M: Mode> LossySubscriber<T, M> {
    pub(crate) fn new(shared: std::sync::Arc<Shared>, start: super::Start) -> Result<Self> {
        Ok(Self::wrap(Subscriber::new(shared, None, true, start)?))
    }

    fn wrap(mut inner: Subscriber<T, M, Fanout>) -> Self {
        let rings = inner.readers.len();
        let mut losses = Losses::default();
        let mut missed_before = vec![0; rings].into_boxed_slice();
        // FIFO, joined with `Start::Last(n)`: what a ring no longer held of its last n,
        // reported before that ring's first message.
        for (ring, &lost) in std::mem::take(&mut inner.history_missed).iter().enumerate() {
            if lost > 0 {
                let head = inner.readers[ring].head;
                missed_before[ring] = lost;
                losses.events += 1;
                losses.messages = losses.messages.saturating_add(lost);
                losses.last = Some(Loss {
                    publisher_slot: ring,
                    positions: head..head,
                    messages: lost,
                });
            }
        }
        if losses.messages > 0 {
            inner.publish_missed(losses.messages);
        }
        LossySubscriber {
            inner,
            losses,
            missed_before,
        }
    }

    /// Finds the next message, copying (up to `dst.len()` bytes of) its payload to `dst`.
    fn next(&mut self, dst: &mut [u8]) -> Result<Option<Next>, ReceiveError> {
        self.inner.check_usable()?;
        let found = self.find_copy(dst)?;
        // What was read may be zero pages now (truncated, or a fork child's).
        self.inner.check_usable()?;
        if found.is_some() {
            self.inner.hot.misses = 0;
            return Ok(found);
        }
        self.inner.release_all();
        let inner = &mut self.inner;
        inner.hot.misses = inner.hot.misses.saturating_add(1);
        if inner.hot.misses < HEALTH_AFTER_MISSES && !inner.readiness.is_watching() {
            return Ok(None);
        }
        let now = Instant::now();
        let due = inner.last_health_check.is_none_or(|last| now - last >= HEALTH_INTERVAL);
        if due {
            inner.last_health_check = Some(now);
            if let Err(error) = inner.shared.check_objects() {
                return Err(inner.fault.record(&inner.shared, error).into());
            }
            if M::ORDERED && inner.find_lossy_gap()? {
                return self.find_copy(dst);
            }
        }
        if !inner.publishers_gone(due) {
            return Ok(None);
        }
        // Gone: what they committed is received, and numbers a dead one held reported,
        // before the departure is.
        if M::ORDERED && !due {
            inner.find_lossy_gap()?;
        }
        if let Some(next) = self.find_copy(dst)? {
            return Ok(Some(next));
        }
        Err(self.inner.disconnected())
    }

    /// The search of `next`, counting what overruns skipped (FIFO).
    fn find_copy(&mut self, dst: &mut [u8]) -> Result<Option<Next>, ReceiveError> {
        if M::ORDERED {
            return self.inner.next_lossy_ordered(dst);
        }
        let (losses, missed_before) = (&mut self.losses, &mut self.missed_before);
        self.inner.next_lossy_fifo(dst, |inner, skipped| {
            let Skipped {
                ring,
                positions,
                messages,
            } = skipped;
            losses.events += 1;
            losses.messages = losses.messages.saturating_add(messages);
            missed_before[ring] = missed_before[ring].saturating_add(messages);
            losses.last = Some(Loss {
                publisher_slot: ring,
                positions,
                messages,
            });
            inner.publish_missed(losses.messages);
        })
    }

    /// Moves past the message `next` and says where it came from.
    fn deliver<V>(&mut self, next: Next, value: V) -> Copied<V, M> {
        let missed_before = if M::ORDERED {
            next.gap_before
        } else {
            std::mem::take(&mut self.missed_before[next.ring])
        };
        self.inner.advance(next);
        Copied {
            value,
            info: Subscriber::<T, M, Fanout>::info(next),
            missed_before,
        }
    }

    /// Retries `attempt` until it finds a message, waiting with the wait strategy.
    fn wait<R>(
        &mut self,
        timeout: Option<Duration>,
        mut attempt: impl FnMut(&mut Self) -> Result<Option<R>, ReceiveError>,
    ) -> Result<R, ReceiveError> {
        let mut strategy = self
            .inner
            .strategy
            .take()
            .unwrap_or_else(|| Box::new(Adaptive::default()));
        let mut waiter = Waiter::new(timeout);
        let outcome = loop {
            match attempt(self) {
                Ok(None) => {}
                Ok(Some(found)) => break Ok(found),
                Err(error) => break Err(error),
            }
            if self.inner.departure_visible() {
                // As in `Subscriber::wait_ready`: the next attempt checks at once.
                self.inner.hot.misses = self.inner.hot.misses.max(HEALTH_AFTER_MISSES);
                continue;
            }
            let inner = &self.inner;
            if !waiter.wait(&mut *strategy, Some(inner.wake.get()), &mut || {
                inner.any_ready_lossy() || inner.departure_visible()
            }) {
                break Err(ReceiveError::TimedOut);
            }
        };
        self.inner.strategy = Some(strategy);
        outcome
    }

    /// The subscriber slot this handle holds.
    pub fn slot(&self) -> usize {
        self.inner.slot
    }

    /// Messages this handle has received.
    pub fn received(&self) -> u64 {
        self.inner.hot.received
    }

    /// Messages (FIFO) or sequence numbers (Ordered) reported missing so far: received
    /// plus missed is everything published since it joined.
    pub fn missed(&self) -> u64 {
        if M::ORDERED {
            self.inner.gaps.missing
        } else {
            self.losses.messages
        }
    }

    /// FIFO: what overruns made it miss (Ordered subscribers report [`gaps`](Self::gaps)).
    pub fn losses(&self) -> &Losses {
        &self.losses
    }

    /// Whether the channel's name still leads to this handle's channel, or the channel was
    /// removed or replaced since (see [`NameState`](crate::region::NameState)). A few system
    /// calls; for cold paths.
    pub fn name_state(&self) -> Result<crate::region::NameState> {
        self.inner.name_state()
    }

    /// The full error behind the last broken-channel failure returned, as
    /// [`Subscriber::fault`].
    pub fn fault(&self) -> Option<Error> {
        self.inner.fault()
    }

    /// Replaces the strategy blocking receives wait with (default [`Adaptive`]).
    pub fn set_wait_strategy(&mut self, strategy: impl WaitStrategy + 'static) {
        self.inner.set_wait_strategy(strategy);
    }
}

impl<T: Payload, M: GlobalOrder> LossySubscriber<T, M> {
    /// Sequence numbers it never received: overrun, taken by a publisher that died, or
    /// declared lost. Every number from its join on is either received or in here.
    pub fn gaps(&self) -> &Gaps {
        self.inner.gaps()
    }

    /// The global sequence number it will deliver next (or report missing).
    pub fn next_sequence(&self) -> u64 {
        self.inner.next_sequence()
    }
}

impl<T: Message, M: Mode> LossySubscriber<T, M> {
    /// A copy of the next message, if one is committed; `Ok(None)` when there is none.
    /// Never waits, and never hands out a message a publisher was overwriting.
    pub fn try_recv(&mut self) -> Result<Option<Copied<T, M>>, ReceiveError> {
        let mut value = T::new_zeroed();
        let Some(next) = self.next(value.as_mut_bytes())? else {
            return Ok(None);
        };
        Ok(Some(self.deliver(next, value)))
    }

    /// Waits for the next message using the wait strategy.
    pub fn recv(&mut self) -> Result<Copied<T, M>, ReceiveError> {
        self.wait(None, Self::try_recv)
    }

    /// Like [`recv`](Self::recv), giving up with [`ReceiveError::TimedOut`] after `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Copied<T, M>, ReceiveError> {
        self.wait(Some(timeout), Self::try_recv)
    }
}

impl<M: Mode> LossySubscriber<Bytes, M> {
    /// Copies the next message into `buffer` and returns its length, if one is committed;
    /// `Ok(None)` when there is none. A message longer than `buffer` is not received:
    /// [`ReceiveError::BufferTooSmall`] (a buffer of the channel's `max_message_size`
    /// always fits).
    pub fn try_recv_into(&mut self, buffer: &mut [u8]) -> Result<Option<Copied<usize, M>>, ReceiveError> {
        let Some(next) = self.next(buffer)? else {
            return Ok(None);
        };
        if next.len > buffer.len() {
            return Err(ReceiveError::BufferTooSmall {
                len: next.len as u32,
                buffer: u32::try_from(buffer.len()).unwrap_or(u32::MAX),
            });
        }
        Ok(Some(self.deliver(next, next.len)))
    }

    /// Waits for the next message, copied into `buffer`, using the wait strategy; gives up
    /// with [`ReceiveError::TimedOut`] after `timeout`, if given.
    pub fn recv_into(
        &mut self,
        buffer: &mut [u8],
        timeout: Option<Duration>,
    ) -> Result<Copied<usize, M>, ReceiveError> {
        self.wait(timeout, |this| this.try_recv_into(buffer))
    }
}

impl<T: Payload, M: Mode> Subscriber<T, M, Fanout> {
    /// Turns this tethered subscriber into a lossy one, which publishers never wait for:
    /// what a subscriber a publisher demoted does after [`ReceiveError::Demoted`], or one
    /// that chooses to stop holding the feed back. It goes on from where it is; everything
    /// it misses from now on is counted.
    ///
    /// ```
    /// # let name = format!("doc-into-lossy-{}", std::process::id());
    /// let channel = salias::RawFifoFanout::create(&salias::Config::new(&name))?;
    /// let tethered = channel.subscriber()?;
    /// let lossy = tethered.into_lossy()?;
    /// let status = salias::status::channel_status(&name)?;
    /// assert_eq!(status.subscribers[lossy.slot()].kind, salias::status::SubscriberKind::Lossy);
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn into_lossy(mut self) -> Result<LossySubscriber<T, M>> {
        // Publish what it has read, then stop holding anyone back.
        self.release_all();
        let flow = &self.shared.subscriber_slot(self.slot).flow;
        // Demoted already: the kind word says so and stays.
        let _ = flow.kind.compare_exchange(
            SUBSCRIBER_TETHERED,
            SUBSCRIBER_LOSSY,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        self.untether();
        self.lossy = true;
        if !M::ORDERED && self.counts.iter().any(|count| count.mark.is_none()) {
            self.count_from_marks()?;
        }
        Ok(LossySubscriber::wrap(self))
    }
}

impl<T: Payload, M: Mode> std::fmt::Debug for LossySubscriber<T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LossySubscriber")
            .field("channel", &self.inner.shared.name)
            .field("slot", &self.inner.slot)
            .field("received", &self.inner.hot.received)
            .field("missed", &self.missed())
            .finish()
    }
}
