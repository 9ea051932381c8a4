//! [`Channel`]: a named channel, created by its owner or connected to from any process.

use std::sync::Arc;

use crate::config::{Config, Creates};
use crate::error::Result;
use crate::kind::{Fanout, Fifo, KindMarker, Mode, Mpsc, MultiSubscriber, Ordered, Topology};
use crate::message::Frame;
use crate::message::{Bytes, MessageType, Payload};
use crate::publisher::Publisher;
pub use crate::region::Recovered;
use crate::region::{self, Fields, Kind, Ownership, Shared};
use crate::subscriber::{LossySubscriber, Start, Subscriber};
use crate::trust::Trust;

/// A named shared-memory channel carrying messages of type `T` (or raw [`Bytes`]) with
/// ordering mode `M` and topology `K`.
///
/// The process that [`create`](Channel::create)s it owns it: dropping the owner removes
/// the name (unless [`Config::keep_on_drop`] is set), while handles already made keep
/// working. Any process can [`connect`](Channel::connect) by name.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-channel-{}", std::process::id());
/// // The owner creates it; any process connects by name and claims slots.
/// let owner = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let peer = salias::FifoMpsc::<Tick>::connect(&name)?;
/// peer.publisher()?.offer(&Tick { seq: 1 })?;
/// assert_eq!(owner.subscriber()?.try_recv()?.map(|t| t.seq), Some(1));
/// # Ok::<(), salias::Error>(())
/// ```
pub struct Channel<T: Payload, M: Mode = Fifo, K: Topology = Mpsc> {
    shared: Arc<Shared>,
    ownership: Option<Ownership>,
    _marker: KindMarker<T, M, K>,
}

/// Per-publisher FIFO order, one subscriber.
pub type FifoMpsc<T> = Channel<T, Fifo, Mpsc>;
/// Per-publisher FIFO order, every subscriber sees every message.
pub type FifoFanout<T> = Channel<T, Fifo, Fanout>;
/// One global order across publishers, one subscriber.
pub type OrderedMpsc<T> = Channel<T, Ordered, Mpsc>;
/// One global order across publishers, every subscriber sees every message in that order.
pub type OrderedFanout<T> = Channel<T, Ordered, Fanout>;

/// A [`FifoMpsc`] channel of raw byte messages.
pub type RawFifoMpsc = FifoMpsc<Bytes>;
/// A [`FifoFanout`] channel of raw byte messages.
pub type RawFifoFanout = FifoFanout<Bytes>;
/// An [`OrderedMpsc`] channel of raw byte messages.
pub type RawOrderedMpsc = OrderedMpsc<Bytes>;
/// An [`OrderedFanout`] channel of raw byte messages.
pub type RawOrderedFanout = OrderedFanout<Bytes>;

