//! Subscribers as `futures_core::Stream`s of owned messages, for stream combinators
//! (`StreamExt::next`, `take`, `map`, tokio-stream's `StreamMap`).
//!
//! A stream item outlives the next poll, so it cannot borrow the ring as a `Received`
//! does: a typed subscriber yields a copy of each message (what `*received` gives), a raw
//! one a `Vec<u8>` (one allocation per message; `recv_async` borrows instead). The stream
//! never ends: a departure is an item (`Err(ReceiveError::Disconnected)`), after which it
//! waits for the next publisher, as `recv_async` does. Cancel-safe as `recv_async` is:
//! a message is consumed only by the poll that yields it.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::handle_error::ReceiveError;
use crate::kind::{Mode, Topology};
use crate::message::{Bytes, Message};
use crate::subscriber::Subscriber;

/// Each message, copied out of the ring.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-stream-{}", std::process::id());
/// use std::pin::Pin;
/// use futures_core::Stream;
/// # tokio::runtime::Builder::new_current_thread().enable_io().build()?.block_on(async {
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut subscriber = channel.subscriber()?;
/// let mut publisher = channel.publisher()?;
/// for seq in 0..3 {
///     publisher.offer(&Tick { seq })?;
/// }
/// for seq in 0..3 {
///     // What `StreamExt::next` (futures, tokio-stream) does.
///     let next = std::future::poll_fn(|cx| Pin::new(&mut subscriber).poll_next(cx)).await;
///     assert_eq!(next, Some(Ok(Tick { seq })));
/// }
/// # Ok::<(), salias::Error>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<T: Message, M: Mode, K: Topology> Stream for Subscriber<T, M, K> {
    type Item = Result<T, ReceiveError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_recv(cx).map(|received| {
            Some(received.map(|message| match T::read_from_bytes(message.as_bytes()) {
                Ok(copy) => copy,
                Err(_) => unreachable!("a `T`'s bytes are the size of a `T`"),
            }))
        })
    }
}

/// Each message's bytes, copied out of the ring into a `Vec`.
impl<M: Mode, K: Topology> Stream for Subscriber<Bytes, M, K> {
    type Item = Result<Vec<u8>, ReceiveError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut()
            .poll_recv(cx)
            .map(|received| Some(received.map(|message| message.to_vec())))
    }
}
