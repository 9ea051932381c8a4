//! The four kinds behind one interface: C names a kind with a number at run time, so each
//! handle is a trait object over the generic Rust handle of its kind.
//!
//! A C caller holds a received message (or a claim) across calls, which Rust expresses as
//! a borrow of the subscriber (publisher). Each handle here keeps its Rust handle boxed at
//! a fixed address and the borrow beside it, and forms no other reference to the handle
//! while the borrow lives: every other call is refused as busy until it is released.

use std::os::fd::{AsRawFd, RawFd};
use std::ptr::NonNull;
use std::time::Duration;

use salias::channel::Reaped;
use salias::kind::{Mode, Topology};
use salias::receive::MessageInfo;
use salias::status::SubscriberCount;
use salias::{Bytes, Channel, ClaimBytes, Error, Fifo, Ordered, PublishError, Publisher, Subscriber};

use crate::codes::{SALIAS_BACKPRESSURED, SALIAS_ERROR_BUSY, SALIAS_ERROR_NOT_HELD, SALIAS_OK, salias_code};
use crate::entry::Failure;

/// A received message as C sees it: valid until the subscriber releases it (a held
/// message) or the drain's callback returns.
#[derive(Clone, Copy)]
pub struct View {
    /// The payload's first byte.
    pub data: *const u8,
    /// Its length.
    pub len: usize,
    /// The publisher slot that sent it.
    pub publisher_slot: usize,
    /// Ordered: its global sequence number; FIFO: 0.
    pub sequence: u64,
    /// Ordered: numbers lost just before it (a dead publisher's); FIFO: 0.
    pub gap_before: u64,
}

/// What an Ordered message carries beyond a FIFO one; zeros for FIFO.
pub trait Numbers: Mode + Sized {
    /// The message's sequence number and the gap before it; zeros for FIFO.
    fn numbers(info: MessageInfo<Self>) -> (u64, u64);
}

impl Numbers for Fifo {
    fn numbers(_: MessageInfo<Self>) -> (u64, u64) {
        (0, 0)
    }
}

impl Numbers for Ordered {
    fn numbers(info: MessageInfo<Self>) -> (u64, u64) {
        (info.sequence(), info.gap_before())
    }
}

fn view<M: Numbers>(info: MessageInfo<M>, payload: &[u8]) -> View {
    let (sequence, gap_before) = M::numbers(info);
    View {
        data: payload.as_ptr(),
        len: payload.len(),
        publisher_slot: info.publisher_slot(),
        sequence,
        gap_before,
    }
}

fn busy(what: &str) -> Failure {
    Failure::new(
        SALIAS_ERROR_BUSY,
        format!("the handle holds {what}; release it first (one at a time per handle)"),
    )
}

/// A channel of any kind.
#[allow(missing_docs)]
pub trait ChannelOps: Send {
    fn publisher(&self) -> Result<Box<dyn PublisherOps>, Error>;
    fn subscriber(&self) -> Result<Box<dyn SubscriberOps>, Error>;
    fn reap(&self) -> Reaped;
    fn capacity(&self) -> usize;
    fn max_message_size(&self) -> usize;
    fn publishers(&self) -> u32;
    fn subscribers(&self) -> u32;
    fn is_owner(&self) -> bool;
}

/// A publisher of any kind; calls other than `commit`/`abandon` fail as busy while it
/// holds a claim.
#[allow(missing_docs)]
pub trait PublisherOps: Send {
    fn offer(&mut self, bytes: &[u8]) -> Result<salias_code, Failure>;
    /// Publishes as many of `messages` as fit, in order; how many.
    fn offer_batch(&mut self, messages: &[&[u8]]) -> Result<usize, Failure>;
    /// Publishes as many as fit of the `size`-byte messages packed in `messages`; how many.
    fn offer_packed(&mut self, messages: &[u8], size: usize) -> Result<usize, Failure>;
    fn send(&mut self, bytes: &[u8], timeout: Option<Duration>) -> Result<salias_code, Failure>;
    /// Where to write a claimed message; `None` when there is no room.
    fn claim(&mut self, len: usize) -> Result<Option<*mut u8>, Failure>;
    fn commit(&mut self, len: Option<usize>) -> Result<salias_code, Failure>;
    fn abandon(&mut self) -> Result<salias_code, Failure>;
    /// The readiness descriptor, made on first use (BUSY if first asked for while borrowed).
    fn readiness_fd(&mut self) -> Result<RawFd, Failure>;
    fn fault(&self) -> Option<Error>;
    fn published(&self) -> Result<u64, Failure>;
    fn slot(&self) -> Result<usize, Failure>;
    fn subscribers(&self) -> Result<SubscriberCount, Failure>;
}