impl<T: Payload, M: Mode, K: Topology> Channel<T, M, K> {
    fn kind(any_type: bool) -> Kind<'static> {
        Kind {
            mode: M::ID,
            topology: K::ID,
            fixed_len: T::FIXED_LEN,
            frame_align: Frame::<T, M>::ALIGN,
            header_len: Frame::<T, M>::HEADER,
            fingerprint: T::FINGERPRINT,
            type_name: T::FINGERPRINT.name,
            fields: Fields::Derived(T::FIELDS),
            any_type,
        }
    }

    /// Checks `config` as `create` does before it touches shared memory, and creates
    /// nothing: for the property tests of the `Config` builders (`--cfg salias_testing`).
    #[cfg(salias_testing)]
    #[doc(hidden)]
    pub fn __validate<C: Creates<T>>(config: &Config<C>) -> Result<()> {
        region::validate(config, &Self::kind(false))
    }

    /// The channel's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Bytes of ring per publisher slot.
    pub fn capacity(&self) -> usize {
        self.shared.capacity
    }

    /// Number of publisher slots.
    pub fn publishers(&self) -> u32 {
        self.shared.publishers
    }

    /// Number of subscriber slots.
    pub fn subscribers(&self) -> u32 {
        self.shared.subscribers
    }

    /// Largest message in bytes (the type's size for typed channels).
    pub fn max_message_size(&self) -> usize {
        self.shared.max_message_len
    }

    /// Whether the channel's name still leads to this handle's channel, or the channel was
    /// removed or replaced since (see [`NameState`](crate::region::NameState)). A few system
    /// calls; for cold paths.
    pub fn name_state(&self) -> Result<crate::region::NameState> {
        self.shared.name_state()
    }

    /// Whether this handle created the channel.
    pub fn is_owner(&self) -> bool {
        self.ownership.is_some()
    }

    /// The stale channel `create` found at the name and removed before creating this one
    /// (its owner had died without removing it, as an owner stopped by a signal does);
    /// `None` if the name was free, or for a connected handle.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-recovered-{}", std::process::id());
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// if let Some(stale) = channel.recovered() {
    ///     eprintln!("replaced a channel left behind by pid {:?}", stale.owner_pid);
    /// }
    /// assert_eq!(channel.recovered(), None); // the name was free
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn recovered(&self) -> Option<Recovered> {
        self.ownership.as_ref().and_then(|ownership| ownership.recovered)
    }
}

impl<T: Payload, M: Mode, K: Topology> Channel<T, M, K> {
    /// Creates the channel described by `config`; this process becomes its owner.
    ///
    /// Fails with [`Error::AlreadyExists`](crate::Error::AlreadyExists) if a live channel
    /// has the name; a stale one (its owner died) is removed and created anew.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-create-{}", std::process::id());
    /// let channel = salias::OrderedFanout::<Tick>::create(&Config::new(&name).publishers(2).subscribers(4))?;
    /// assert!(channel.is_owner());
    /// // A live channel's name is taken.
    /// let again = salias::OrderedFanout::<Tick>::create(&Config::new(&name));
    /// assert!(matches!(again, Err(salias::Error::AlreadyExists { .. })));
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn create<C: Creates<T>>(config: &Config<C>) -> Result<Self> {
        let (shared, ownership) = region::create(config, Self::kind(false))?;
        Ok(Channel {
            shared: Arc::new(shared),
            ownership: Some(ownership),
            _marker: KindMarker::default(),
        })
    }

    /// Connects to an existing channel, checking that its message type, mode and topology
    /// are the ones this handle names.
    ///
    /// Only channels created by this process's own (effective) user, with the permissions
    /// they were created with, are accepted: another user's fails with
    /// [`Error::Untrusted`](crate::Error::Untrusted). Use [`connect_with`](Self::connect_with)
    /// to accept others.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-connect-{}", std::process::id());
    /// let _owner = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let channel = salias::FifoMpsc::<Tick>::connect(&name)?;
    /// assert!(!channel.is_owner());
    /// // The type, mode and topology must be the channel's.
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
    /// # #[repr(C)]
    /// # struct Quote { bid: f64 }
    /// let wrong = salias::FifoMpsc::<Quote>::connect(&name);
    /// assert!(matches!(wrong, Err(salias::Error::TypeMismatch { .. })));
    /// let wrong = salias::FifoFanout::<Tick>::connect(&name);
    /// assert!(matches!(wrong, Err(salias::Error::KindMismatch { .. })));
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn connect(name: &str) -> Result<Self> {
        Self::connect_with(name, &Trust::default())
    }

    /// Like [`connect`](Self::connect), accepting channels of the users `trust` names.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-connect-with-{}", std::process::id());
    /// let _owner = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// // Also accept channels that the service account with uid 1000 creates.
    /// let channel = salias::FifoMpsc::<Tick>::connect_with(&name, &salias::Trust::uid(1000))?;
    /// # let _ = channel;
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn connect_with(name: &str, trust: &Trust) -> Result<Self> {
        let shared = region::connect(name, Self::kind(false), trust)?;
        Ok(Channel {
            shared: Arc::new(shared),
            ownership: None,
            _marker: KindMarker::default(),
        })
    }

