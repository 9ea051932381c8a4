//! A channel's shared memory as this process holds it: the validated geometry, the
//! mappings and the handles' view of the control block ([`Shared`], [`Control`]).
//!
//! The layer's files, from the bottom up (each uses only those above it in this list):
//!
//! - `object`: the objects themselves (names, opening, mapping rings, unlinking);
//! - `header`: inspecting what is at a name without trusting it (the init wait);
//! - `geometry`: a channel's slots, rings and limits, from a `Config` or a control
//!   block, and the rules they meet;
//! - `validate`: checking a copied control block's identity, kind and geometry;
//! - `remove`, `create`, `open`: removing, making and opening channels;
//! - `name`: whether a mapped channel's name still leads to it;
//! - `slots`: slots changing hands on a mapped channel.

mod create;
mod geometry;
mod header;
mod name;
mod object;
mod open;
mod remove;
mod slots;
mod validate;

pub(crate) use create::create;
#[cfg(salias_testing)]
pub(crate) use create::validate;
pub(crate) use header::channel_name_of_object;
#[cfg(salias_testing)]
pub(crate) use header::set_init_wait;
pub use name::NameState;
pub(crate) use object::control_facts;
pub(crate) use open::{connect, open_control_view};
pub use remove::Recovered;
pub(crate) use remove::{Ownership, remove, remove_stale};

use std::os::fd::{AsFd, OwnedFd};

use geometry::Geometry;
use object::Objects;

use crate::error::{Error, Result};
use crate::kind::{mode_name, topology_name};
use crate::message::Fingerprint;
use crate::platform::{self, ControlMap, Health, MagicRing};
use crate::wire::control::ControlBlock;

/// What a handle's type says the channel must be; built from the generic parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kind<'t> {
    pub mode: u32,
    pub topology: u32,
    /// `Some(size)` for typed channels.
    pub fixed_len: Option<usize>,
    pub frame_align: usize,
    pub header_len: usize,
    /// The message type's size, alignment, layout hash and version (its `name` unused).
    pub fingerprint: Fingerprint,
    /// The message type's name: a derived type's `Fingerprint::name`, or a described one's.
    pub type_name: &'t str,
    /// The message type's fields, recorded by a creator for tools and other languages.
    pub fields: Fields<'t>,
    /// Accept any message type (explicit raw view of a typed channel).
    pub any_type: bool,
}

/// A message type's fields, as the two ways of naming a type hold them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fields<'t> {
    Derived(&'static [crate::message::derived::FieldLayout]),
    Described(&'t [crate::message::Field]),
}

impl<'t> Fields<'t> {
    /// Each field as (name, type label, offset, size).
    pub(crate) fn each(self) -> impl Iterator<Item = (&'t str, &'t str, usize, usize)> {
        let (derived, described) = match self {
            Fields::Derived(fields) => (fields, &[][..]),
            Fields::Described(fields) => (&[][..], fields),
        };
        let derived = derived.iter().map(|f| (f.name, f.ty, f.offset, f.size));
        derived.chain(
            described
                .iter()
                .map(|f| (f.name.as_str(), f.ty.as_str(), f.offset, f.size)),
        )
    }
}

impl Kind<'_> {
    fn name(&self) -> String {
        format!("{}{}", mode_name(self.mode), topology_name(self.topology))
    }
}

/// One process's view of a channel: its validated geometry and its mappings. Handles share
/// it through an `Arc`; the mappings live until the last handle is gone.
pub(crate) struct Shared {
    pub name: String,
    pub capacity: usize,
    pub window: usize,
    pub max_message_len: usize,
    pub fixed_len: Option<usize>,
    pub frame_align: usize,
    pub header_len: usize,
    /// Fanout: how long a tethered subscriber may hold a publisher back (`None`: forever).
    pub tether_timeout: Option<std::time::Duration>,
    control: Control,
    rings: Vec<MagicRing>,
    objects: Objects,
    /// Process-local state a layer above keeps with this mapping, made at its first use
    /// and dropped with the mapping (the readiness watchers); region never looks inside.
    pub locals: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    /// Declared last: every mapping above is released before the cell is freed.
    health: Health,
}

impl std::ops::Deref for Shared {
    type Target = Control;
    fn deref(&self) -> &Control {
        &self.control
    }
}

