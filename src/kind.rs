//! The two independent choices that make a channel kind: ordering [`Mode`] and subscriber
//! [`Topology`]. Both are uninhabited marker types, so a kind costs nothing at run time and
//! a wrong combination is a compile error rather than a runtime branch.

mod sealed {
    pub trait Sealed {}
}

/// How messages from several publishers are ordered. Implemented by [`Fifo`] and [`Ordered`].
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
    /// Bytes of frame header in front of each payload, before alignment.
    const HEADER_LEN: usize;
    /// Whether messages carry a global sequence number.
    const ORDERED: bool;
}

/// How many subscribers see each message. Implemented by [`Mpsc`] and [`Fanout`].
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
#[diagnostic::on_unimplemented(
    message = "messages of a `{Self}` channel have no global sequence number",
    label = "only `Ordered` channels number their messages",
    note = "FIFO channels order messages per publisher only; create the channel as `OrderedMpsc` or `OrderedFanout` to get one global order"
)]
pub trait GlobalOrder: Mode {}

/// Topologies with several subscriber slots: only [`Fanout`].
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
pub enum Fifo {}

/// One global order across all publishers, the same for every subscriber, established by
/// one shared sequence counter.
pub enum Ordered {}

/// Many publishers, one subscriber.
pub enum Mpsc {}

/// Many publishers, several subscribers; each subscriber sees every message.
pub enum Fanout {}

impl sealed::Sealed for Fifo {}
impl sealed::Sealed for Ordered {}
impl sealed::Sealed for Mpsc {}
impl sealed::Sealed for Fanout {}

impl Mode for Fifo {
    const NAME: &'static str = "Fifo";
    const ID: u32 = 1;
    // commit word (8) + length (4) + flags (4)
    const HEADER_LEN: usize = 16;
    const ORDERED: bool = false;
}

impl Mode for Ordered {
    const NAME: &'static str = "Ordered";
    const ID: u32 = 2;
    // FIFO header + global sequence (8)
    const HEADER_LEN: usize = 24;
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
pub(crate) type KindMarker<T, M, K> = core::marker::PhantomData<(fn() -> T, M, K)>;

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