    /// Claims a publisher slot. Fails with [`Error::NoFreeSlot`](crate::Error::NoFreeSlot)
    /// when every slot is held.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-publisher-{}", std::process::id());
    /// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).publishers(1))?;
    /// let publisher = channel.publisher()?;
    /// assert!(matches!(channel.publisher(), Err(salias::Error::NoFreeSlot { .. })));
    /// drop(publisher); // frees the slot
    /// assert!(channel.publisher().is_ok());
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn publisher(&self) -> Result<Publisher<T, M, K>> {
        Publisher::new(self.shared.clone())
    }

    /// Claims a subscriber slot. Fails with [`Error::NoFreeSlot`](crate::Error::NoFreeSlot)
    /// when every slot is held.
    ///
    /// On an `Mpsc` channel this is the one subscriber slot, and the subscriber resumes
    /// exactly where the previous one stopped: nothing is lost between subscribers. On a
    /// `Fanout` channel the subscriber **joins at the current end** of every ring: it
    /// receives messages published from now on, not those already in the rings.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-subscriber-{}", std::process::id());
    /// let channel = salias::FifoFanout::<Tick>::create(&Config::new(&name).subscribers(2))?;
    /// let mut publisher = channel.publisher()?;
    /// publisher.offer(&Tick { seq: 0 })?;
    /// // A fanout subscriber joins at the end: it sees what is published from now on.
    /// let mut subscriber = channel.subscriber()?;
    /// publisher.offer(&Tick { seq: 1 })?;
    /// assert_eq!(subscriber.try_recv()?.map(|t| t.seq), Some(1));
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn subscriber(&self) -> Result<Subscriber<T, M, K>> {
        Subscriber::new(self.shared.clone(), None, false, Start::End)
    }

    /// Frees the slots of publishers and subscribers whose processes died, and reports how
    /// many. Publishers also do this by themselves when a dead fanout subscriber holds them
    /// back, and claiming a slot takes over a dead holder's; call this to clean up eagerly
    /// (e.g. from a health check).
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-reap-{}", std::process::id());
    /// let channel = salias::FifoFanout::<Tick>::create(&Config::new(&name))?;
    /// let _subscriber = channel.subscriber()?;
    /// // Nobody died, so nothing is freed.
    /// assert_eq!(channel.reap(), salias::channel::Reaped::default());
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn reap(&self) -> Reaped {
        let (publishers, subscribers) = self.shared.reap(K::FANOUT);
        Reaped {
            publishers,
            subscribers,
        }
    }

    /// Claims subscriber slot `slot` specifically (Fanout only), joining at the current
    /// end of every ring. Fails with [`Error::SlotInUse`](crate::Error::SlotInUse) if a
    /// live subscriber holds it.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-subscriber-at-{}", std::process::id());
    /// let channel = salias::FifoFanout::<Tick>::create(&Config::new(&name).subscribers(4))?;
    /// let subscriber = channel.subscriber_at(3)?;
    /// assert_eq!(subscriber.slot(), 3);
    /// assert!(matches!(channel.subscriber_at(3), Err(salias::Error::SlotInUse { .. })));
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn subscriber_at(&self, slot: usize) -> Result<Subscriber<T, M, K>>
    where
        K: MultiSubscriber,
    {
        Subscriber::new(self.shared.clone(), Some(slot), false, Start::End)
    }
}

impl<T: Payload, M: Mode> Channel<T, M, Fanout> {
    /// Claims a subscriber slot for a lossy subscriber, which publishers never wait for:
    /// it receives copies, and counts every message a publisher overwrote before it read
    /// it. It joins at the current end of every ring, as [`subscriber`](Self::subscriber).
    /// Only Fanout channels have lossy subscribers (an Mpsc channel's one subscriber must
    /// see everything), so on one this does not compile.
    ///
    /// ```compile_fail
    /// # let name = format!("doc-no-lossy-mpsc-{}", std::process::id());
    /// let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name))?;
    /// let lossy = channel.lossy_subscriber()?; // Mpsc: no such method
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn lossy_subscriber(&self) -> Result<LossySubscriber<T, M>> {
        LossySubscriber::new(self.shared.clone(), Start::End)
    }

