//! The error of every setup call (create, connect, claiming a handle, status), and what a
//! publish's or a receive's small error becomes through `?`.
//!
//! Each variant carries what is needed to write a sentence that says what went wrong and
//! how to fix it; `Display` is that sentence, never a `Debug` dump.

use std::fmt;

pub use crate::handle_error::{MAX_GAP, PublishError, ReceiveError};
use crate::wire::layout::MAX_NAME_LEN;

/// Which kind of handle a slot belongs to.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-role-{}", std::process::id());
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let _only = channel.subscriber()?;
/// match channel.subscriber() {
///     Err(salias::Error::NoFreeSlot { role, slots, .. }) => assert_eq!((role, slots), (salias::error::Role::Subscriber, 1)),
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A publisher (publisher slot).
    Publisher,
    /// A subscriber (subscriber slot).
    Subscriber,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Publisher => "publisher",
            Role::Subscriber => "subscriber",
        })
    }
}

/// Why a channel name was refused.
///
/// ```
/// use salias::{Error, error::NameProblem};
/// let err = salias::config::validate_name("").unwrap_err();
/// assert!(matches!(err, Error::InvalidName { problem: NameProblem::Empty, .. }));
/// let err = salias::config::validate_name("-quotes").unwrap_err();
/// assert!(matches!(err, Error::InvalidName { problem: NameProblem::BadStart, .. }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameProblem {
    /// The name has no characters.
    Empty,
    /// The name is longer than [`MAX_NAME_LEN`] bytes.
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The name contains a character outside `A-Z a-z 0-9 . _ -`.
    BadChar {
        /// The offending character.
        ch: char,
        /// Its byte offset in the name.
        at: usize,
    },
    /// The name starts with `.` or `-`.
    BadStart,
}

/// Why [`Error::Untrusted`] refused a channel.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-trust-problem-{}", std::process::id());
/// use std::os::unix::fs::PermissionsExt;
/// let _owner = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// # let objects = salias::__private::shm_object_names(&name);
/// # #[cfg(target_os = "linux")] {
/// // Someone widened the channel's files after they were created:
/// std::fs::set_permissions(format!("/dev/shm{}", objects[0]), std::fs::Permissions::from_mode(0o666)).unwrap();
/// match salias::FifoMpsc::<Tick>::connect(&name) {
///     Err(salias::Error::Untrusted { problem: salias::error::TrustProblem::WiderMode { recorded: 0o600 }, .. }) => {}
///     other => panic!("{other:?}"),
/// }
/// # }
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrustProblem {
    /// Its objects are owned by a user the caller's [`Trust`](crate::Trust) does not name.
    Owner,
    /// An object's mode grants more than the permissions recorded at creation (the
    /// channel's files were `chmod`ed since).
    WiderMode {
        /// The permission bits the channel was created with.
        recorded: u32,
    },
    /// The ring object has another owner than the control object.
    MixedOwners {
        /// The ring object's owner.
        ring_uid: u32,
    },
    /// An object is not a regular shared-memory file (a directory, a device, a FIFO).
    NotAFile,
}

