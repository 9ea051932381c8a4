//! What a channel is created with: [`Config`], the rules for channel names
//! ([`validate_name`]), huge pages, and the limits every setting is checked against
//! before any shared memory is touched.

use std::marker::PhantomData;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, NameProblem, Result};
use crate::message::{Bytes, Payload};

pub use crate::wire::layout::{MAX_NAME_LEN, MAX_PUBLISHERS, MAX_SUBSCRIBERS};
/// Subscriber slots of a Fanout channel whose config does not set them.
pub const DEFAULT_FANOUT_SUBSCRIBERS: u32 = 8;
/// Largest ring capacity per publisher: 1 TiB of address space is plenty; beyond it the
/// double mapping of many rings would exhaust the address space.
pub const MAX_CAPACITY: usize = 1 << 40;

/// Explicit huge pages for the rings. `None` uses normal pages.
///
/// ```
/// let config = salias::Config::new("quotes").capacity(2 << 20).huge_pages(salias::config::HugePages::Size2MB);
/// assert_eq!(salias::config::HugePages::Size2MB.size(), Some(2 << 20));
/// // `create` fails, rather than falling back, where no hugetlbfs mount has free pages.
/// # let _ = config;
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HugePages {
    /// Normal pages (the default).
    #[default]
    None,
    /// 2 MiB pages from a hugetlbfs mount.
    Size2MB,
    /// 1 GiB pages from a hugetlbfs mount.
    Size1GB,
}

impl HugePages {
    /// The page size in bytes, or `None` for normal pages.
    pub fn size(self) -> Option<usize> {
        match self {
            HugePages::None => None,
            HugePages::Size2MB => Some(2 << 20),
            HugePages::Size1GB => Some(1 << 30),
        }
    }

    pub(crate) fn to_raw(self) -> u32 {
        match self {
            HugePages::None => 0,
            HugePages::Size2MB => 1,
            HugePages::Size1GB => 2,
        }
    }

    pub(crate) fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(HugePages::None),
            1 => Some(HugePages::Size2MB),
            2 => Some(HugePages::Size1GB),
            _ => None,
        }
    }
}

/// Everything `create` needs to make a channel. Start from [`Config::new`] and change what
/// differs from the defaults.
///
/// The type parameter says which channels the config can create, so a setting that means
/// nothing for a channel is a compile error rather than silently ignored: `Config` (that
/// is, `Config<AnyChannel>`) holds only settings every channel has and creates any
/// channel; a raw-only setting ([`max_message_size`](Config::max_message_size): a typed
/// channel's messages are always `size_of::<T>()` bytes) turns it into a
/// `Config<RawChannel>`, which creates raw byte channels only.
///
/// ```
/// let config = salias::Config::new("quotes").capacity(4 << 20).publishers(2);
/// assert_eq!(config.name(), "quotes");
/// let raw: salias::Config<salias::config::RawChannel> = config.max_message_size(256);
/// # let _ = raw;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config<C: ChannelSettings = AnyChannel> {
    pub(crate) name: String,
    pub(crate) capacity: usize,
    pub(crate) publishers: u32,
    /// `None`: the kind's default (1 for Mpsc, [`DEFAULT_FANOUT_SUBSCRIBERS`] for Fanout).
    pub(crate) subscribers: Option<u32>,
    pub(crate) max_message_size: usize,
    pub(crate) huge_pages: HugePages,
    pub(crate) hugetlbfs_dir: Option<PathBuf>,
    pub(crate) numa_node: Option<u32>,
    pub(crate) publication_window: Option<usize>,
    pub(crate) permissions: u32,
    pub(crate) keep: bool,
    pub(crate) tether_timeout: Option<Duration>,
    _channels: PhantomData<fn() -> C>,
}

/// A [`Config`] with only the settings every channel has: it creates channels of any
/// message type, and raw byte channels with the default 4 KiB message maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyChannel {}

/// A [`Config`] with a raw-only setting ([`Config::max_message_size`]): it creates raw byte
/// channels ([`Bytes`]) only.
///
/// ```compile_fail
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// // A typed channel's messages are `size_of::<Tick>()` bytes: no maximum to set.
/// let _ = salias::FifoMpsc::<Tick>::create(&Config::new("ticks").max_message_size(64));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RawChannel {}

/// Which channels a [`Config`] creates: [`AnyChannel`] or [`RawChannel`]. Sealed.
pub trait ChannelSettings: sealed::Sealed + 'static {}
impl ChannelSettings for AnyChannel {}
impl ChannelSettings for RawChannel {}

