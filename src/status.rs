//! A channel's live state as its control block shows it, without connecting: who holds
//! which slot and whether that process still runs, how far each publisher got, how far
//! behind each subscriber is. For monitoring, and for the `salias` command-line tool.
//!
//! Reading the state takes no slot and changes nothing. Everything here comes from shared
//! memory that any peer may be writing at the same moment, so it is a snapshot whose
//! numbers are reported as found (never used to index anything).

use std::sync::atomic::Ordering;

use crate::error::{Error, Result};
use crate::kind::{Fanout, Mode, Ordered, Topology, mode_name, topology_name};
use crate::message::{Field, Fingerprint, MessageType};
use crate::platform;
use crate::trust::Trust;
use crate::wire::fields;
use crate::wire::frame::round_up;
use crate::wire::layout::{
    CURSOR_IDLE, CURSOR_UNTETHERED, MAX_TYPE_NAME_LEN, PENDING_NONE, PENDING_TAKING, SLOT_FREE, SUBSCRIBER_DEMOTED,
    SUBSCRIBER_LOSSY,
};

pub use crate::region::NameState;

/// How many subscribers a publisher's channel has connected, by kind
/// ([`Publisher::subscribers`](crate::Publisher::subscribers)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SubscriberCount {
    /// Subscribers that hold publishers back and lose nothing (an Mpsc channel's one
    /// subscriber, and Fanout's default).
    pub tethered: u32,
    /// Fanout subscribers publishers never wait for (joined lossy, or demoted).
    pub lossy: u32,
}

impl SubscriberCount {
    /// Every subscriber, of either kind.
    pub fn total(&self) -> u32 {
        self.tethered + self.lossy
    }
}

/// Who holds a slot (or owns the channel).
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-slot-holder-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let status = salias::status::channel_status(&name)?;
/// assert_eq!(status.owner, salias::status::SlotHolder::Alive { pid: std::process::id() });
/// assert_eq!(status.owner.to_string(), format!("pid {}", std::process::id()));
/// # drop(channel);
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotHolder {
    /// Nobody.
    Free,
    /// A process that still runs.
    Alive {
        /// Its process id.
        pid: u32,
    },
    /// A process that has exited without giving the slot back; the next claim or
    /// [`Channel::reap`](crate::Channel::reap) takes the slot over.
    Dead {
        /// Its process id.
        pid: u32,
    },
}

impl SlotHolder {
    fn from_token(token: u64) -> SlotHolder {
        match token {
            SLOT_FREE => SlotHolder::Free,
            token if platform::token_alive(token) => SlotHolder::Alive {
                pid: platform::token_pid(token),
            },
            token => SlotHolder::Dead {
                pid: platform::token_pid(token),
            },
        }
    }
}

impl std::fmt::Display for SlotHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SlotHolder::Free => write!(f, "free"),
            SlotHolder::Alive { pid } => write!(f, "pid {pid}"),
            SlotHolder::Dead { pid } => write!(f, "pid {pid} (dead)"),
        }
    }
}

/// One publisher slot and its ring.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-publisher-status-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let mut publisher = channel.publisher()?;
/// publisher.offer(&Tick { seq: 0 })?;
/// let slot = &salias::status::channel_status(&name)?.publishers[0];
/// assert_eq!((slot.published, slot.backpressured, slot.pending), (1, 0, None));
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PublisherStatus {
    /// Who holds the slot.
    pub holder: SlotHolder,
    /// Bytes committed to the ring so far (the position after the last committed frame).
    pub position: u64,
    /// Messages committed.
    pub published: u64,
    /// Offers refused for lack of room.
    pub backpressured: u64,
    /// Ordered mode: the first global sequence number the holder has taken but not yet
    /// committed, if any.
    pub pending: Option<u64>,
}