/// Every way a setup call can fail, and what `?` makes of a failed publish or receive
/// (the hot path itself returns the small [`PublishError`] and
/// [`ReceiveError`]).
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-error-{}", std::process::id());
/// use std::time::Duration;
/// let channel = salias::FifoMpsc::<Tick>::create(&Config::new(&name).capacity(4096))?;
/// let mut publisher = channel.publisher()?;
/// // A publish returns the small `PublishError`; `?` makes it an `Error`.
/// while publisher.offer(&Tick { seq: 0 }) != Err(salias::PublishError::Backpressured) {}
/// let full: salias::Error = publisher.offer(&Tick { seq: 0 }).unwrap_err().into();
/// assert_eq!(full, salias::Error::Publish(salias::PublishError::Backpressured));
/// let err = salias::FifoMpsc::<Tick>::connect("no-such-channel").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "no channel named \"no-such-channel\" exists; create it first with `create`, or check the name"
/// );
/// # let _ = Duration::ZERO;
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A message type described at run time ([`MessageType::new`](crate::message::MessageType::new))
    /// has a layout no channel can carry.
    InvalidMessageType {
        /// The type's name as given.
        name: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A channel name is not valid.
    InvalidName {
        /// The name as given (lossy if it was not UTF-8 printable).
        name: String,
        /// What is wrong with it.
        problem: NameProblem,
    },
    /// A configuration field holds a value salias cannot use.
    InvalidConfig {
        /// The `Config` field.
        field: &'static str,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// No channel with this name exists.
    NotFound {
        /// The channel name.
        name: String,
    },
    /// A channel with this name already exists and is in use or kept.
    AlreadyExists {
        /// The channel name.
        name: String,
        /// The owning process, if one is alive.
        owner_pid: Option<u32>,
    },
    /// The channel's owner died without removing it.
    Stale {
        /// The channel name.
        name: String,
        /// The dead owner's process id.
        owner_pid: u32,
    },
    /// The channel carries a different message type than the one asked for.
    TypeMismatch {
        /// The channel name.
        name: String,
        /// The type the channel was created with.
        channel_type: String,
        /// The type this process asked for.
        requested_type: String,
    },
    /// The channel is of a different mode or topology than the one asked for.
    KindMismatch {
        /// The channel name.
        name: String,
        /// The kind the channel was created as, e.g. `FifoMpsc`.
        channel_kind: String,
        /// The kind this process asked for.
        requested_kind: String,
    },
    /// The channel was made by an incompatible salias version.
    VersionMismatch {
        /// The channel name.
        name: String,
        /// The layout version found in shared memory.
        found: u32,
        /// The layout version this build understands.
        supported: u32,
    },
    /// The channel was created by a process whose platform layer wakes sleepers another
    /// way (the Linux layer and the portable one, `--cfg salias_portable`): the two would
    /// miss each other's wake-ups.
    PlatformMismatch {
        /// The channel name.
        name: String,
        /// The layer the channel was created with.
        channel_layer: &'static str,
        /// This process's layer.
        this_layer: &'static str,
    },
    /// A shared-memory object with the channel's name exists but is not a salias channel.
    NotAChannel {
        /// The channel name.
        name: String,
        /// What did not match.
        reason: String,
    },
    /// The channel's owner has not finished creating it.
    Initializing {
        /// The channel name.
        name: String,
    },
    /// Shared memory holds a value that breaks the protocol (a crashed, buggy or hostile peer).
    Corrupt {
        /// The channel name.
        name: String,
        /// What was found and where.
        what: String,
    },
    /// All slots of one kind are taken.
    NoFreeSlot {
        /// The channel name.
        name: String,
        /// Which kind of slot.
        role: Role,
        /// How many slots the channel has.
        slots: u32,
    },
    /// A specific slot was asked for, but another live handle holds it.
    SlotInUse {
        /// The channel name.
        name: String,
        /// The slot index asked for.
        slot: usize,
        /// The process holding it.
        holder_pid: u32,
    },
    /// A slot index past the channel's slots was asked for.
    SlotOutOfRange {
        /// The channel name.
        name: String,
        /// Whose slots: publisher or subscriber.
        role: Role,
        /// The slot index asked for.
        slot: usize,
        /// How many slots the channel has.
        slots: u32,
    },
    /// A publish failed; `?` turned its [`PublishError`] into this.
    /// For a broken channel, `fault()` on the publisher has the full error.
    Publish(PublishError),
    /// A receive failed; `?` turned its [`ReceiveError`] into this.
    /// For a broken channel, `fault()` on the subscriber has the full error.
    Receive(ReceiveError),
    /// An operating-system call failed.
    Platform {
        /// The call, e.g. `shm_open`.
        call: &'static str,
        /// The object it acted on.
        object: String,
        /// The OS error number, when the OS gave one.
        errno: Option<i32>,
        /// What it means for the caller and what to do, when there is more to say.
        hint: String,
    },
    /// The channel's shared memory does not fit in the filesystem that holds it; nothing
    /// was created.
    NoSpace {
        /// The channel name.
        name: String,
        /// Bytes the channel needs (control block and rings).
        needed: u64,
        /// Bytes the filesystem had free when the reservation failed.
        available: u64,
        /// The filesystem, e.g. `/dev/shm`.
        filesystem: String,
        /// Whether the rings were to be backed by huge pages.
        huge_pages: bool,
    },
    /// The channel's objects belong to a user this process was not told to trust, or grant
    /// more access than the channel was created with.
    Untrusted {
        /// The channel name.
        name: String,
        /// What is wrong.
        problem: TrustProblem,
        /// The user owning the channel's control object.
        owner_uid: u32,
        /// The permission bits of the offending object.
        mode: u32,
        /// The effective user of this process.
        caller_uid: u32,
    },
    /// A handle inherited across `fork()`: its slot belongs to the parent process, so it
    /// refuses to act in the child.
    Inherited {
        /// The channel name.
        name: String,
    },
    /// The feature is not available on this platform.
    Unsupported {
        /// The feature, e.g. `huge pages`.
        feature: &'static str,
        /// The platform, e.g. `macOS`.
        platform: &'static str,
    },
}

impl Error {
    pub(crate) fn config(field: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidConfig {
            field,
            reason: reason.into(),
        }
    }

    pub(crate) fn platform(call: &'static str, object: impl Into<String>, errno: rustix::io::Errno) -> Self {
        Error::Platform {
            call,
            object: object.into(),
            errno: Some(errno.raw_os_error()),
            hint: String::new(),
        }
    }

    /// A platform failure that the OS did not report as an errno.
    #[cfg_attr(any(not(target_os = "linux"), salias_portable), allow(dead_code))]
    pub(crate) fn platform_check(call: &'static str, object: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Platform {
            call,
            object: object.into(),
            errno: None,
            hint: hint.into(),
        }
    }

    pub(crate) fn with_hint(mut self, text: impl Into<String>) -> Self {
        if let Error::Platform { hint, .. } = &mut self {
            *hint = text.into();
        }
        self
    }

    pub(crate) fn corrupt(name: &str, what: impl Into<String>) -> Self {
        Error::Corrupt {
            name: name.to_owned(),
            what: what.into(),
        }
    }
}

