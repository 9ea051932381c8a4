//! Removing a channel's names: the owner's drop (or detach, for a kept channel),
//! `remove`, and `remove_stale`, each unlinking only the objects it means.

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use super::Shared;
use super::header::{Existing, classify, read_header};
use super::object::{RingStore, hugetlbfs_ring_path, open_control, unlink_objects, unlink_rings};
use crate::config::HugePages;
use crate::error::{Error, Result};
use crate::platform::{self, ObjectId, ObjectNames};
use crate::wire::layout::MAGIC;

/// The owner's handle on the names: removes them on drop unless the channel is kept.
pub(crate) struct Ownership {
    pub(super) keep: bool,
    /// The stale channel `create` removed from the name first, if it found one.
    pub(crate) recovered: Option<Recovered>,
}

/// A stale channel that [`Channel::create`](crate::Channel::create) removed from its name before creating anew.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Recovered {
    /// The process that had created it and died; `None` if it died before recording itself.
    pub owner_pid: Option<u32>,
    /// Whether it had finished creating it (else it died midway).
    pub finished: bool,
}

impl Ownership {
    pub(crate) fn release(&self, shared: &Shared) {
        if !shared.is_ours() {
            // A fork() child: the channel is its parent's to keep or remove.
            return;
        }
        if self.keep {
            // Detach: the channel lives on without an owner, so it is not stale.
            crate::protocol::release_slot(&shared.owner().token);
        } else {
            shared.objects.unlink();
        }
    }
}

/// Removes the channel's names whatever its state. Processes that have it mapped keep
/// working; new `connect`s fail with `NotFound`.
pub(crate) fn remove(name: &str) -> Result<()> {
    let (names, fd, _) = open_control(name)?;
    remove_by_names(name, &names, &fd);
    Ok(())
}

/// Removes the channel only if its owner died without removing it (or died while creating
/// it). Returns whether it was removed.
pub(crate) fn remove_stale(name: &str) -> Result<bool> {
    let (names, fd, _) = open_control(name)?;
    match classify(&fd, name)? {
        (Existing::Stale(_) | Existing::Abandoned(_), rings) => {
            remove_stale_objects(name, &names, &fd, rings);
            Ok(true)
        }
        (Existing::Live(_) | Existing::Kept, _) => Ok(false),
        (Existing::Foreign(reason), _) => Err(Error::NotAChannel {
            name: name.to_owned(),
            reason,
        }),
    }
}

/// Unlinks a stale channel's objects, the control object open as `fd` and the rings it
/// recorded, and only those: a channel created under the name since keeps its own.
pub(super) fn remove_stale_objects(name: &str, names: &ObjectNames, fd: &OwnedFd, rings: Option<ObjectId>) {
    let Ok(control) = platform::object_id(fd.as_fd()) else {
        return;
    };
    let store = ring_store_of(name, names, fd);
    unlink_objects(names, control, &store, rings);
}

pub(super) fn remove_by_names(name: &str, names: &ObjectNames, fd: &OwnedFd) {
    let store = ring_store_of(name, names, fd);
    let _ = platform::shm_unlink(&names.control);
    unlink_rings(&store);
}

/// Where the rings of the channel whose control object is open as `fd` live: the huge page
/// ring file's directory is recorded in its control block.
pub(super) fn ring_store_of(name: &str, names: &ObjectNames, fd: &OwnedFd) -> RingStore {
    if let Ok(Some(copy)) = read_header(fd, name) {
        let info = &copy.info;
        if info.magic == MAGIC
            && info.huge_pages != 0
            && let Some(dir) = info.hugetlbfs_dir.get(..info.hugetlbfs_dir_len as usize)
            && let Ok(dir) = std::str::from_utf8(dir)
            && let Some(size) = HugePages::from_raw(info.huge_pages).and_then(HugePages::size)
            && platform::check_hugetlbfs(Path::new(dir), size).is_ok()
        {
            return RingStore::HugeFile(hugetlbfs_ring_path(Path::new(dir), names));
        }
    }
    RingStore::Shm(names.rings.clone())
}