/// One subscriber slot.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-subscriber-status-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let _subscriber = channel.subscriber()?;
/// channel.publisher()?.offer(&Tick { seq: 0 })?;
/// let slot = &salias::status::channel_status(&name)?.subscribers[0];
/// assert!(slot.backlog_bytes > 0); // published, not yet released
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubscriberStatus {
    /// Who holds the slot.
    pub holder: SlotHolder,
    /// Its released read position in each publisher's ring; `None` where a fanout slot
    /// holds nobody back (nobody holds it).
    pub cursors: Vec<Option<u64>>,
    /// Bytes published but not yet released by this slot, over every ring. Releases are
    /// batched, so a subscriber that keeps up shows a small backlog too.
    pub backlog_bytes: u64,
    /// Whether publishers wait for it (tethered) or overrun it (lossy). Mpsc subscribers
    /// are always tethered.
    pub kind: SubscriberKind,
    /// A lossy subscriber that joined tethered and was demoted after the channel's
    /// `tether_timeout`.
    pub demoted: bool,
    /// Messages (FIFO) or sequence numbers (Ordered) this slot's lossy subscriber reported
    /// missing, as it last published the count (Ordered: every gap it found, overruns and
    /// numbers lost with dead publishers alike); 0 for a tethered one.
    pub missed: u64,
}

/// How a subscriber keeps up with a Fanout channel's publishers.
///
/// ```
/// let kind = salias::status::SubscriberKind::Lossy;
/// assert_eq!(kind.to_string(), "lossy");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubscriberKind {
    /// Holds publishers back and loses nothing.
    Tethered,
    /// Never holds publishers back; overrun when it falls a ring behind, and says what it
    /// missed.
    Lossy,
}

impl std::fmt::Display for SubscriberKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SubscriberKind::Tethered => "tethered",
            SubscriberKind::Lossy => "lossy",
        })
    }
}

/// What a channel's control block says right now.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-channel-status-{}", std::process::id());
/// let _channel = salias::OrderedMpsc::<Tick>::create(&Config::new(&name).capacity(64 << 10))?;
/// let status = salias::status::channel_status(&name)?;
/// assert_eq!((status.kind.as_str(), status.capacity), ("OrderedMpsc", 64 << 10));
/// assert_eq!(status.message_type, Some(("Tick".to_string(), 8)));
/// assert_eq!(status.sequence, Some(0));
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChannelStatus {
    /// The channel's name.
    pub name: String,
    /// False when the owner died while creating the channel: then only `owner` says
    /// anything, and the channel is stale.
    pub initialised: bool,
    /// Its kind, e.g. `OrderedMpsc`.
    pub kind: String,
    /// The message type of a typed channel and its size in bytes; `None` for raw bytes.
    pub message_type: Option<(String, usize)>,
    /// The whole fingerprint a typed channel was created with (what `connect` compares);
    /// `None` for raw bytes. For tools that check a type without knowing it, such as a
    /// bridge carrying the channel to another host.
    pub recorded_type: Option<RecordedType>,
    /// Bytes per publisher ring.
    pub capacity: usize,
    /// Largest message in bytes.
    pub max_message_size: usize,
    /// The process that created it; `Free` once the owner kept it and left
    /// (`Config::keep`), `Dead` if the owner died without removing it (stale).
    pub owner: SlotHolder,
    /// Ordered mode: global sequence numbers taken so far.
    pub sequence: Option<u64>,
    /// Every publisher slot.
    pub publishers: Vec<PublisherStatus>,
    /// Every subscriber slot.
    pub subscribers: Vec<SubscriberStatus>,
    /// The user owning the channel's control object.
    pub owner_uid: u32,
    /// The permission bits of the control object, e.g. `0o600`.
    pub mode: u32,
    frame_align: usize,
}

