//! Receiving: the receive loop (with its health checks and waiting) and the public
//! `try_recv`, `recv`, `recv_timeout`, `drain` and `recv_batch`.

use std::time::{Duration, Instant};

use super::{MessageInfo, Next, Received, Subscriber};
use crate::error::Result;
use crate::handle_error::ReceiveError;
use crate::kind::{KindMarker, Mode, Topology};
use crate::message::{Bytes, Message, Payload};
use crate::wait::{Adaptive, Waiter};

use super::health::{HEALTH_AFTER_MISSES, HEALTH_INTERVAL};

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// Finds the next message, releasing room to publishers when there is none. A message
    /// found and not delivered is found again by the next look; the one count a look moves
    /// that a second would move again, the FIFO burst, `look_again` takes back.
    // Always inlined, as `find`: the message found reaches the caller in registers.
    #[inline(always)]
    pub(crate) fn next_message(&mut self) -> Result<Option<Next>, ReceiveError> {
        // Before reading: an inherited (fork) handle must not move its parent's cursors,
        // even where the fork hook could not replace the mapping.
        self.check_usable()?;
        self.check_tether()?;
        if let Some(next) = self.find()? {
            self.hot.misses = 0;
            return Ok(Some(next));
        }
        self.nothing_found()
    }

    /// `next_message` once the search found nothing: out of line, so that a look that
    /// finds a message stays small.
    #[inline(never)]
    fn nothing_found(&mut self) -> Result<Option<Next>, ReceiveError> {
        // Nothing found may mean the ring is zero pages now (truncated, or a fork child's).
        self.check_usable()?;
        self.release_all();
        if let Some(next) = self.found_nothing()? {
            return Ok(Some(next));
        }
        self.nothing_left();
        Ok(None)
    }

    /// After a search found nothing: counts the miss and, past the spin phase (or on every
    /// miss of a watched handle, whose empty receives each end in a system call anyway),
    /// checks the channel's health at most every `HEALTH_INTERVAL` and whether every
    /// publisher has gone. Returns a message that those checks made findable; fails with
    /// `Disconnected` once when the publishers are gone.
    #[inline]
    fn found_nothing(&mut self) -> Result<Option<Next>, ReceiveError> {
        self.hot.misses = self.hot.misses.saturating_add(1);
        if self.hot.misses < HEALTH_AFTER_MISSES && !self.readiness.is_watching() {
            return Ok(None);
        }
        self.idle_checks()
    }

    /// After a `drain` that handed out `count` of at most `max` messages: an empty one
    /// counts as a miss and makes the idle checks as an empty `try_recv` does. A message
    /// those checks made findable (a gap declared) is left for the next call, so that the
    /// caller's closure is called from one place only: a second call site stops the
    /// compiler from inlining it into the delivery loop.
    #[inline(always)]
    fn polled(&mut self, count: usize, max: usize) -> Result<(), ReceiveError> {
        if count > 0 {
            self.hot.misses = 0;
        } else if max > 0 {
            self.found_nothing()?;
        }
        Ok(())
    }

    /// A receive found nothing left to take: notes that the subscriber caught up with its
    /// publishers (a `run` reads ahead only once it is behind again), and arms the
    /// descriptor if watched.
    #[inline(always)]
    fn nothing_left(&mut self) {
        self.hot.caught_up_at = self.hot.received;
        self.drained();
    }

    #[cold]
    #[inline(never)]
    fn idle_checks(&mut self) -> Result<Option<Next>, ReceiveError> {
        let now = Instant::now();
        let due = self.last_health_check.is_none_or(|last| now - last >= HEALTH_INTERVAL);
        if due {
            self.last_health_check = Some(now);
            if self.check_health()?
                && let Some(next) = self.find()?
            {
                return Ok(Some(next));
            }
        }
        if !self.publishers_gone(due) {
            return Ok(None);
        }
        // Gone: numbers a dead Ordered publisher held become a gap first, and whatever
        // the publishers committed is received before the departure is reported.
        if M::ORDERED && !due {
            self.check_health()?;
        }
        if let Some(next) = self.find()? {
            return Ok(Some(next));
        }
        Err(self.disconnected())
    }

    /// Waits with the wait strategy until a look finds a message (left for the caller's
    /// next look to find again), the look fails, or `deadline` passes.
    #[inline(never)]
    pub(super) fn wait_ready(&mut self, deadline: Option<Instant>) -> Result<(), ReceiveError> {
        let mut strategy = self.strategy.take().unwrap_or_else(|| Box::new(Adaptive::default()));
        let mut waiter = Waiter::until(deadline);
        let outcome = loop {
            match self.next_message() {
                Ok(None) => {}
                Ok(Some(_)) => {
                    self.look_again();
                    break Ok(());
                }
                Err(e) => break Err(e),
            }
            if self.departure_visible() {
                // A publisher dropped: the next look makes the idle checks at once rather
                // than after the spin and yield phases (long on a loaded machine).
                self.hot.misses = self.hot.misses.max(HEALTH_AFTER_MISSES);
                continue;
            }
            let this = &*self;
            let mut ready = || this.any_ready() || this.departure_visible();
            if !waiter.wait(&mut *strategy, Some(this.wake.get()), &mut ready) {
                break Err(ReceiveError::TimedOut);
            }
        };
        self.strategy = Some(strategy);
        outcome
    }

    pub(super) fn info(next: Next) -> MessageInfo<M> {
        MessageInfo {
            slot: next.ring,
            seq: next.sequence,
            gap: next.gap_before,
            _mode: KindMarker::default(),
        }
    }
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// The next message, if one is committed, as a view into the ring; `Ok(None)` when
    /// there is none. The message is released when the view is dropped.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-try-recv-{}", std::process::id());
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut subscriber = channel.subscriber()?;
    /// assert!(subscriber.try_recv()?.is_none()); // nothing yet; never waits
    /// channel.publisher()?.offer(&Tick { seq: 3 })?;
    /// if let Some(tick) = subscriber.try_recv()? {
    ///     assert_eq!(tick.seq, 3);
    /// }
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn try_recv(&mut self) -> Result<Option<Received<'_, T, M, K>>, ReceiveError> {
        Ok(self.next_message()?.map(|next| Received::new(self, next)))
    }

    /// Waits for the next message using the wait strategy.
    #[inline]
    pub fn recv(&mut self) -> Result<Received<'_, T, M, K>, ReceiveError> {
        self.recv_until(None)
    }

    /// Like [`recv`](Self::recv), giving up with [`ReceiveError::TimedOut`] after `timeout`.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-recv-timeout-{}", std::process::id());
    /// use std::time::Duration;
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut subscriber = channel.subscriber()?;
    /// let nothing = subscriber.recv_timeout(Duration::from_millis(1)).map(|t| t.seq);
    /// assert_eq!(nothing, Err(salias::ReceiveError::TimedOut));
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Received<'_, T, M, K>, ReceiveError> {
        self.recv_until(crate::wait::deadline_after(timeout))
    }

    /// Looks for the next message until `deadline`, waiting with the wait strategy between
    /// looks (`wait_ready`), and hands it out.
    // Always inlined into `recv` and `recv_timeout`, which the caller inlines: the waiting
    // loop only reports that a look found a message, and this look finds it again, so the
    // message never crosses a call boundary in memory. Handed back through memory from
    // the loop, it cost a store-forwarding stall between seeing the commit and handing the
    // message out (ping-pong one way, two threads: 105 against 80 ns;
    // doc/performance-notes.md). A `Result<Next>` returned from a helper inlined here
    // cost the same: the loop hands out the view itself.
    #[inline(always)]
    fn recv_until(&mut self, deadline: Option<Instant>) -> Result<Received<'_, T, M, K>, ReceiveError> {
        loop {
            if let Some(next) = self.next_message()? {
                return Ok(Received::new(self, next));
            }
            self.wait_ready(deadline)?;
        }
    }
}