/// A subscriber of any kind; calls other than `release` fail as busy while it holds a
/// received message.
#[allow(missing_docs)]
pub trait SubscriberOps: Send {
    fn try_recv(&mut self) -> Result<Option<View>, Failure>;
    fn recv(&mut self, timeout: Option<Duration>) -> Result<View, Failure>;
    fn release(&mut self) -> Result<salias_code, Failure>;
    fn drain(&mut self, max: usize, handle: &mut dyn FnMut(View)) -> Result<usize, Failure>;
    /// The readiness descriptor, made on first use (BUSY if first asked for while borrowed).
    fn readiness_fd(&mut self) -> Result<RawFd, Failure>;
    fn received(&self) -> Result<u64, Failure>;
    fn slot(&self) -> Result<usize, Failure>;
    fn live_publishers(&self) -> Result<u32, Failure>;
}

impl<M: Numbers, K: Topology> ChannelOps for Channel<Bytes, M, K>
where
    Channel<Bytes, M, K>: Send,
    Publisher<Bytes, M, K>: Send,
    Subscriber<Bytes, M, K>: Send,
{
    fn publisher(&self) -> Result<Box<dyn PublisherOps>, Error> {
        Ok(Box::new(Pub::new(Channel::publisher(self)?, self.max_message_size())))
    }
    fn subscriber(&self) -> Result<Box<dyn SubscriberOps>, Error> {
        Ok(Box::new(Sub::new(Channel::subscriber(self)?)))
    }
    fn reap(&self) -> Reaped {
        Channel::reap(self)
    }
    fn capacity(&self) -> usize {
        Channel::capacity(self)
    }
    fn max_message_size(&self) -> usize {
        Channel::max_message_size(self)
    }
    fn publishers(&self) -> u32 {
        Channel::publishers(self)
    }
    fn subscribers(&self) -> u32 {
        Channel::subscribers(self)
    }
    fn is_owner(&self) -> bool {
        Channel::is_owner(self)
    }
}

/// A publisher's offers compiled for one message size, its channel's largest (a typed
/// channel's only): with the size a constant, the copy into the ring and the frame
/// arithmetic compile to fixed moves, as a Rust caller's typed offer does, instead of a
/// loop and a `memcpy` call per message. Chosen once, when the handle is made, so a call
/// pays one comparison and one indirect call for it.
struct SizedOffers<M: Mode, K: Topology> {
    /// The message size, in bytes.
    size: usize,
    /// `offer` of one message of `size` bytes.
    one: Offer<M, K, ()>,
    /// `offer_packed` of messages of `size` bytes.
    packed: Offer<M, K, usize>,
}

/// An offer of the publisher's bytes, returning `R`.
type Offer<M, K, R> = fn(&mut Publisher<Bytes, M, K>, &[u8]) -> Result<R, PublishError>;

impl<M: Mode, K: Topology> Clone for SizedOffers<M, K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M: Mode, K: Topology> Copy for SizedOffers<M, K> {}

/// The sizes compiled: whole words up to two lines, where the copy is word stores.
macro_rules! sized_offers {
    ($size:expr, $($constant:literal)*) => {
        match $size {
            $($constant => Some(SizedOffers {
                size: $constant,
                one: offer_sized::<$constant, M, K>,
                packed: offer_packed_sized::<$constant, M, K>,
            }),)*
            _ => None,
        }
    };
}

impl<M: Mode, K: Topology> SizedOffers<M, K> {
    fn for_size(size: usize) -> Option<Self> {
        sized_offers!(size, 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128)
    }
}