/// A typed channel's message type as its control block records it: the fields of the
/// [`Fingerprint`] its creator's type had, which `connect` compares with the caller's.
///
/// ```
/// # use salias::{Config, Message, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-recorded-type-{}", std::process::id());
/// let _channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let recorded = salias::status::channel_status(&name)?.recorded_type.expect("a typed channel");
/// assert!(recorded.is(&Tick::FINGERPRINT));
/// assert!(recorded.to_string().starts_with("`Tick` (schema v0, 8 bytes, align 8, layout "));
/// // Its fields, as a program in another language or a tool lays the messages out.
/// let described = recorded.message_type().expect("its fields were recorded");
/// assert_eq!(described.fields()[0].name, "seq");
/// assert_eq!(described, salias::message::MessageType::of::<Tick>());
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RecordedType {
    /// The type's name.
    pub name: String,
    /// Its size in bytes.
    pub size: u32,
    /// Its alignment in bytes.
    pub align: u32,
    /// The hash of its fields' names, types, offsets and sizes.
    pub layout_hash: u64,
    /// Its schema version.
    pub schema_version: u32,
    /// Its fields in offset order, as the creator recorded them; `None` when it recorded
    /// none (a type whose field names and labels exceed the control block's 2 KiB table)
    /// or what it recorded does not hash to the layout hash (damaged or forged).
    pub fields: Option<Vec<Field>>,
}

impl RecordedType {
    /// The type as a [`MessageType`], for connecting with
    /// [`connect_typed`](crate::Channel::connect_typed) or laying out its messages (a
    /// Python dtype, a C struct, a tool's columns); `None` when no field table was
    /// recorded (see [`fields`](Self::fields)).
    pub fn message_type(&self) -> Option<MessageType> {
        let fields = self.fields.clone()?;
        let described = MessageType::new(
            self.name.clone(),
            self.size as usize,
            self.align as usize,
            self.schema_version,
            fields,
        )
        .ok()?;
        (described.layout_hash() == self.layout_hash).then_some(described)
    }

    /// Whether `fingerprint` is this type: what `connect` requires.
    pub fn is(&self, fingerprint: &Fingerprint) -> bool {
        self.name == fingerprint.name
            && (self.size, self.align, self.layout_hash, self.schema_version)
                == (
                    fingerprint.size,
                    fingerprint.align,
                    fingerprint.layout_hash,
                    fingerprint.schema_version,
                )
    }
}

/// The same words as the types in [`Error::TypeMismatch`].
impl std::fmt::Display for RecordedType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fingerprint = Fingerprint {
            name: "",
            size: self.size,
            align: self.align,
            layout_hash: self.layout_hash,
            schema_version: self.schema_version,
        };
        f.write_str(&fingerprint.describe(&self.name))
    }
}

impl ChannelStatus {
    /// Whether the owner died without removing the channel: [`crate::channel::remove_stale`]
    /// would remove it.
    pub fn is_stale(&self) -> bool {
        matches!(self.owner, SlotHolder::Dead { .. })
    }

    /// The size of one frame of a typed channel's messages in its rings, for turning
    /// byte counts into messages; `None` for raw channels.
    pub fn frame_len(&self) -> Option<usize> {
        let (_, size) = self.message_type.as_ref()?;
        let header = crate::wire::frame::mode_header_len(self.kind.starts_with(Ordered::NAME), true);
        Some(round_up(round_up(header, self.frame_align) + size, self.frame_align))
    }
}

/// Reads the live state of channel `name` without connecting to it.
///
/// Fails like `connect` does for a name that is not there, an object that is not a salias
/// channel, one still being created, one another user owns, or one whose control block is
/// inconsistent; a stale channel (its owner died) is reported, with `owner` `Dead`.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-status-{}", std::process::id());
/// let channel = salias::FifoFanout::<Tick>::create(&Config::new(&name).subscribers(2))?;
/// let mut publisher = channel.publisher()?;
/// let _subscriber = channel.subscriber()?;
/// publisher.offer(&Tick { seq: 1 })?;
/// let status = salias::status::channel_status(&name)?;
/// assert_eq!(status.kind, "FifoFanout");
/// assert_eq!(status.publishers[0].published, 1);
/// assert!(matches!(status.subscribers[0].holder, salias::status::SlotHolder::Alive { .. }));
/// assert_eq!(status.subscribers[1].holder, salias::status::SlotHolder::Free);
/// assert_eq!(status.mode, 0o600); // owner-only, the default
/// # Ok::<(), salias::Error>(())
/// ```
pub fn channel_status(name: &str) -> Result<ChannelStatus> {
    channel_status_with(name, &Trust::default())
}