impl<T: Message, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// Hands up to `max` committed messages to `handle`, with where each came from, and
    /// releases them; returns how many. Never waits.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-drain-{}", std::process::id());
    /// let channel = salias::OrderedMpsc::<Tick>::create(&Config::new(&name).publishers(2))?;
    /// let (mut a, mut b) = (channel.publisher()?, channel.publisher()?);
    /// a.offer(&Tick { seq: 10 })?;
    /// b.offer(&Tick { seq: 20 })?;
    /// let mut subscriber = channel.subscriber()?;
    /// let mut seen = Vec::new();
    /// let handled = subscriber.drain(16, |info, tick| seen.push((info.sequence(), tick.seq)))?;
    /// // One global order across publishers: the sequence numbers say which came first.
    /// assert_eq!((handled, seen), (2, vec![(0, 10), (1, 20)]));
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn drain(&mut self, max: usize, mut handle: impl FnMut(MessageInfo<M>, &T)) -> Result<usize, ReceiveError> {
        self.check_usable()?;
        self.check_tether()?;
        let mut count = 0;
        // A release inside the call may find this subscriber demoted (a publisher may now
        // overwrite what it has not read): it hands out no more views, and the next call
        // says why.
        while count < max && !(K::FANOUT && self.demoted) {
            let Some(next) = self.find()? else { break };
            // SAFETY: `find` just returned `next` and the head moves only below (peers'
            // part: crate docs, "What a borrowed message assumes about peers").
            handle(Self::info(next), unsafe { self.message(next) });
            self.advance(next);
            count += 1;
            if K::FANOUT && self.demoted {
                break;
            }
            let (taken, uncommitted) = self.run(next.ring, max - count, |info, frame| handle(info, frame.message()));
            count += taken;
            if uncommitted && self.readers.len() == 1 {
                // The one ring has nothing more: a search would look at the same frame.
                break;
            }
        }
        self.check_usable()?;
        self.release_all();
        self.polled(count, max)?;
        if count < max {
            self.nothing_left();
        }
        Ok(count)
    }
}