/// That a [`Config`] with settings `Self` can create a channel of payload `T`.
#[diagnostic::on_unimplemented(
    message = "this `Config` has `max_message_size` set, which only raw byte channels have, so it cannot create a channel of `{T}`",
    label = "a typed channel's messages are exactly `size_of::<{T}>()` bytes",
    note = "remove `.max_message_size(...)` for a channel of `{T}`, or carry raw bytes (`salias::Bytes`, e.g. `RawFifoMpsc`) to choose a maximum"
)]
pub trait Creates<T: Payload>: ChannelSettings {}
impl<T: Payload> Creates<T> for AnyChannel {}
impl Creates<Bytes> for RawChannel {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::AnyChannel {}
    impl Sealed for super::RawChannel {}
}

impl Config {
    /// A config for a channel called `name` with the defaults: 1 MiB ring per publisher,
    /// 1 publisher slot, 1 subscriber slot, raw messages up to 4 KiB, normal pages, no
    /// NUMA binding, the whole ring as publication window, owner-only permissions
    /// (`0o600`), and names removed when the owner drops the channel.
    ///
    /// ```
    /// use salias::{Config, config::HugePages};
    /// let config = Config::new("market-data")
    ///     .capacity(4 << 20)          // 4 MiB of ring per publisher
    ///     .publishers(2)               // two publisher slots
    ///     .subscribers(8)             // eight subscriber slots (Fanout)
    ///     .publication_window(1 << 20) // how far a publisher may run ahead of the slowest reader
    ///     .huge_pages(HugePages::None)
    ///     .permissions(0o660)         // owner and group may connect
    ///     .keep_on_drop(false);       // the owner's drop removes the name
    /// assert_eq!(config.name(), "market-data");
    /// // Raw byte channels only: the largest message.
    /// let raw = config.max_message_size(1024);
    /// # let _ = raw;
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Config {
            name: name.into(),
            capacity: 1 << 20,
            publishers: 1,
            subscribers: None,
            max_message_size: 4096,
            huge_pages: HugePages::None,
            hugetlbfs_dir: None,
            numa_node: None,
            publication_window: None,
            permissions: 0o600,
            keep: false,
            tether_timeout: None,
            _channels: PhantomData,
        }
    }
}

impl<C: ChannelSettings> Config<C> {
    /// The channel name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes of ring per publisher slot: a power of two and a multiple of the page size
    /// (of the huge page size when huge pages are on).
    ///
    /// ```
    /// # let name = format!("doc-capacity-{}", std::process::id());
    /// // Not a power of two: `create` says so, and what to do.
    /// let err = salias::RawFifoMpsc::create(&salias::Config::new(&name).capacity(3000)).unwrap_err();
    /// assert!(matches!(err, salias::Error::InvalidConfig { field: "capacity", .. }));
    /// ```
    pub fn capacity(mut self, bytes: usize) -> Self {
        self.capacity = bytes;
        self
    }

    /// Number of publisher slots (1 to [`MAX_PUBLISHERS`]); each owns one ring.
    pub fn publishers(mut self, slots: u32) -> Self {
        self.publishers = slots;
        self
    }

    /// Number of subscriber slots: exactly 1 for `Mpsc`, 1 to [`MAX_SUBSCRIBERS`] for
    /// `Fanout`. Unset, an Mpsc channel has its one slot and a Fanout channel
    /// [`DEFAULT_FANOUT_SUBSCRIBERS`]: a handful of readers join without configuring anything,
    /// and each unused slot costs a few hundred bytes of control block, never a publisher's
    /// time (a slot nobody holds holds no one back).
    ///
    /// ```
    /// # let name = format!("doc-subscribers-{}", std::process::id());
    /// let channel = salias::RawFifoFanout::create(&salias::Config::new(&name))?;
    /// assert_eq!(channel.subscribers(), salias::config::DEFAULT_FANOUT_SUBSCRIBERS);
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn subscribers(mut self, slots: u32) -> Self {
        self.subscribers = Some(slots);
        self
    }

    /// The subscriber slots a channel of this topology gets.
    pub(crate) fn subscriber_slots(&self, fanout: bool) -> u32 {
        self.subscribers
            .unwrap_or(if fanout { DEFAULT_FANOUT_SUBSCRIBERS } else { 1 })
    }