/// Like [`channel_status`], accepting channels of the users `trust` names.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-status-with-{}", std::process::id());
/// let _channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// // A monitoring tool that reads every user's channels.
/// let status = salias::status::channel_status_with(&name, &salias::Trust::any_user())?;
/// assert!(!status.is_stale());
/// # Ok::<(), salias::Error>(())
/// ```
pub fn channel_status_with(name: &str, trust: &Trust) -> Result<ChannelStatus> {
    let view = match crate::region::open_control_view(name, trust) {
        // Its owner died while creating it: nothing but the owner is known.
        Err(Error::Stale { owner_pid, .. }) => {
            let facts = crate::region::control_facts(name)?;
            return Ok(ChannelStatus {
                name: name.to_owned(),
                initialised: false,
                kind: "unknown".into(),
                message_type: None,
                recorded_type: None,
                capacity: 0,
                max_message_size: 0,
                owner: SlotHolder::Dead { pid: owner_pid },
                sequence: None,
                publishers: Vec::new(),
                subscribers: Vec::new(),
                owner_uid: facts.uid,
                mode: facts.mode,
                frame_align: 8,
            });
        }
        other => other?,
    };
    let (control, info, owner) = (&view.control, &view.info, view.owner);
    let ordered = info.mode == Ordered::ID;
    let rings = info.publishers as usize;
    let publishers: Vec<PublisherStatus> = (0..rings)
        .map(|p| {
            let slot = control.publisher_slot(p);
            let pending = slot.progress.pending.load(Ordering::Acquire);
            PublisherStatus {
                holder: SlotHolder::from_token(slot.holder.token.load(Ordering::Acquire)),
                position: slot.progress.tail.load(Ordering::Acquire),
                published: slot.progress.published.load(Ordering::Relaxed),
                backpressured: slot.progress.backpressured.load(Ordering::Relaxed),
                pending: (ordered && pending != PENDING_NONE && pending != PENDING_TAKING).then_some(pending),
            }
        })
        .collect();
    let fanout = info.topology == Fanout::ID;
    let subscribers = (0..info.subscribers as usize)
        .map(|s| {
            let slot = control.subscriber_slot(s);
            let holder = SlotHolder::from_token(slot.holder.token.load(Ordering::Acquire));
            let kind_word = if fanout {
                slot.flow.kind.load(Ordering::Relaxed)
            } else {
                0
            };
            let cursors: Vec<Option<u64>> = (0..rings)
                .map(|p| {
                    let cursor = control.cursor(s, p).load(Ordering::Acquire);
                    match cursor {
                        CURSOR_IDLE if fanout => None,
                        // A lossy cursor shows its position, for lag; nobody waits for it.
                        lossy if fanout && lossy >= CURSOR_UNTETHERED => Some(lossy & !CURSOR_UNTETHERED),
                        cursor => Some(cursor),
                    }
                })
                .collect();
            let backlog_bytes = cursors
                .iter()
                .zip(&publishers)
                .filter_map(|(cursor, publisher)| Some(publisher.position.saturating_sub((*cursor)?)))
                .fold(0u64, u64::saturating_add);
            SubscriberStatus {
                holder,
                cursors,
                backlog_bytes,
                kind: match kind_word {
                    SUBSCRIBER_LOSSY | SUBSCRIBER_DEMOTED => SubscriberKind::Lossy,
                    _ => SubscriberKind::Tethered,
                },
                demoted: kind_word == SUBSCRIBER_DEMOTED,
                missed: if fanout {
                    slot.flow.missed.load(Ordering::Relaxed)
                } else {
                    0
                },
            }
        })
        .collect();
    let record = &info.message_type;
    let message_type = (record.layout_hash != 0).then(|| {
        let len = (record.name_len as usize).min(MAX_TYPE_NAME_LEN);
        (
            String::from_utf8_lossy(&record.name[..len]).into_owned(),
            record.size as usize,
        )
    });
    let recorded_type = (record.layout_hash != 0).then(|| {
        let mut recorded = RecordedType {
            name: String::from_utf8_lossy(&record.name[..(record.name_len as usize).min(MAX_TYPE_NAME_LEN)])
                .into_owned(),
            size: record.size,
            align: record.align,
            layout_hash: record.layout_hash,
            schema_version: record.schema_version,
            fields: fields::decode(&record.field_table, record.field_table_len).map(|fields| {
                (fields.into_iter())
                    .map(|(name, ty, offset, size)| Field::new(name, ty, offset, size))
                    .collect()
            }),
        };
        // Trusted only if it is the table of the type the fingerprint names.
        if recorded.message_type().is_none() {
            recorded.fields = None;
        }
        recorded
    });
    // A peer that truncated the block while it was read made every number above a zero.
    view.check_health(name)?;
    Ok(ChannelStatus {
        name: name.to_owned(),
        initialised: true,
        kind: format!("{}{}", mode_name(info.mode), topology_name(info.topology)),
        message_type,
        recorded_type,
        capacity: info.capacity as usize,
        max_message_size: info.max_message_len as usize,
        owner: SlotHolder::from_token(owner),
        sequence: ordered.then(|| control.hot().sequence.next.load(Ordering::Acquire)),
        publishers,
        subscribers,
        owner_uid: view.facts.uid,
        mode: view.facts.mode,
        frame_align: info.frame_align as usize,
    })
}