impl<T: Message, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// Waits with the wait strategy until a message is committed, then hands it and the
    /// messages after it, up to `max`, to `handle` as [`drain`](Self::drain) does; returns
    /// how many (at least one, unless `max` is 0: then 0 at once). A batch of fewer than
    /// `max` has caught up with the publishers, and the strategy's
    /// [`caught_up`](crate::wait::WaitStrategy::caught_up) runs before the call returns:
    /// with [`Batching`](crate::wait::Batching), the loop for throughput.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-recv-batch-{}", std::process::id());
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut publisher = channel.publisher()?;
    /// let mut subscriber = channel.subscriber()?;
    /// subscriber.set_wait_strategy(salias::wait::Batching::default());
    /// let producer = std::thread::spawn(move || {
    ///     for seq in 0..1000 {
    ///         while publisher.offer(&Tick { seq }).is_err() {}
    ///     }
    /// });
    /// let (mut received, mut sum) = (0, 0);
    /// while received < 1000 {
    ///     received += subscriber.recv_batch(256, |_, tick| sum += tick.seq)?;
    /// }
    /// producer.join().unwrap();
    /// assert_eq!(sum, 999 * 1000 / 2);
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn recv_batch(
        &mut self,
        max: usize,
        mut handle: impl FnMut(MessageInfo<M>, &T),
    ) -> Result<usize, ReceiveError> {
        self.gather(max, None, |this| this.drain(max, &mut handle))
    }

    /// Like [`recv_batch`](Self::recv_batch), giving up with [`ReceiveError::TimedOut`]
    /// after `timeout`.
    #[inline]
    pub fn recv_batch_timeout(
        &mut self,
        max: usize,
        timeout: Duration,
        mut handle: impl FnMut(MessageInfo<M>, &T),
    ) -> Result<usize, ReceiveError> {
        self.gather(max, crate::wait::deadline_after(timeout), |this| {
            this.drain(max, &mut handle)
        })
    }
}