    /// A lossy subscriber that starts where `start` says: at the end (as
    /// [`lossy_subscriber`](Self::lossy_subscriber)), at the oldest message the rings still
    /// hold, or at the last `n` messages of each publisher (FIFO) or sequence numbers
    /// (Ordered). What the rings hold costs nothing to keep: it is what publishers have
    /// not yet overwritten. The last `n` a ring no longer holds are reported missing before
    /// the first message (FIFO: [`Copied::missed_before`](crate::receive::Copied::missed_before)
    /// and [`losses`](LossySubscriber::losses); Ordered: a gap), and a publisher that
    /// overwrites history while it is read is an overrun, counted as any other.
    pub fn lossy_subscriber_from(&self, start: Start) -> Result<LossySubscriber<T, M>> {
        LossySubscriber::new(self.shared.clone(), start)
    }

    /// A tethered subscriber that starts where `start` says, as
    /// [`lossy_subscriber_from`](Self::lossy_subscriber_from), and then loses nothing: from
    /// the moment it joins, publishers hold back for it from its starting point, as they
    /// do for any tethered subscriber from where it stands. How far back it reaches is
    /// what no publisher can be overwriting as it joins: each ring less the quarter of the
    /// publication window a publisher writes ahead of its tail (three quarters of a ring
    /// by default). With a window smaller than the history it takes, publishers wait
    /// until it has read its way to within a window of their tails.
    ///
    /// What a ring no longer held is reported, never guessed: Ordered, the numbers of the
    /// last `n` no ring holds are a gap before the first message; FIFO, how many of each
    /// publisher's last `n` were gone is [`Subscriber::history_missed`].
    ///
    /// ```
    /// # let name = format!("doc-subscriber-from-{}", std::process::id());
    /// use salias::receive::Start;
    /// let channel = salias::RawFifoFanout::create(&salias::Config::new(&name))?;
    /// let mut publisher = channel.publisher()?;
    /// for message in [&b"one"[..], b"two", b"three"] {
    ///     publisher.offer(message)?;
    /// }
    /// let mut late = channel.subscriber_from(Start::Oldest)?;
    /// assert_eq!(&*late.try_recv()?.expect("history"), b"one");
    /// // Asked for the last five: only three were ever sent, so none is missing.
    /// let late = channel.subscriber_from(Start::Last(5))?;
    /// assert_eq!(late.history_missed(), [0]);
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn subscriber_from(&self, start: Start) -> Result<Subscriber<T, M, Fanout>> {
        Subscriber::new(self.shared.clone(), None, false, start)
    }
}

impl<T: Payload, M: Mode, K: Topology> Channel<T, M, K> {
    /// The mapped channel, for the handles and readers made from it.
    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }
}

impl<M: Mode, K: Topology> Channel<Bytes, M, K> {
    /// Connects to a channel of any message type as raw bytes: each message is the
    /// type's bytes, and raw offers must be exactly the type's size. This is the one way
    /// to bypass the type check, for tools and bridges that do not know the type.
    ///
    /// ```
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
    /// # #[repr(C)]
    /// # struct Tick { seq: u64 }
    /// # let name = format!("doc-as-bytes-{}", std::process::id());
    /// let typed = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// typed.publisher()?.offer(&Tick { seq: 7 })?;
    /// let raw = salias::RawFifoMpsc::connect_as_bytes(&name)?;
    /// let mut subscriber = raw.subscriber()?;
    /// let bytes = subscriber.try_recv()?.expect("one message").to_vec();
    /// assert_eq!(bytes, 7u64.to_ne_bytes());
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn connect_as_bytes(name: &str) -> Result<Self> {
        Self::connect_as_bytes_with(name, &Trust::default())
    }

