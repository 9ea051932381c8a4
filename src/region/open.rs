//! Opening an existing channel: its control object once READY, refused before a byte is
//! read if its owner is not trusted; its rings, checked to be the very objects its control
//! block recorded; and the read-only control view the status API uses.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;

use super::geometry::Geometry;
use super::header::{Found, inspect};
use super::object::{
    Objects, RingStore, hugetlbfs_ring_path, map_rings, open_control, open_ring_file, recorded_rings, shm_error,
};
use super::validate::{check_identity, validate_info};
use super::{Control, Kind, Shared};
use crate::error::{Error, Result};
use crate::platform::{self, ControlMap, Health, ObjectFacts, ObjectNames, RingOptions};
use crate::trust::Trust;
use crate::wire::layout::{ChannelInfo, SLOT_FREE};
use rustix::io::Errno;

/// A control object that its owner finished creating.
pub(super) struct Opened {
    names: ObjectNames,
    fd: OwnedFd,
    facts: ObjectFacts,
    map: ControlMap,
    info: Box<ChannelInfo>,
    owner: u64,
}

/// Opens `name`'s control object once its owner has finished creating it (waiting a
/// bounded time if `wait`), refusing it before reading a byte if `trust` does not accept
/// its owner. Its info is still to be validated.
pub(super) fn open_ready(name: &str, wait: bool, trust: &Trust, health: &Health) -> Result<Opened> {
    let (names, fd, facts) = open_control(name)?;
    trust.check(name, &facts, None, None)?;
    match inspect(&fd, name, wait, health)? {
        Found::Ready(map, info, owner) => Ok(Opened {
            names,
            fd,
            facts,
            map,
            info,
            owner,
        }),
        Found::Foreign(reason) => Err(Error::NotAChannel {
            name: name.to_owned(),
            reason,
        }),
        Found::Unready(owner) if owner != SLOT_FREE && !platform::token_alive(owner) => Err(Error::Stale {
            name: name.to_owned(),
            owner_pid: platform::token_pid(owner),
        }),
        Found::Unready(_) => Err(Error::Initializing { name: name.to_owned() }),
    }
}

/// Opens an existing channel and checks that it is what `kind` expects and that `trust`
/// accepts who made it.
pub(crate) fn connect(name: &str, kind: Kind, trust: &Trust) -> Result<Shared> {
    let health = Health::new(name)?;
    let Opened {
        names,
        fd: control_fd,
        facts,
        map: control,
        info,
        owner,
    } = open_ready(name, true, trust, &health)?;
    // The mapped length, from the size `inspect` saw once the owner had made it READY (the
    // size at open time may predate its `ftruncate`).
    let geometry = validate_info(name, &info, kind, control.len() as u64)?;
    if owner != SLOT_FREE && !platform::token_alive(owner) {
        return Err(Error::Stale {
            name: name.to_owned(),
            owner_pid: platform::token_pid(owner),
        });
    }

    let (ring_fd, ring_store, ring_facts) = open_rings(name, &names, &info, &geometry, &facts, trust)?;
    let options = RingOptions {
        huge_page: geometry.huge_pages.size(),
        numa_node: None,
        populate: true,
    };
    let rings = map_rings(
        &ring_fd,
        geometry.publishers,
        geometry.capacity,
        &options,
        &health,
        name,
    )?;
    let objects = Objects {
        names,
        ring_store,
        control_id: facts.id,
        ring_id: ring_facts.id,
        control_fd,
        ring_fd,
    };
    Ok(Shared::new(name, geometry, &kind, control, rings, objects, health))
}

/// Opens the ring object of the channel whose validated info is `info`, and checks it the
/// way `connect` must: trusted owner, the very object the control block recorded, and at
/// least as long as promised.
pub(super) fn open_rings(
    name: &str,
    names: &ObjectNames,
    info: &ChannelInfo,
    geometry: &Geometry,
    control: &ObjectFacts,
    trust: &Trust,
) -> Result<(OwnedFd, RingStore, ObjectFacts)> {
    let (ring_fd, ring_store) = match geometry.huge_pages.size() {
        Some(size) => {
            let dir = PathBuf::from(std::ffi::OsStr::new(
                info.hugetlbfs_dir
                    .get(..info.hugetlbfs_dir_len as usize)
                    .and_then(|dir| std::str::from_utf8(dir).ok())
                    .ok_or_else(|| Error::corrupt(name, "its hugetlbfs directory is not a valid path"))?,
            ));
            // The path comes from shared memory: only ever open our own file name in a real
            // hugetlbfs mount.
            platform::check_hugetlbfs(&dir, size)?;
            let path = hugetlbfs_ring_path(&dir, names);
            let fd = open_ring_file(&path).map_err(|e| shm_error("open (rings)", name, e))?;
            (fd, RingStore::HugeFile(path))
        }
        None => {
            let fd = platform::shm_open(&names.rings).map_err(|e| match e {
                Errno::NOENT => Error::NotAChannel {
                    name: name.to_owned(),
                    reason: "its ring memory is missing".into(),
                },
                Errno::LOOP => Error::NotAChannel {
                    name: name.to_owned(),
                    reason: "a symbolic link stands at its rings' name, which salias never follows".into(),
                },
                e => shm_error("shm_open (rings)", name, e),
            })?;
            (fd, RingStore::Shm(names.rings.clone()))
        }
    };
    let ring_facts = platform::object_facts(ring_fd.as_fd()).map_err(|e| shm_error("fstat (rings)", name, e))?;
    trust.check(name, control, Some(&ring_facts), Some(info.permissions))?;
    if recorded_rings(info) != Some(ring_facts.id) {
        return Err(Error::NotAChannel {
            name: name.to_owned(),
            reason: "the ring object at its name is not the one its control block recorded".into(),
        });
    }
    if ring_facts.len < info.ring_object_len {
        return Err(Error::corrupt(
            name,
            format!(
                "the ring memory is {} bytes, the control block promises {}",
                ring_facts.len, info.ring_object_len
            ),
        ));
    }
    Ok((ring_fd, ring_store, ring_facts))
}

/// A channel's control block mapped for reading its state, with what `connect` would
/// check of it.
pub(crate) struct ControlView {
    pub control: Control,
    pub info: Box<ChannelInfo>,
    pub owner: u64,
    pub facts: ObjectFacts,
    /// Declared last, so the mapping is released first.
    health: Health,
}

impl ControlView {
    /// Fails if the control object was truncated while it was read.
    pub(crate) fn check_health(&self, name: &str) -> Result<()> {
        self.health.check(name)
    }
}

/// Opens a channel's control object alone, whatever its kind and message type, for
/// reading its state (`crate::status`), if `trust` accepts its owner. Its geometry is
/// validated as `connect` would; the returned info is the copy it was validated from.
pub(crate) fn open_control_view(name: &str, trust: &Trust) -> Result<ControlView> {
    let health = Health::new(name)?;
    // No wait: a status is a snapshot, and one of a channel being created says so.
    let Opened {
        facts,
        map,
        info,
        owner,
        ..
    } = open_ready(name, false, trust, &health)?;
    trust.check(name, &facts, None, Some(info.permissions))?;
    check_identity(name, &info)?;
    let geometry = Geometry::of_info(name, &info, map.len() as u64)?;
    // The rings are not mapped, but a channel whose rings are gone is not one to report
    // as fine.
    let names = ObjectNames::of(name);
    open_rings(name, &names, &info, &geometry, &facts, trust)?;
    Ok(ControlView {
        control: Control::new(map, &geometry),
        info,
        owner,
        facts,
        health,
    })
}