impl<M: Mode, K: Topology> Subscriber<Bytes, M, K> {
    /// Hands up to `max` committed messages to `handle`, with where each came from, and
    /// releases them; returns how many. Never waits.
    ///
    /// ```
    /// # let name = format!("doc-raw-drain-{}", std::process::id());
    /// let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name))?;
    /// channel.publisher()?.offer_batch(&[&b"one"[..], b"two"])?;
    /// let mut subscriber = channel.subscriber()?;
    /// let mut total = 0;
    /// subscriber.drain(16, |_, bytes| total += bytes.len())?;
    /// assert_eq!(total, 6);
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn drain(&mut self, max: usize, mut handle: impl FnMut(MessageInfo<M>, &[u8])) -> Result<usize, ReceiveError> {
        self.check_usable()?;
        self.check_tether()?;
        let mut count = 0;
        // Demoted during the call: as in the typed `drain`. The loop is the typed one's,
        // written out again: one loop for both, handing each message to a closure that
        // makes the view, ran the typed `drain` of benches/ipc at two thirds of its rate
        // (doc/performance-notes.md).
        while count < max && !(K::FANOUT && self.demoted) {
            let Some(next) = self.find()? else { break };
            // SAFETY: as in the typed `drain`.
            handle(Self::info(next), unsafe { self.payload(next) });
            self.advance(next);
            count += 1;
            if K::FANOUT && self.demoted {
                break;
            }
            let (taken, uncommitted) = self.run(next.ring, max - count, |info, frame| handle(info, frame.bytes()));
            count += taken;
            if uncommitted && self.readers.len() == 1 {
                // As in the typed `drain`.
                break;
            }
        }
        self.check_usable()?;
        self.release_all();
        self.polled(count, max)?;
        if count < max {
            self.nothing_left();
        }
        Ok(count)
    }

    /// Waits with the wait strategy until a message is committed, then hands up to `max`
    /// to `handle`; returns how many. As the typed
    /// [`recv_batch`](Subscriber::recv_batch), for raw messages.
    ///
    /// ```
    /// # let name = format!("doc-raw-recv-batch-{}", std::process::id());
    /// let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name))?;
    /// channel.publisher()?.offer_batch(&[&b"one"[..], b"two"])?;
    /// let mut subscriber = channel.subscriber()?;
    /// let mut total = 0;
    /// assert_eq!(subscriber.recv_batch(16, |_, bytes| total += bytes.len())?, 2);
    /// assert_eq!(total, 6);
    /// # Ok::<(), salias::Error>(())
    /// ```
    #[inline]
    pub fn recv_batch(
        &mut self,
        max: usize,
        mut handle: impl FnMut(MessageInfo<M>, &[u8]),
    ) -> Result<usize, ReceiveError> {
        self.gather(max, None, |this| this.drain(max, &mut handle))
    }

    /// Like [`recv_batch`](Self::recv_batch), giving up with [`ReceiveError::TimedOut`]
    /// after `timeout`.
    #[inline]
    pub fn recv_batch_timeout(
        &mut self,
        max: usize,
        timeout: Duration,
        mut handle: impl FnMut(MessageInfo<M>, &[u8]),
    ) -> Result<usize, ReceiveError> {
        self.gather(max, crate::wait::deadline_after(timeout), |this| {
            this.drain(max, &mut handle)
        })
    }
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// `recv_batch`'s loop: `drain` hands out up to `max` messages without waiting; while
    /// it finds none, waits until a look finds one (or `deadline` passes).
    #[inline(always)]
    fn gather(
        &mut self,
        max: usize,
        deadline: Option<Instant>,
        mut drain: impl FnMut(&mut Self) -> Result<usize, ReceiveError>,
    ) -> Result<usize, ReceiveError> {
        if max == 0 {
            return Ok(0);
        }
        loop {
            let count = drain(self)?;
            if count > 0 {
                if count < max {
                    self.caught_up();
                }
                return Ok(count);
            }
            self.wait_ready(deadline)?;
        }
    }

    /// Tells the wait strategy that a batch caught up with the publishers.
    #[inline]
    fn caught_up(&mut self) {
        if let Some(strategy) = self.strategy.as_mut() {
            strategy.caught_up();
        }
    }
}
