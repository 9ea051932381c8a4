//! The objects themselves, at the bottom of the region layer: where a channel's control
//! and ring objects live, opening them without following symlinks, mapping the rings,
//! and unlinking exactly the objects meant, never a newer channel's under the same name.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::config::validate_name;
use crate::error::{Error, Result};
use crate::platform::{self, Health, MagicRing, ObjectFacts, ObjectId, ObjectNames, RingOptions};
use crate::wire::layout::{ChannelInfo, MAGIC};
use rustix::io::Errno;

/// Where the ring object lives, so the owner (or `remove`) can unlink it.
pub(super) enum RingStore {
    Shm(String),
    HugeFile(PathBuf),
}

/// The objects behind one process's view of a channel.
pub(super) struct Objects {
    pub names: ObjectNames,
    pub ring_store: RingStore,
    /// The objects this view mapped, so the owner unlinks exactly those.
    pub control_id: ObjectId,
    pub ring_id: ObjectId,
    /// Kept open to notice a truncation that no access of ours has run into yet.
    pub control_fd: OwnedFd,
    pub ring_fd: OwnedFd,
}

impl Objects {
    /// Unlinks both objects, unless the names lead to others by now.
    pub(super) fn unlink(&self) {
        unlink_objects(&self.names, self.control_id, &self.ring_store, Some(self.ring_id));
    }
}

/// Unlinks the control object if the name still names object `control`, and the rings if
/// they are object `rings` (when known). Never anything created under the name since.
pub(super) fn unlink_objects(names: &ObjectNames, control: ObjectId, ring_store: &RingStore, rings: Option<ObjectId>) {
    platform::shm_unlink_if(&names.control, control);
    if let Some(rings) = rings {
        unlink_rings_if(ring_store, rings);
    }
}

pub(super) fn shm_error(call: &'static str, name: &str, errno: Errno) -> Error {
    let err = Error::platform(call, format!("the shared memory of channel {name:?}"), errno);
    if errno == Errno::ACCESS {
        err.with_hint("the channel belongs to another user; ask its owner to create it with wider `permissions`, or run as that user")
    } else {
        err
    }
}

pub(super) fn symlink_at_name(name: &str) -> Error {
    Error::NotAChannel {
        name: name.to_owned(),
        reason: "a symbolic link stands at its name, which salias never follows".into(),
    }
}

/// The ring object a control block says is its own; `None` if it recorded none.
pub(super) fn recorded_rings(info: &ChannelInfo) -> Option<ObjectId> {
    (info.magic == MAGIC && info.ring_inode != 0).then_some(ObjectId {
        device: info.ring_device,
        inode: info.ring_inode,
    })
}

pub(super) fn hugetlbfs_ring_path(dir: &Path, names: &ObjectNames) -> PathBuf {
    dir.join(&names.ring_file)
}

pub(super) fn unlink_rings(ring_store: &RingStore) {
    match ring_store {
        RingStore::Shm(os_name) => {
            let _ = platform::shm_unlink(os_name);
        }
        RingStore::HugeFile(path) => {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Unlinks the rings only if the name still names object `id`.
pub(super) fn unlink_rings_if(ring_store: &RingStore, id: ObjectId) {
    match ring_store {
        RingStore::Shm(os_name) => platform::shm_unlink_if(os_name, id),
        RingStore::HugeFile(path) => {
            if open_ring_file(path).is_ok_and(|fd| platform::object_id(fd.as_fd()) == Ok(id)) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

pub(super) fn open_ring_file(path: &Path) -> std::result::Result<OwnedFd, Errno> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(path, OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
}

pub(super) fn create_file_exclusive(path: &Path, permissions: u32) -> std::result::Result<OwnedFd, Errno> {
    use rustix::fs::{Mode, OFlags};
    let mode = Mode::from_bits_truncate(permissions as _);
    let fd = rustix::fs::open(
        path,
        OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        mode,
    )?;
    rustix::fs::fchmod(&fd, mode)?;
    Ok(fd)
}

pub(super) fn map_rings(
    fd: &OwnedFd,
    publishers: u32,
    capacity: usize,
    options: &RingOptions,
    health: &Health,
    name: &str,
) -> Result<Vec<MagicRing>> {
    let object = format!("the rings of channel {name:?}");
    let rings = (0..publishers as usize)
        .map(|p| MagicRing::map(fd.as_fd(), (p * capacity) as u64, capacity, options, health, &object))
        .collect::<Result<Vec<_>>>()?;
    // Faulting the pages in may have found the object shrunk.
    health.check(name)?;
    Ok(rings)
}

/// Opens an existing channel's control object by name, with what `fstat` says of it.
pub(super) fn open_control(name: &str) -> Result<(ObjectNames, OwnedFd, ObjectFacts)> {
    validate_name(name)?;
    let names = ObjectNames::of(name);
    let fd = match platform::shm_open(&names.control) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Err(Error::NotFound { name: name.to_owned() }),
        Err(Errno::LOOP) => return Err(symlink_at_name(name)),
        Err(e) => return Err(shm_error("shm_open", name, e)),
    };
    let facts = platform::object_facts(fd.as_fd()).map_err(|e| shm_error("fstat", name, e))?;
    Ok((names, fd, facts))
}

/// What `fstat` says of `name`'s control object.
pub(crate) fn control_facts(name: &str) -> Result<ObjectFacts> {
    open_control(name).map(|(_, _, facts)| facts)
}