/// Where this platform keeps shared-memory objects as files.
const SHM_DIR: &str = "/dev/shm";

/// The names of the salias channels on this machine that the caller can open for reading
/// and writing, sorted.
///
/// Reads the shared-memory directory (`/dev/shm`). Left out: objects that are not salias
/// channels, that the caller cannot open, and channels whose creator has not yet written
/// their name. Fails where the platform has no such directory.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-list-{}", std::process::id());
/// let _channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// assert!(salias::status::list_channels()?.contains(&name));
/// # Ok::<(), salias::Error>(())
/// ```
pub fn list_channels() -> Result<Vec<String>> {
    let entries = std::fs::read_dir(SHM_DIR).map_err(|e| Error::Platform {
        call: "read_dir",
        object: SHM_DIR.into(),
        errno: e.raw_os_error(),
        hint: "salias lists channels from the shared-memory directory, which this system does not offer; \
                   look a channel up by its name instead"
            .into(),
    })?;
    let mut names: Vec<String> = entries
        .filter_map(|entry| crate::region::channel_name_of_object(&entry.ok()?.file_name().to_string_lossy()))
        .collect();
    names.sort();
    Ok(names)
}

/// The processes that still have a *removed* channel of this name mapped: its owner
/// removed it (or `remove` did) while they held handles, so they go on using a channel
/// nobody new can reach, perhaps beside a new channel of the same name. Their handles'
/// `name_state` says `Removed` or `Replaced`; this finds them from outside.
///
/// Linux: reads `/proc/PID/maps` of every process the caller may read (its own user's,
/// or all as root), looking for the channel's control object marked deleted. Fails
/// elsewhere, and for an invalid name. Sorted, each pid once.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-removed-users-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// assert!(salias::status::removed_channel_users(&name)?.is_empty());
/// salias::remove(&name)?; // `channel` still maps it
/// # #[cfg(target_os = "linux")]
/// assert_eq!(salias::status::removed_channel_users(&name)?, [std::process::id()]);
/// # drop(channel);
/// # Ok::<(), salias::Error>(())
/// ```
pub fn removed_channel_users(name: &str) -> Result<Vec<u32>> {
    crate::config::validate_name(name)?;
    let object = crate::platform::ObjectNames::of(name).control;
    // A removed object's mapping reads "/dev/shm/salias-….c (deleted)".
    let deleted = format!("{SHM_DIR}{object} (deleted)");
    let entries = std::fs::read_dir("/proc").map_err(|e| Error::Platform {
        call: "read_dir",
        object: "/proc".into(),
        errno: e.raw_os_error(),
        hint: "finding the processes that map a removed channel needs Linux's /proc".into(),
    })?;
    let mut users: Vec<u32> = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            // Processes of other users (unreadable) and ones that exit meanwhile are skipped.
            std::fs::read_to_string(format!("/proc/{pid}/maps"))
                .is_ok_and(|maps| maps.lines().any(|line| line.ends_with(&deleted)))
        })
        .collect();
    users.sort_unstable();
    Ok(users)
}
