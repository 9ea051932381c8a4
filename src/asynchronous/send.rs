//! `Publisher::send_async`: a publish that waits in tokio for room.

use std::os::fd::AsRawFd;
use std::task::{Context, Poll};

use crate::handle_error::PublishError;
use crate::kind::{Mode, Topology};
use crate::message::{Bytes, Message, Payload};
use crate::publisher::Publisher;

impl<T: Message, M: Mode, K: Topology> Publisher<T, M, K> {
    /// Publishes `message`, waiting in tokio while the ring is full: the task sleeps until
    /// a subscriber releases room (the publisher's descriptor says so), without spinning or
    /// blocking the thread. Failures other than a full ring are returned at once. Needs a
    /// tokio runtime with IO enabled; the descriptor stays registered with it across calls.
    ///
    /// Cancel-safe: the message is written only when the future returns `Ok`, so dropping
    /// it while it waits writes nothing.
    ///
    /// # Errors
    ///
    /// The errors of [`offer`](Self::offer) except [`PublishError::Backpressured`], and
    /// [`PublishError::NoRuntime`], [`PublishError::RuntimeShutDown`] or
    /// [`PublishError::Reactor`] when it cannot wait.
    ///
    /// # Panics
    ///
    /// As [`Subscriber::poll_recv`](crate::Subscriber::poll_recv), in a runtime built
    /// without IO.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-send-async-{}", std::process::id());
    /// # tokio::runtime::Builder::new_current_thread().enable_io().build()?.block_on(async {
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let mut subscriber = channel.subscriber()?;
    /// let mut publisher = channel.publisher()?;
    /// publisher.send_async(&Tick { seq: 1 }).await?;
    /// assert_eq!(subscriber.recv_async().await?.seq, 1);
    /// # Ok::<(), salias::Error>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn send_async(&mut self, message: &T) -> Result<(), PublishError> {
        std::future::poll_fn(|cx| self.poll_offer(cx, |publisher| publisher.offer(message))).await
    }
}

impl<M: Mode, K: Topology> Publisher<Bytes, M, K> {
    /// Publishes `bytes`, waiting in tokio while the ring is full, as the typed
    /// [`send_async`](Publisher::send_async) does; cancel-safe the same way.
    ///
    /// # Errors
    ///
    /// The errors of [`offer`](Self::offer) except [`PublishError::Backpressured`] (a
    /// message too large for the channel is refused at once), and
    /// [`PublishError::NoRuntime`], [`PublishError::RuntimeShutDown`] or
    /// [`PublishError::Reactor`] when it cannot wait.
    ///
    /// # Panics
    ///
    /// As the typed `send_async`, in a runtime built without IO.
    ///
    /// ```
    /// # let name = format!("doc-raw-send-async-{}", std::process::id());
    /// use salias::PublishError;
    /// # tokio::runtime::Builder::new_current_thread().enable_io().build()?.block_on(async {
    /// let config = salias::Config::new(&name).max_message_size(64);
    /// let channel = salias::RawFifoMpsc::create(&config)?;
    /// let mut subscriber = channel.subscriber()?;
    /// let mut publisher = channel.publisher()?;
    /// publisher.send_async(b"hello").await?;
    /// assert_eq!(&*subscriber.recv_async().await?, b"hello");
    /// // Waiting would not help a message too large for the channel: refused at once.
    /// let refused = publisher.send_async(&[0; 65]).await;
    /// assert!(matches!(refused, Err(PublishError::MessageTooLarge { len: 65, .. })));
    /// # Ok::<(), salias::Error>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn send_async(&mut self, bytes: &[u8]) -> Result<(), PublishError> {
        std::future::poll_fn(|cx| self.poll_offer(cx, |publisher| publisher.offer(bytes))).await
    }
}

impl<T: Payload, M: Mode, K: Topology> Publisher<T, M, K> {
    /// Runs `offer` until the ring takes the message or it fails otherwise; `Pending`
    /// while the ring is full, with `cx`'s task woken when room may have appeared.
    fn poll_offer(
        &mut self,
        cx: &mut Context<'_>,
        mut offer: impl FnMut(&mut Self) -> Result<(), PublishError>,
    ) -> Poll<Result<(), PublishError>> {
        // Asking for the descriptor puts the publisher in watch mode, so a refused offer
        // below arms the descriptor (the argument in `Reactor::poll_readable`, with a
        // release of room for a commit).
        let fd = self.as_raw_fd();
        // tokio's co-operative budget, as in `Subscriber::poll_next`: a publisher that
        // never waits for room still yields now and then. Refused before writing.
        let budget = std::task::ready!(tokio::task::coop::poll_proceed(cx));
        loop {
            match offer(self) {
                Err(PublishError::Backpressured) => {}
                done => {
                    budget.made_progress();
                    return Poll::Ready(done);
                }
            }
            if let Err(problem) = std::task::ready!(self.reactor.poll_readable(fd, cx)) {
                return Poll::Ready(Err(problem.into()));
            }
        }
    }
}