/// `offer` of a message of exactly N bytes (the caller checked its length).
#[inline(never)]
fn offer_sized<const N: usize, M: Mode, K: Topology>(
    publisher: &mut Publisher<Bytes, M, K>,
    bytes: &[u8],
) -> Result<(), PublishError> {
    publisher.offer(&bytes[..N])
}

/// `offer_packed` of messages of N bytes.
#[inline(never)]
fn offer_packed_sized<const N: usize, M: Mode, K: Topology>(
    publisher: &mut Publisher<Bytes, M, K>,
    messages: &[u8],
) -> Result<usize, PublishError> {
    publisher.offer_packed(messages, N)
}

/// `offer` of a message of any length: out of line, so the handle's own call stays small.
#[inline(never)]
fn offer_any<M: Mode, K: Topology>(publisher: &mut Publisher<Bytes, M, K>, bytes: &[u8]) -> Result<(), PublishError> {
    publisher.offer(bytes)
}

/// A publisher and the claim it may hold.
struct Pub<M: Mode, K: Topology> {
    /// Declared first, so dropped before the publisher it borrows.
    claim: Option<ClaimBytes<'static, M, K>>,
    publisher: NonNull<Publisher<Bytes, M, K>>,
    /// Taken on first request only: a handle whose descriptor was taken is watched, and
    /// arms its watcher (system calls) on every refused offer or empty look.
    fd: Option<RawFd>,
    /// Offers compiled for the channel's message size, if it is a common one.
    sized: Option<SizedOffers<M, K>>,
}

// SAFETY: `Pub` owns its publisher (a `Box` in all but name) and the claim borrowing it;
// both are `Send` when the publisher is, and they move together.
unsafe impl<M: Mode, K: Topology> Send for Pub<M, K> where Publisher<Bytes, M, K>: Send {}

impl<M: Mode, K: Topology> Pub<M, K> {
    fn new(publisher: Publisher<Bytes, M, K>, max_message_size: usize) -> Self {
        Pub {
            claim: None,
            publisher: NonNull::from(Box::leak(Box::new(publisher))),
            fd: None,
            sized: SizedOffers::for_size(max_message_size),
        }
    }

    /// The publisher, unless a claim borrows it.
    fn publisher(&mut self) -> Result<&'static mut Publisher<Bytes, M, K>, Failure> {
        if self.claim.is_some() {
            return Err(busy("a claim; commit or abandon it"));
        }
        // SAFETY: the box lives until `drop`, which drops any claim first; no claim
        // borrows it now (checked), and `&mut self` keeps every other use of this handle
        // out until the returned borrow (or a claim made from it) is gone.
        Ok(unsafe { &mut *self.publisher.as_ptr() })
    }

    fn shared(&self) -> Result<&Publisher<Bytes, M, K>, Failure> {
        if self.claim.is_some() {
            return Err(busy("a claim; commit or abandon it"));
        }
        // SAFETY: as in `publisher`, shared.
        Ok(unsafe { self.publisher.as_ref() })
    }
}

impl<M: Mode, K: Topology> Drop for Pub<M, K> {
    fn drop(&mut self) {
        self.claim = None;
        // SAFETY: made by `Box::leak` in `new`, freed only here, and the claim that
        // borrowed it is gone.
        drop(unsafe { Box::from_raw(self.publisher.as_ptr()) });
    }
}

/// A failure, with what the handle found if it found the channel broken.
fn explained(failure: impl Into<Failure>, fault: Option<Error>) -> Failure {
    let mut failure = failure.into();
    if let Some(fault) = fault {
        failure.message = format!("{}; what was found: {fault}", failure.message);
    }
    failure
}

impl<M: Mode, K: Topology> Pub<M, K> {
    /// An offer's or send's outcome: running out of room or time is not a failure.
    fn outcome(&self, result: Result<(), PublishError>) -> Result<salias_code, Failure> {
        match result {
            Ok(()) => Ok(SALIAS_OK),
            Err(PublishError::Backpressured) => Ok(SALIAS_BACKPRESSURED),
            Err(PublishError::TimedOut) => Ok(crate::codes::SALIAS_TIMED_OUT),
            Err(error) => Err(self.explain(error)),
        }
    }