impl Shared {
    /// The one way a view is put together, by `create` and `connect` alike: from the
    /// validated geometry, the mapped control block and rings, and the objects behind them.
    fn new(
        name: &str,
        geometry: Geometry,
        kind: &Kind,
        control: ControlMap,
        rings: Vec<MagicRing>,
        objects: Objects,
        health: Health,
    ) -> Shared {
        Shared {
            name: name.to_owned(),
            capacity: geometry.capacity,
            window: geometry.window,
            max_message_len: geometry.max_message_len,
            // A raw view of a typed channel must keep its messages at the type's exact size.
            fixed_len: kind.fixed_len.or(geometry.typed.then_some(geometry.max_message_len)),
            frame_align: geometry.frame_align,
            header_len: geometry.header_len,
            tether_timeout: geometry.tether_timeout(),
            control: Control::new(control, &geometry),
            rings,
            objects,
            locals: Default::default(),
            health,
        }
    }

    /// Fanout: how far past its tail a publisher ever writes (it caps its write limit
    /// there, and publishes each raise as its overwrite frontier). A lossy subscriber takes
    /// every position below `frontier - capacity` as overwritten, so a frontier that ran a
    /// whole window ahead of the tail would count unread frames just behind the tail as
    /// lost. Kept to a quarter window (never below one largest frame, which must fit), a
    /// lossy reader within `capacity - window / 4` bytes of the tail loses nothing, for one
    /// more limit refresh per quarter window; and what lies within `capacity - step` of a
    /// tail is history a joining subscriber can still hold (`protocol::join`).
    pub(crate) fn frontier_step(&self) -> u64 {
        let largest = crate::wire::frame::round_up(self.header_len + self.max_message_len, self.frame_align);
        (self.window / 4).max(largest).min(self.window) as u64
    }

    pub(crate) fn ring(&self, publisher: usize) -> &MagicRing {
        &self.rings[publisher]
    }

    /// This channel's health cell: handles check it on every call.
    pub(crate) fn health(&self) -> &'static std::sync::atomic::AtomicU32 {
        self.health.word()
    }

    /// Fails once another process truncated the channel's objects, or in a `fork()` child.
    pub(crate) fn check_health(&self) -> Result<()> {
        self.health.check(&self.name)
    }

    /// Asks the system whether either object was shrunk below what this view maps, and
    /// poisons the channel if so: a process that never touches the lost pages learns of it
    /// too. Two `fstat` calls; for rate-limited cold paths only.
    pub(crate) fn check_objects(&self) -> Result<()> {
        let short = |fd: &OwnedFd, len: u64| platform::object_len(fd.as_fd()).is_ok_and(|now| now < len);
        if short(&self.objects.control_fd, self.control.len() as u64)
            || short(&self.objects.ring_fd, (self.capacity * self.publishers as usize) as u64)
        {
            self.health.poison();
        }
        self.check_health()
    }

    /// The error for shared memory that breaks the protocol: if the cause is that a peer
    /// truncated the objects (cut pages read as zeros), that is what it says.
    #[cold]
    pub(crate) fn corrupt(&self, what: impl Into<String>) -> Error {
        match self.check_objects() {
            Err(truncated) => truncated,
            Ok(()) => Error::corrupt(&self.name, what),
        }
    }

    /// Whether a peer truncated the channel's objects under this process.
    pub(crate) fn is_truncated(&self) -> bool {
        self.health.state() == platform::TRUNCATED
    }

    /// Whether this process may act on the channel's shared state (it is not a `fork()`
    /// child holding inherited handles).
    pub(crate) fn is_ours(&self) -> bool {
        self.health.state() != platform::INHERITED
    }
}

/// A mapped control object whose geometry has been validated, and the view through which
/// its atomics are reached (`wire::control`).
pub(crate) struct Control {
    /// Declared first: dropped before the mapping it points into.
    block: ControlBlock,
    /// Held, never read: the mapping `block` points into, unmapped on drop.
    _mapping: ControlMap,
}

impl Control {
    fn new(map: ControlMap, geometry: &Geometry) -> Control {
        let base = std::ptr::NonNull::new(map.as_ptr()).expect("a mapping is never at address 0");
        // SAFETY: `map` is a page-aligned mapping checked to hold `geometry`'s layout
        // (create sized it; open validated the geometry against the object's length), and
        // the block is dropped before it (field order).
        let block = unsafe { ControlBlock::new(base, geometry.layout(), geometry.publishers, geometry.subscribers) };
        Control { block, _mapping: map }
    }
}

impl std::ops::Deref for Control {
    type Target = ControlBlock;
    fn deref(&self) -> &ControlBlock {
        &self.block
    }
}