    /// Largest raw message, in bytes (default 4 KiB). Raw byte channels only: the config
    /// becomes a `Config<RawChannel>`, which a typed channel's `create` refuses at compile
    /// time, as its messages are always `size_of::<T>()` bytes.
    ///
    /// ```
    /// # let name = format!("doc-max-message-size-{}", std::process::id());
    /// let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name).max_message_size(64))?;
    /// assert_eq!(channel.max_message_size(), 64);
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn max_message_size(self, bytes: usize) -> Config<RawChannel> {
        Config {
            name: self.name,
            capacity: self.capacity,
            publishers: self.publishers,
            subscribers: self.subscribers,
            max_message_size: bytes,
            huge_pages: self.huge_pages,
            hugetlbfs_dir: self.hugetlbfs_dir,
            numa_node: self.numa_node,
            publication_window: self.publication_window,
            permissions: self.permissions,
            keep: self.keep,
            tether_timeout: self.tether_timeout,
            _channels: PhantomData,
        }
    }

    /// Back the rings with explicit huge pages (Linux). Fails at `create` if they cannot be
    /// had: salias never falls back to normal pages silently.
    pub fn huge_pages(mut self, pages: HugePages) -> Self {
        self.huge_pages = pages;
        self
    }

    /// The hugetlbfs mount to take huge pages from. Default: `$SALIAS_HUGETLBFS_DIR`, else
    /// `/dev/hugepages`.
    pub fn hugetlbfs_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.hugetlbfs_dir = Some(dir.into());
        self
    }

    /// Bind the rings' memory to this NUMA node (Linux).
    pub fn numa_node(mut self, node: u32) -> Self {
        self.numa_node = Some(node);
        self
    }

    /// Most bytes a publisher may have in flight (written but not yet released by the
    /// slowest subscriber). A smaller window keeps a full ring from becoming milliseconds of
    /// queueing delay: offers are refused earlier instead. Default: the whole ring.
    pub fn publication_window(mut self, bytes: usize) -> Self {
        self.publication_window = Some(bytes);
        self
    }

    /// Permission bits of the shared-memory objects (default `0o600`, owner only).
    ///
    /// ```
    /// # let name = format!("doc-permissions-{}", std::process::id());
    /// let _channel = salias::RawFifoMpsc::create(&salias::Config::new(&name).permissions(0o640))?;
    /// assert_eq!(salias::status::channel_status(&name)?.mode, 0o640);
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn permissions(mut self, mode: u32) -> Self {
        self.permissions = mode;
        self
    }

    /// Keep the channel's names when the owner drops it, so it outlives the owner.
    /// Remove it later with [`remove`](crate::remove).
    pub fn keep_on_drop(mut self, keep: bool) -> Self {
        self.keep = keep;
        self
    }

    /// Fanout only: a publisher held back by one tethered subscriber for longer than
    /// `timeout` demotes it to lossy, so a stuck consumer cannot stall the feed forever.
    /// The demoted subscriber's next receive returns
    /// [`ReceiveError::Demoted`](crate::ReceiveError::Demoted); it goes on as a
    /// [`LossySubscriber`](crate::LossySubscriber). Off by default: tethered subscribers
    /// then hold publishers back for as long as they live. `create` refuses it for Mpsc
    /// channels and a zero timeout.
    ///
    /// ```
    /// # let name = format!("doc-tether-timeout-{}", std::process::id());
    /// use std::time::Duration;
    /// let config = salias::Config::new(&name).tether_timeout(Duration::from_millis(50));
    /// let _feed = salias::RawFifoFanout::create(&config)?;
    /// # Ok::<(), salias::Error>(())
    /// ```
    pub fn tether_timeout(mut self, timeout: Duration) -> Self {
        self.tether_timeout = Some(timeout);
        self
    }

    /// The huge page directory in effect for this config.
    pub(crate) fn hugetlbfs_path(&self) -> PathBuf {
        self.hugetlbfs_dir
            .clone()
            .or_else(|| std::env::var_os("SALIAS_HUGETLBFS_DIR").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("/dev/hugepages"))
    }
}

/// Checks a channel name: 1 to [`MAX_NAME_LEN`] bytes of `A-Z a-z 0-9 . _ -`, not starting
/// with `.` or `-`. Such names are portable to every platform's shared-memory namespace and
/// cannot escape it.
///
/// ```
/// assert!(salias::config::validate_name("market-data.eu_1").is_ok());
/// let err = salias::config::validate_name("bad/name").unwrap_err();
/// assert!(err.to_string().contains("'/'"));
/// ```
pub fn validate_name(name: &str) -> Result<()> {
    let fail = |problem| {
        Err(Error::InvalidName {
            name: name.to_owned(),
            problem,
        })
    };
    if name.is_empty() {
        return fail(NameProblem::Empty);
    }
    if name.len() > MAX_NAME_LEN {
        return fail(NameProblem::TooLong { len: name.len() });
    }
    if let Some((at, ch)) = name
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return fail(NameProblem::BadChar { ch, at });
    }
    if name.starts_with(['.', '-']) {
        return fail(NameProblem::BadStart);
    }
    Ok(())
}