    fn explain(&self, error: PublishError) -> Failure {
        explained(error, PublisherOps::fault(self))
    }
}

impl<M: Mode, K: Topology> PublisherOps for Pub<M, K>
where
    Publisher<Bytes, M, K>: Send,
{
    fn offer(&mut self, bytes: &[u8]) -> Result<salias_code, Failure> {
        let sized = self.sized;
        let publisher = self.publisher()?;
        let result = match sized {
            Some(sized) if sized.size == bytes.len() => (sized.one)(publisher, bytes),
            _ => offer_any(publisher, bytes),
        };
        self.outcome(result)
    }

    fn offer_batch(&mut self, messages: &[&[u8]]) -> Result<usize, Failure> {
        match self.publisher()?.offer_batch(messages) {
            Ok(count) => Ok(count),
            Err(PublishError::Backpressured) => Ok(0),
            Err(error) => Err(self.explain(error)),
        }
    }

    fn offer_packed(&mut self, messages: &[u8], size: usize) -> Result<usize, Failure> {
        let sized = self.sized;
        let publisher = self.publisher()?;
        let result = match sized {
            Some(sized) if sized.size == size => (sized.packed)(publisher, messages),
            _ => publisher.offer_packed(messages, size),
        };
        match result {
            Ok(count) => Ok(count),
            Err(PublishError::Backpressured) => Ok(0),
            Err(error) => Err(self.explain(error)),
        }
    }

    fn send(&mut self, bytes: &[u8], timeout: Option<Duration>) -> Result<salias_code, Failure> {
        let publisher = self.publisher()?;
        let result = match timeout {
            None => publisher.send(bytes),
            Some(timeout) => publisher.send_timeout(bytes, timeout),
        };
        self.outcome(result)
    }

    fn claim(&mut self, len: usize) -> Result<Option<*mut u8>, Failure> {
        let mut claim = match self.publisher()?.claim(len) {
            Ok(claim) => claim,
            Err(PublishError::Backpressured) => return Ok(None),
            Err(error) => return Err(self.explain(error)),
        };
        let place = claim.as_mut_ptr();
        self.claim = Some(claim);
        Ok(Some(place))
    }

    fn commit(&mut self, len: Option<usize>) -> Result<salias_code, Failure> {
        let claim = self
            .claim
            .take()
            .ok_or_else(|| Failure::new(SALIAS_ERROR_NOT_HELD, "the publisher holds no claim to commit"))?;
        if let Some(len) = len {
            claim.commit_len(len).map_err(|error| self.explain(error))?;
        } else {
            claim.commit();
        }
        Ok(SALIAS_OK)
    }

    fn abandon(&mut self) -> Result<salias_code, Failure> {
        let claim = self
            .claim
            .take()
            .ok_or_else(|| Failure::new(SALIAS_ERROR_NOT_HELD, "the publisher holds no claim to abandon"))?;
        drop(claim);
        Ok(SALIAS_OK)
    }

    fn readiness_fd(&mut self) -> Result<RawFd, Failure> {
        if let Some(fd) = self.fd {
            return Ok(fd);
        }
        let fd = self.shared()?.as_raw_fd();
        self.fd = Some(fd);
        Ok(fd)
    }

    fn fault(&self) -> Option<Error> {
        self.shared().ok()?.fault()
    }

    fn published(&self) -> Result<u64, Failure> {
        Ok(self.shared()?.published())
    }

    fn slot(&self) -> Result<usize, Failure> {
        Ok(self.shared()?.slot())
    }

    fn subscribers(&self) -> Result<SubscriberCount, Failure> {
        Ok(self.shared()?.subscribers())
    }
}

/// A subscriber and the message it may hold.
struct Sub<M: Mode, K: Topology> {
    /// Declared first, so dropped before the subscriber it borrows.
    held: Option<salias::ReceivedBytes<'static, M, K>>,
    subscriber: NonNull<Subscriber<Bytes, M, K>>,
    /// As `Pub::fd`.
    fd: Option<RawFd>,
}

// SAFETY: as for `Pub`.
unsafe impl<M: Mode, K: Topology> Send for Sub<M, K> where Subscriber<Bytes, M, K>: Send {}