    /// Like [`connect_as_bytes`](Self::connect_as_bytes), accepting channels of the users
    /// `trust` names.
    pub fn connect_as_bytes_with(name: &str, trust: &Trust) -> Result<Self> {
        let shared = region::connect(name, Self::kind(true), trust)?;
        Ok(Channel {
            shared: Arc::new(shared),
            ownership: None,
            _marker: KindMarker::default(),
        })
    }
}

impl<M: Mode, K: Topology> Channel<Bytes, M, K> {
    /// Creates a channel of the message type `message_type` describes, with raw-byte
    /// handles: every message is exactly `message_type.size()` bytes, and `connect`
    /// checks other processes' types against it as against a derived Rust type with the
    /// same fields. For programs that describe their types at run time (C, C++, Python,
    /// tools); a Rust program uses its `#[derive(SaliasMessage)]` type instead.
    ///
    /// ```
    /// use salias::message::{Field, MessageType};
    /// # let name = format!("doc-create-typed-{}", std::process::id());
    /// let tick = MessageType::new("Tick", 8, 8, 0, vec![Field::new("seq", "u64", 0, 8)])?;
    /// let channel = salias::RawFifoMpsc::create_typed(&salias::Config::new(&name), &tick)?;
    /// let mut publisher = channel.publisher()?;
    /// publisher.offer(&7u64.to_ne_bytes())?;
    /// // A message of another size is refused, nothing written.
    /// assert!(matches!(
    ///     publisher.offer(&[0u8; 4]),
    ///     Err(salias::PublishError::WrongMessageSize { len: 4, expected: 8 })
    /// ));
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn create_typed(config: &Config, message_type: &MessageType) -> Result<Self> {
        let (shared, ownership) = region::create(config, Self::described_kind(message_type))?;
        Ok(Channel {
            shared: Arc::new(shared),
            ownership: Some(ownership),
            _marker: KindMarker::default(),
        })
    }

    /// Connects to a channel, checking that it carries the message type `message_type`
    /// describes (and is this kind), as [`connect`](Channel::connect) checks a derived type.
    ///
    /// ```
    /// use salias::message::MessageType;
    /// # use salias::{Config, SaliasMessage};
    /// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
    /// #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
    /// #[repr(C)]
    /// struct Tick { seq: u64 }
    /// # let name = format!("doc-connect-typed-{}", std::process::id());
    /// let _owner = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
    /// let raw = salias::RawFifoMpsc::connect_typed(&name, &MessageType::of::<Tick>())?;
    /// # let _ = raw;
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn connect_typed(name: &str, message_type: &MessageType) -> Result<Self> {
        Self::connect_typed_with(name, message_type, &Trust::default())
    }

    /// Like [`connect_typed`](Self::connect_typed), accepting channels of the users `trust`
    /// names.
    pub fn connect_typed_with(name: &str, message_type: &MessageType, trust: &Trust) -> Result<Self> {
        let shared = region::connect(name, Self::described_kind(message_type), trust)?;
        Ok(Channel {
            shared: Arc::new(shared),
            ownership: None,
            _marker: KindMarker::default(),
        })
    }

    /// A raw-byte handle's kind, carrying `message_type`: its frames are a raw channel's,
    /// which a type aligned to at most `MAX_DESCRIBED_ALIGN` shares with its derived twin.
    fn described_kind(message_type: &MessageType) -> Kind<'_> {
        const { assert!(Frame::<Bytes, M>::ALIGN >= crate::message::MAX_DESCRIBED_ALIGN) };
        Kind {
            fixed_len: Some(message_type.size()),
            // A typed channel's frames: no length field in Ordered mode.
            header_len: Frame::<Bytes, M>::in_channel(Some(message_type.size())).header(),
            fingerprint: message_type.fingerprint(),
            type_name: message_type.name(),
            fields: Fields::Described(message_type.fields()),
            ..Self::kind(false)
        }
    }
}

