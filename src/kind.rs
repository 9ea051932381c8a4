//! The two independent choices that make a channel kind: ordering [`Mode`] and subscriber
//! [`Topology`]. Both are uninhabited marker types, so a kind costs nothing at run time and
//! a wrong combination is a compile error rather than a runtime branch.

mod sealed {
    pub trait Sealed {}
}

/// How messages from several publishers are ordered. Implemented by [`Fifo`] and [`Ordered`].
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-mode-{}", std::process::id());
/// use salias::{Channel, Fanout, Fifo, kind::Mode, Ordered};
/// assert!(Ordered::ORDERED && !Fifo::ORDERED);
/// // The kind is part of the type: `Channel<T, Ordered, Fanout>` is an `OrderedFanout<T>`.
/// fn describe<M: Mode>(_: &Channel<Tick, M, Fanout>) -> &'static str { M::NAME }
/// let channel = salias::OrderedFanout::<Tick>::create(&Config::new(&name))?;
/// assert_eq!(describe(&channel), "Ordered");
/// # Ok::<(), salias::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a salias ordering mode",
    label = "expected `salias::Fifo` or `salias::Ordered` here",
    note = "a channel's second type parameter is its mode: `Fifo` (per-publisher order) or `Ordered` (one global order)"
)]
pub trait Mode: sealed::Sealed + Send + Sync + 'static {
    /// Name used in messages and in the control block.
    const NAME: &'static str;
    /// Value stored in the control block.
    const ID: u32;
    /// Bytes of frame header in front of each payload of a raw channel, before alignment.
    /// An Ordered channel of a message type stores no length in its frames: its header is
    /// FIFO's 16 bytes.
    const HEADER_LEN: usize;
    /// Whether messages carry a global sequence number.
    const ORDERED: bool;
}

/// How many subscribers see each message. Implemented by [`Mpsc`] and [`Fanout`].
///
/// ```
/// use salias::{Fanout, Mpsc, kind::Topology};
/// assert!(Fanout::FANOUT && !Mpsc::FANOUT);
/// assert_eq!((Mpsc::NAME, Fanout::NAME), ("Mpsc", "Fanout"));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a salias topology",
    label = "expected `salias::Mpsc` or `salias::Fanout` here",
    note = "a channel's third type parameter is its topology: `Mpsc` (one subscriber) or `Fanout` (each subscriber sees every message)"
)]
pub trait Topology: sealed::Sealed + Send + Sync + 'static {
    /// Name used in messages and in the control block.
    const NAME: &'static str;
    /// Value stored in the control block.
    const ID: u32;
    /// Whether several subscribers each see every message.
    const FANOUT: bool;
}

/// Modes whose messages carry one global sequence number: only [`Ordered`].
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-global-order-{}", std::process::id());
/// fn last_number<K: salias::kind::Topology>(subscriber: &salias::Subscriber<Tick, salias::Ordered, K>) -> u64 {
///     subscriber.next_sequence() // only Ordered subscribers have one
/// }
/// let channel = salias::OrderedMpsc::<Tick>::create(&Config::new(&name))?;
/// assert_eq!(last_number(&channel.subscriber()?), 0);
/// # Ok::<(), salias::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "messages of a `{Self}` channel have no global sequence number",
    label = "only `Ordered` channels number their messages",
    note = "FIFO channels order messages per publisher only; create the channel as `OrderedMpsc` or `OrderedFanout` to get one global order"
)]
pub trait GlobalOrder: Mode {}

/// Topologies with several subscriber slots: only [`Fanout`].
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-multi-subscriber-{}", std::process::id());
/// let channel = salias::OrderedFanout::<Tick>::create(&Config::new(&name).subscribers(2))?;
/// let second = channel.subscriber_at(1)?; // `subscriber_at` exists for Fanout channels only
/// # let _ = second;
/// # Ok::<(), salias::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "an `{Self}` channel has exactly one subscriber slot",
    label = "subscriber slots can only be chosen on `Fanout` channels",
    note = "use `subscriber()` for the one subscriber of an Mpsc channel, or create the channel as `FifoFanout` or `OrderedFanout` for several subscribers"
)]
pub trait MultiSubscriber: Topology {}

impl GlobalOrder for Ordered {}
impl MultiSubscriber for Fanout {}

/// Each publisher's messages arrive in the order it sent them; there is no order across
/// publishers. The publisher's hot path does no read-modify-write on shared memory.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-fifo-{}", std::process::id());
/// let channel = salias::Channel::<Tick, salias::Fifo, salias::Mpsc>::create(&Config::new(&name))?;
/// # let _ = channel;
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Debug)]
pub enum Fifo {}

/// One global order across all publishers, the same for every subscriber, established by
/// one shared sequence counter.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-ordered-{}", std::process::id());
/// let channel = salias::Channel::<Tick, salias::Ordered, salias::Mpsc>::create(&Config::new(&name))?;
/// channel.publisher()?.offer(&Tick { seq: 0 })?;
/// assert_eq!(channel.subscriber()?.try_recv()?.map(|m| m.sequence()), Some(0));
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Debug)]
pub enum Ordered {}

/// Many publishers, one subscriber.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-mpsc-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).publishers(4))?;
/// assert_eq!((channel.publishers(), channel.subscribers()), (4, 1));
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Debug)]
pub enum Mpsc {}

/// Many publishers, several subscribers; each subscriber sees every message.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-fanout-{}", std::process::id());
/// let channel = salias::FifoFanout::<Tick>::create(&Config::new(&name).subscribers(3))?;
/// let (mut a, mut b) = (channel.subscriber()?, channel.subscriber()?);
/// channel.publisher()?.offer(&Tick { seq: 9 })?;
/// assert_eq!(a.try_recv()?.map(|t| t.seq), Some(9));
/// assert_eq!(b.try_recv()?.map(|t| t.seq), Some(9)); // both see it
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Debug)]
pub enum Fanout {}

impl sealed::Sealed for Fifo {}
impl sealed::Sealed for Ordered {}
impl sealed::Sealed for Mpsc {}
impl sealed::Sealed for Fanout {}

impl Mode for Fifo {
    const NAME: &'static str = "Fifo";
    const ID: u32 = 1;
    const HEADER_LEN: usize = crate::wire::frame::FIFO_HEADER_LEN;
    const ORDERED: bool = false;
}

impl Mode for Ordered {
    const NAME: &'static str = "Ordered";
    const ID: u32 = 2;
    const HEADER_LEN: usize = crate::wire::frame::ORDERED_HEADER_LEN;
    const ORDERED: bool = true;
}

impl Topology for Mpsc {
    const NAME: &'static str = "Mpsc";
    const ID: u32 = 1;
    const FANOUT: bool = false;
}

impl Topology for Fanout {
    const NAME: &'static str = "Fanout";
    const ID: u32 = 2;
    const FANOUT: bool = true;
}

/// Zero-sized tag tying a handle to its message type and kind without owning either.
pub(crate) type KindMarker<T, M, K> = core::marker::PhantomData<fn() -> (T, M, K)>;

pub(crate) fn mode_name(id: u32) -> &'static str {
    match id {
        Fifo::ID => Fifo::NAME,
        Ordered::ID => Ordered::NAME,
        _ => "unknown-mode",
    }
}

pub(crate) fn topology_name(id: u32) -> &'static str {
    match id {
        Mpsc::ID => Mpsc::NAME,
        Fanout::ID => Fanout::NAME,
        _ => "unknown-topology",
    }
}