impl<M: Mode, K: Topology> Sub<M, K> {
    fn new(subscriber: Subscriber<Bytes, M, K>) -> Self {
        Sub {
            held: None,
            subscriber: NonNull::from(Box::leak(Box::new(subscriber))),
            fd: None,
        }
    }

    /// The subscriber, unless a held message borrows it.
    fn subscriber(&mut self) -> Result<&'static mut Subscriber<Bytes, M, K>, Failure> {
        if self.held.is_some() {
            return Err(busy("a received message"));
        }
        // SAFETY: as in `Pub::publisher`.
        Ok(unsafe { &mut *self.subscriber.as_ptr() })
    }

    fn shared(&self) -> Result<&Subscriber<Bytes, M, K>, Failure> {
        if self.held.is_some() {
            return Err(busy("a received message"));
        }
        // SAFETY: as in `Pub::publisher`, shared.
        Ok(unsafe { self.subscriber.as_ref() })
    }
}

impl<M: Mode, K: Topology> Drop for Sub<M, K> {
    fn drop(&mut self) {
        self.held = None;
        // SAFETY: as in `Pub::drop`.
        drop(unsafe { Box::from_raw(self.subscriber.as_ptr()) });
    }
}

impl<M: Mode, K: Topology> Sub<M, K> {
    fn explain(&self, error: salias::ReceiveError) -> Failure {
        explained(error, self.shared().ok().and_then(|subscriber| subscriber.fault()))
    }
}

impl<M: Numbers, K: Topology> SubscriberOps for Sub<M, K>
where
    Subscriber<Bytes, M, K>: Send,
{
    fn try_recv(&mut self) -> Result<Option<View>, Failure> {
        let received = match self.subscriber()?.try_recv() {
            Ok(received) => received,
            Err(error) => return Err(self.explain(error)),
        };
        let Some(received) = received else {
            return Ok(None);
        };
        let view = view(received.info(), &received);
        self.held = Some(received);
        Ok(Some(view))
    }

    fn recv(&mut self, timeout: Option<Duration>) -> Result<View, Failure> {
        let subscriber = self.subscriber()?;
        let received = match timeout {
            None => subscriber.recv(),
            Some(timeout) => subscriber.recv_timeout(timeout),
        };
        let received = match received {
            Ok(received) => received,
            Err(salias::ReceiveError::TimedOut) => {
                return Err(Failure::new(crate::codes::SALIAS_TIMED_OUT, String::new()));
            }
            Err(error) => return Err(self.explain(error)),
        };
        let view = view(received.info(), &received);
        self.held = Some(received);
        Ok(view)
    }

    fn release(&mut self) -> Result<salias_code, Failure> {
        self.held
            .take()
            .ok_or_else(|| Failure::new(SALIAS_ERROR_NOT_HELD, "the subscriber holds no message to release"))?;
        Ok(SALIAS_OK)
    }

    fn drain(&mut self, max: usize, handle: &mut dyn FnMut(View)) -> Result<usize, Failure> {
        let result = self
            .subscriber()?
            .drain(max, |info, payload| handle(view(info, payload)));
        result.map_err(|error| self.explain(error))
    }

    fn readiness_fd(&mut self) -> Result<RawFd, Failure> {
        if let Some(fd) = self.fd {
            return Ok(fd);
        }
        let fd = self.shared()?.as_raw_fd();
        self.fd = Some(fd);
        Ok(fd)
    }

    fn received(&self) -> Result<u64, Failure> {
        Ok(self.shared()?.received())
    }

    fn slot(&self) -> Result<usize, Failure> {
        Ok(self.shared()?.slot())
    }

    fn live_publishers(&self) -> Result<u32, Failure> {
        Ok(self.shared()?.live_publishers())
    }
}

/// A failure of a receive, or the outcome it is: a timeout is not a failure.
pub(crate) fn receive_outcome(failure: Failure) -> Result<salias_code, Failure> {
    if failure.code == crate::codes::SALIAS_TIMED_OUT {
        Ok(failure.code)
    } else {
        Err(failure)
    }
}