impl<T: Payload, M: Mode, K: Topology> Drop for Channel<T, M, K> {
    fn drop(&mut self) {
        if let Some(ownership) = &self.ownership {
            ownership.release(&self.shared);
        }
    }
}

impl<T: Payload, M: Mode, K: Topology> std::fmt::Debug for Channel<T, M, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channel")
            .field("name", &self.shared.name)
            .field("kind", &format_args!("{}{}", M::NAME, K::NAME))
            .field("capacity", &self.shared.capacity)
            .field("publishers", &self.shared.publishers)
            .field("subscribers", &self.shared.subscribers)
            .field("owner", &self.is_owner())
            .finish()
    }
}

/// What [`Channel::reap`] freed.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-reaped-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let salias::channel::Reaped { publishers, subscribers } = channel.reap();
/// assert_eq!((publishers, subscribers), (0, 0));
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reaped {
    /// Publisher slots whose process had died.
    pub publishers: u32,
    /// Subscriber slots whose process had died.
    pub subscribers: u32,
}

/// Removes the channel's names whatever state it is in (live, kept or stale). Processes
/// that have it open keep working; new connects fail with `NotFound`.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-remove-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).keep_on_drop(true))?;
/// drop(channel); // kept: the name outlives its owner
/// salias::remove(&name)?;
/// assert!(matches!(salias::FifoMpsc::<Tick>::connect(&name), Err(salias::Error::NotFound { .. })));
/// # Ok::<(), salias::Error>(())
/// ```
pub fn remove(name: &str) -> Result<()> {
    region::remove(name)
}

/// Removes the channel only if it is stale: its owner died without removing it, or died
/// while creating it. Live and kept channels are left alone. Returns whether it removed it.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-remove-stale-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// // Its owner (this process) is alive: not stale, so it stays.
/// assert!(!salias::channel::remove_stale(&name)?);
/// # drop(channel);
/// # Ok::<(), salias::Error>(())
/// ```
pub fn remove_stale(name: &str) -> Result<bool> {
    region::remove_stale(name)
}

// Here rather than in `subscriber`: a test there would build a channel, and `subscriber`
// may not depend on `channel` (scripts/layers).
#[cfg(test)]
mod tests {
    /// How `run` tells a subscriber behind its publisher (it reads ahead) from one close
    /// behind: the messages taken since a receive last found nothing left.
    #[test]
    fn a_receive_that_finds_nothing_left_marks_the_subscriber_caught_up() {
        let name = format!("unit-caught-up-{}", std::process::id());
        let channel = crate::RawFifoMpsc::create(&crate::Config::new(&name)).unwrap();
        let mut subscriber = channel.subscriber().unwrap();
        let mut publisher = channel.publisher().unwrap();
        for i in 0u64..40 {
            publisher.offer(&i.to_le_bytes()).unwrap();
        }
        assert_eq!(subscriber.drain(10, |_, _| {}).unwrap(), 10);
        assert_eq!(
            subscriber.taken_since_caught_up(),
            10,
            "a drain that filled its budget left messages"
        );
        assert_eq!(subscriber.drain(100, |_, _| {}).unwrap(), 30);
        assert_eq!(
            subscriber.taken_since_caught_up(),
            0,
            "a drain that took everything caught up"
        );
        publisher.offer(&[1; 8]).unwrap();
        publisher.offer(&[2; 8]).unwrap();
        assert!(subscriber.try_recv().unwrap().is_some());
        assert_eq!(
            subscriber.taken_since_caught_up(),
            1,
            "a message left behind the one taken"
        );
        assert!(subscriber.try_recv().unwrap().is_some());
        assert!(subscriber.try_recv().unwrap().is_none());
        assert_eq!(subscriber.taken_since_caught_up(), 0, "an empty try_recv caught up");
    }
}
