//! `Subscriber::poll_recv` and `recv_async`: a receive that waits in tokio.

use std::os::fd::AsRawFd;
use std::task::{Context, Poll};

use crate::handle_error::ReceiveError;
use crate::kind::{Mode, Topology};
use crate::message::Payload;
use crate::subscriber::{Next, Received, Subscriber};

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// The next message if one is committed, else `Pending`, with `cx`'s task woken when
    /// one may have been: the building block of [`recv_async`](Self::recv_async), for
    /// hand-written futures and streams. Needs a tokio runtime with IO enabled; the first
    /// wait registers the subscriber's descriptor with that runtime's reactor, and it stays
    /// registered for later waits (a wait in another runtime moves it there).
    ///
    /// Nothing is consumed unless it returns `Ready(Ok(_))`: the message is released when
    /// the view drops, as with [`try_recv`](Self::try_recv).
    ///
    /// # Errors
    ///
    /// The receive errors of `try_recv`, and [`ReceiveError::NoRuntime`],
    /// [`ReceiveError::RuntimeShutDown`] or [`ReceiveError::Reactor`] when it cannot wait.
    ///
    /// # Panics
    ///
    /// tokio panics, as for its own IO types, if it must wait in a runtime built without
    /// IO (no `enable_io`/`enable_all`); `#[tokio::main]` enables it.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-poll-recv-{}", std::process::id());
    /// use std::future::poll_fn;
    /// # tokio::runtime::Builder::new_current_thread().enable_io().build()?.block_on(async {
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut subscriber = channel.subscriber()?;
    /// channel.publisher()?.offer(&Tick { seq: 4 })?;
    /// // A future that yields the next message's number, copied out of the ring.
    /// let seq = poll_fn(|cx| subscriber.poll_recv(cx).map_ok(|tick| tick.seq)).await?;
    /// assert_eq!(seq, 4);
    /// # Ok::<(), salias::Error>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<Received<'_, T, M, K>, ReceiveError>> {
        // The view is made outside the loop that may return `Pending`: a reference
        // returned from inside it would hold `self` borrowed through every iteration.
        self.poll_next_message(cx).map_ok(|next| Received::new(self, next))
    }

    /// Waits in tokio for the next message, without spinning or blocking the thread: the
    /// task sleeps until the subscriber's descriptor says a message may be waiting.
    ///
    /// Cancel-safe: nothing is consumed until it returns, so dropping the future (in a
    /// `select!` branch that lost, or on a timeout) loses no message; the next receive
    /// gets it.
    ///
    /// # Errors
    ///
    /// As [`poll_recv`](Self::poll_recv).
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-recv-async-{}", std::process::id());
    /// use std::time::Duration;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut subscriber = channel.subscriber()?;
    /// let mut publisher = channel.publisher()?;
    /// // Nothing yet: the timer wins, and the cancelled receive loses nothing.
    /// tokio::select! {
    ///     _ = subscriber.recv_async() => unreachable!("nothing was published"),
    ///     _ = tokio::time::sleep(Duration::from_millis(5)) => {}
    /// }
    /// publisher.offer(&Tick { seq: 8 })?;
    /// assert_eq!(subscriber.recv_async().await?.seq, 8);
    /// # Ok::<(), salias::Error>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn recv_async(&mut self) -> Result<Received<'_, T, M, K>, ReceiveError> {
        let next = std::future::poll_fn(|cx| self.poll_next_message(cx)).await?;
        Ok(Received::new(self, next))
    }

    /// Where the next message is, once there is one; `Pending` until then.
    fn poll_next_message(&mut self, cx: &mut Context<'_>) -> Poll<Result<Next, ReceiveError>> {
        // Asking for the descriptor puts the subscriber in watch mode, so the empty look
        // below re-arms the descriptor (see `Reactor::poll_readable`).
        let fd = self.as_raw_fd();
        // tokio's co-operative budget, as its own channels spend it: a receive that always
        // finds a message still yields to the scheduler now and then, so a busy channel
        // starves neither the task's other branches (a `select!`'s timer) nor other tasks.
        // Refused before looking, so nothing is consumed.
        let budget = std::task::ready!(tokio::task::coop::poll_proceed(cx));
        loop {
            if let Some(next) = self.next_message()? {
                budget.made_progress();
                return Poll::Ready(Ok(next));
            }
            // Ready: an edge since the last look (readiness now consumed); look again.
            // Pending: our waker is stored, and the next commit's edge wakes it.
            if let Err(problem) = std::task::ready!(self.reactor.poll_readable(fd, cx)) {
                return Poll::Ready(Err(problem.into()));
            }
        }
    }
}