/// The variant's name, then the sentence `Display` writes: a `main` returning
/// `Result<(), salias::Error>` prints what went wrong and what to do, not a field dump.
/// Match on the variant for its fields.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let variant = match self {
            Error::InvalidMessageType { .. } => "InvalidMessageType",
            Error::InvalidName { .. } => "InvalidName",
            Error::InvalidConfig { .. } => "InvalidConfig",
            Error::NotFound { .. } => "NotFound",
            Error::AlreadyExists { .. } => "AlreadyExists",
            Error::Stale { .. } => "Stale",
            Error::TypeMismatch { .. } => "TypeMismatch",
            Error::KindMismatch { .. } => "KindMismatch",
            Error::VersionMismatch { .. } => "VersionMismatch",
            Error::PlatformMismatch { .. } => "PlatformMismatch",
            Error::NotAChannel { .. } => "NotAChannel",
            Error::Initializing { .. } => "Initializing",
            Error::Corrupt { .. } => "Corrupt",
            Error::NoFreeSlot { .. } => "NoFreeSlot",
            Error::SlotInUse { .. } => "SlotInUse",
            Error::SlotOutOfRange { .. } => "SlotOutOfRange",
            Error::Platform { .. } => "Platform",
            Error::NoSpace { .. } => "NoSpace",
            Error::Untrusted { .. } => "Untrusted",
            Error::Inherited { .. } => "Inherited",
            Error::Unsupported { .. } => "Unsupported",
            Error::Publish(small) => return write!(f, "Publish({small:?}): {self}"),
            Error::Receive(small) => return write!(f, "Receive({small:?}): {self}"),
        };
        write!(f, "{variant}: {self}")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidName { name, problem } => {
                write!(f, "invalid channel name {name:?}: ")?;
                match problem {
                    NameProblem::Empty => f.write_str("the name is empty; give the channel a name such as \"quotes\""),
                    NameProblem::TooLong { len } => write!(
                        f,
                        "it is {len} bytes long, the limit is {} bytes; choose a shorter name",
                        MAX_NAME_LEN
                    ),
                    NameProblem::BadChar { ch, at } => write!(
                        f,
                        "character {ch:?} at byte {at} is not allowed; use only letters, digits, '.', '_' and '-'"
                    ),
                    NameProblem::BadStart => {
                        f.write_str("it starts with '.' or '-'; start it with a letter, digit or '_'")
                    }
                }
            }
            Error::InvalidConfig { field, reason } => write!(f, "invalid config `{field}`: {reason}"),
            Error::InvalidMessageType { name, reason } => write!(f, "invalid message type {name:?}: {reason}"),
            Error::NotFound { name } => write!(
                f,
                "no channel named {name:?} exists; create it first with `create`, or check the name"
            ),
            Error::AlreadyExists {
                name,
                owner_pid: Some(pid),
            } => write!(
                f,
                "channel {name:?} already exists and is owned by live process {pid}; connect to it instead, or choose another name"
            ),
            Error::AlreadyExists { name, owner_pid: None } => write!(
                f,
                "channel {name:?} already exists (kept by an owner that detached); connect to it, or remove it with `salias::remove`"
            ),
            Error::Stale { name, owner_pid } => write!(
                f,
                "channel {name:?} is stale: its owner (process {owner_pid}) died without removing it; `create` it again or remove it with `salias::remove`"
            ),
            Error::TypeMismatch {
                name,
                channel_type,
                requested_type,
            } => write!(
                f,
                "channel {name:?} carries messages of type {channel_type}, but this process asked for {requested_type}; connect with the channel's type, or use the raw-bytes API explicitly"
            ),
            Error::KindMismatch {
                name,
                channel_kind,
                requested_kind,
            } => write!(
                f,
                "channel {name:?} is a {channel_kind} channel, but this process asked for {requested_kind}; connect with the same mode and topology it was created with"
            ),
            Error::VersionMismatch { name, found, supported } => write!(
                f,
                "channel {name:?} has shared-memory layout version {found}, this build of salias understands version {supported}; use the same salias version in every process"
            ),
            Error::PlatformMismatch {
                name,
                channel_layer,
                this_layer,
            } => write!(
                f,
                "channel {name:?} was created by a process built with {channel_layer}, this process uses {this_layer}; the two miss each other's wake-ups, so build every process of a channel with the same layer"
            ),
            Error::NotAChannel { name, reason } => write!(
                f,
                "the shared-memory object for {name:?} is not a salias channel ({reason}); remove it or choose another name"
            ),
            Error::Initializing { name } => write!(
                f,
                "channel {name:?} is still being created by its owner; retry the connect shortly"
            ),
            Error::Corrupt { name, what } => write!(
                f,
                "channel {name:?} holds data that breaks the salias protocol: {what}; a peer process crashed mid-write, is buggy, or is hostile"
            ),
            Error::NoFreeSlot { name, role, slots } => write!(
                f,
                "channel {name:?} has no free {role} slot (all {slots} are in use); drop an unused {role} or create the channel with more slots ({})",
                match role {
                    Role::Publisher => "`Config::publishers`",
                    Role::Subscriber =>
                        "`Config::subscribers`, on a Fanout channel: an Mpsc channel has one subscriber",
                }
            ),
            Error::SlotInUse { name, slot, holder_pid } => write!(
                f,
                "subscriber slot {slot} of channel {name:?} is held by live process {holder_pid}; pick another slot or let `subscriber()` choose a free one"
            ),
            Error::SlotOutOfRange {
                name,
                role,
                slot,
                slots,
            } => write!(
                f,
                "channel {name:?} has {role} slots 0 to {}, not {slot}; create it with more `{role}s` or pick a lower slot",
                slots.saturating_sub(1)
            ),
            Error::Publish(error) => error.fmt(f),
            Error::Receive(error) => error.fmt(f),
            Error::Platform {
                call,
                object,
                errno,
                hint,
            } => {
                write!(f, "{call} on {object} failed")?;
                if let Some(errno) = errno {
                    write!(f, ": {}", std::io::Error::from_raw_os_error(*errno))?;
                }
                if !hint.is_empty() {
                    write!(f, "; {hint}")?;
                }
                Ok(())
            }
            Error::NoSpace {
                name,
                needed,
                available,
                filesystem,
                huge_pages,
            } => {
                write!(
                    f,
                    "channel {name:?} needs {needed} bytes of shared memory, but {filesystem} has only {available} bytes free, so nothing was created; "
                )?;
                if *huge_pages {
                    f.write_str("reserve more huge pages (`/proc/sys/vm/nr_hugepages`), or create it with a smaller `capacity` or fewer `publishers`")
                } else {
                    write!(
                        f,
                        "create it with a smaller `capacity` or fewer `publishers` (the rings take capacity × publishers bytes), free space there, or in a container give it a larger /dev/shm (`docker run --shm-size={}m` or more)",
                        needed.div_ceil(1 << 20) + 64
                    )
                }
            }
            Error::Untrusted {
                name,
                problem,
                owner_uid,
                mode,
                caller_uid,
            } => match problem {
                TrustProblem::Owner => write!(
                    f,
                    "channel {name:?} belongs to user {owner_uid} (mode {mode:#o}), not to this process's user {caller_uid}: its messages would come from and go to that user; if you trust them, connect with `Channel::connect_with(name, &Trust::uid({owner_uid}))`"
                ),
                TrustProblem::WiderMode { recorded } => write!(
                    f,
                    "channel {name:?}'s shared memory has mode {mode:#o}, wider than the {recorded:#o} it was created with, so someone changed its permissions; recreate it, or accept it with `Trust::allow_wider_mode`"
                ),
                TrustProblem::MixedOwners { ring_uid } => write!(
                    f,
                    "channel {name:?}'s control block belongs to user {owner_uid} but its rings to user {ring_uid}: someone replaced one of its objects; remove the channel and create it again"
                ),
                TrustProblem::NotAFile => write!(
                    f,
                    "the shared-memory object of channel {name:?} is not a regular file (mode {mode:#o}); remove whatever is at that name and create the channel again"
                ),
            },
            Error::Inherited { name } => write!(
                f,
                "this handle on channel {name:?} was inherited across fork(): its slot belongs to the parent process; in the child, connect to the channel again"
            ),
            Error::Unsupported { feature, platform } => {
                write!(
                    f,
                    "{feature} are not supported on {platform}; leave that setting at its default"
                )
            }
        }
    }
}

impl std::error::Error for Error {}

impl From<PublishError> for Error {
    fn from(error: PublishError) -> Self {
        Error::Publish(error)
    }
}

impl From<ReceiveError> for Error {
    fn from(error: ReceiveError) -> Self {
        Error::Receive(error)
    }
}

/// Shorthand for `Result<T, salias::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
