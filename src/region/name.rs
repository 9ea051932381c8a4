//! Whether a mapped channel's name still leads to it ([`NameState`]).

use super::Shared;
use super::object::open_control;
use crate::error::{Error, Result};

/// Whether a handle's channel name still leads to the handle's own channel
/// (`name_state` on [`Channel`](crate::Channel), [`Publisher`](crate::Publisher),
/// [`Subscriber`](crate::Subscriber) and [`LossySubscriber`](crate::LossySubscriber)).
///
/// A removed channel keeps working for the processes that have it mapped, so a handle
/// cannot tell from its own traffic that newcomers now find nothing, or a new channel, at
/// its name; this says so. It opens the name and compares the object's identity (device
/// and inode) with the one this process mapped: a few system calls, for cold paths.
///
/// ```
/// # use salias::{Config, SaliasMessage};
/// # use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// # #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
/// # #[repr(C)]
/// # struct Tick { seq: u64 }
/// # let name = format!("doc-name-state-{}", std::process::id());
/// use salias::status::NameState;
/// let old = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// let subscriber = old.subscriber()?;
/// assert_eq!(subscriber.name_state()?, NameState::Current);
/// salias::remove(&name)?;
/// assert_eq!(subscriber.name_state()?, NameState::Removed);
/// let new = salias::FifoMpsc::<Tick>::create(&Config::new(&name))?;
/// assert_eq!(subscriber.name_state()?, NameState::Replaced); // connect again to reach `new`
/// # drop((old, new));
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NameState {
    /// The name leads to this handle's channel.
    Current,
    /// Nothing is at the name: the channel was removed (by its owner's drop,
    /// [`remove`](crate::remove) or `remove_stale`). This handle still works; nobody new
    /// can connect to it.
    Removed,
    /// The name leads to another object: a channel created under the name since this one
    /// was removed (or something else planted there). Connect again to reach it.
    Replaced,
}

impl std::fmt::Display for NameState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NameState::Current => "the name leads to this channel",
            NameState::Removed => "the channel was removed: nothing is at its name",
            NameState::Replaced => "the name now leads to another channel, created since this one was removed",
        })
    }
}

impl Shared {
    /// Whether the channel's name still leads to the control object this view mapped.
    pub(crate) fn name_state(&self) -> Result<NameState> {
        match open_control(&self.name) {
            Ok((_, _, facts)) if facts.id == self.objects.control_id => Ok(NameState::Current),
            Ok(_) | Err(Error::NotAChannel { .. }) => Ok(NameState::Replaced),
            Err(Error::NotFound { .. }) => Ok(NameState::Removed),
            Err(error) => Err(error),
        }
    }
}
