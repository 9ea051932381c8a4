//! Making a channel: claiming the control object's name (recovering a stale channel under
//! it), reserving and filling in both objects, and publishing the control block as READY.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::Ordering;

use super::geometry::{Geometry, page_size};
use super::header::{Existing, classify, map_control};
use super::object::{
    Objects, RingStore, create_file_exclusive, hugetlbfs_ring_path, map_rings, shm_error, symlink_at_name,
    unlink_objects, unlink_rings,
};
use super::remove::{Ownership, Recovered, remove_stale_objects};
use super::{Kind, Shared};
use std::ptr::NonNull;

use crate::config::{ChannelSettings, Config, MAX_NAME_LEN};
use crate::error::{Error, Result};
use crate::kind::{Fanout, Topology};
use crate::platform::{
    self, ControlMap, Health, Identity, MagicRing, ObjectId, ObjectNames, ReserveError, RingOptions,
};
use crate::wire::control::{ControlBlock, HeaderView};
use crate::wire::fields;
use crate::wire::layout::{
    CURSOR_IDLE, ChannelInfo, LAYOUT_VERSION, MAGIC, MAX_DIR_LEN, MAX_FIELD_TABLE_LEN, MAX_TYPE_NAME_LEN, STATE_READY,
    TypeRecord,
};
use rustix::io::Errno;

pub(super) fn copy_into<const N: usize>(bytes: &[u8]) -> ([u8; N], u32) {
    let mut out = [0u8; N];
    let len = bytes.len().min(N);
    out[..len].copy_from_slice(&bytes[..len]);
    (out, len as u32)
}

/// What `create` checks of `config` before it touches shared memory.
#[cfg(salias_testing)]
pub(crate) fn validate<C: ChannelSettings>(config: &Config<C>, kind: &Kind) -> Result<()> {
    Geometry::of_config(config, kind)?;
    match config.numa_node {
        Some(node) => platform::check_numa_node(node),
        None => Ok(()),
    }
}

/// Makes a new channel named in `config`, recovering a stale one of the same name.
pub(crate) fn create<C: ChannelSettings>(config: &Config<C>, kind: Kind) -> Result<(Shared, Ownership)> {
    let geometry = Geometry::of_config(config, &kind)?;
    if let Some(node) = config.numa_node {
        platform::check_numa_node(node)?;
    }
    let huge_dir = match config.huge_pages.size() {
        Some(size) => {
            let dir = config.hugetlbfs_path();
            if dir.as_os_str().len() > MAX_DIR_LEN {
                return Err(Error::config(
                    "hugetlbfs_dir",
                    format!("the path is longer than {MAX_DIR_LEN} bytes; mount hugetlbfs at a shorter path"),
                ));
            }
            platform::check_hugetlbfs(&dir, size)?;
            Some(dir)
        }
        None => None,
    };

    let name = config.name.as_str();
    let names = ObjectNames::of(name);
    let health = Health::new(name)?;
    let mut recovered = None;
    let control_fd = create_control(&names, config, &mut recovered)?;
    let control_id = match platform::object_id(control_fd.as_fd()) {
        Ok(id) => id,
        Err(e) => {
            // Ours, just made with O_EXCL: nothing else can be at the name yet.
            let _ = platform::shm_unlink(&names.control);
            return Err(shm_error("fstat", name, e));
        }
    };
    let ring_store = match &huge_dir {
        Some(dir) => RingStore::HugeFile(hugetlbfs_ring_path(dir, &names)),
        None => RingStore::Shm(names.rings.clone()),
    };
    // From here on, a failure must not leave names behind: the control object's, and the
    // rings' once they are known to be ours.
    let (control, ring_fd, ring_id) = init_objects(config, &geometry, &control_fd, control_id, &ring_store, &health)
        .inspect_err(|_| unlink_objects(&names, control_id, &ring_store, None))?;
    let objects = Objects {
        names,
        ring_store,
        control_id,
        ring_id,
        control_fd,
        ring_fd,
    };
    let rings = build(config, &geometry, &kind, &control, &objects, &health).inspect_err(|_| objects.unlink())?;
    let shared = Shared::new(name, geometry, &kind, control, rings, objects, health);
    // A peer may have truncated the objects while they were being set up.
    if let Err(e) = shared.check_health() {
        shared.objects.unlink();
        return Err(e);
    }
    // SYNC POINT header-ready (Release side): everything above is visible first.
    shared.header_state().store(STATE_READY, Ordering::Release);
    Ok((
        shared,
        Ownership {
            keep: config.keep,
            recovered,
        },
    ))
}

/// Claims the control object's name; a stale channel found there is removed first and
/// noted in `recovered`.
pub(super) fn create_control<C: ChannelSettings>(
    names: &ObjectNames,
    config: &Config<C>,
    recovered: &mut Option<Recovered>,
) -> Result<OwnedFd> {
    let name = config.name.as_str();
    // A stale channel is removed and the create retried; bounded in case another process
    // keeps re-creating the name at the same moment.
    for _ in 0..4 {
        match platform::shm_create(&names.control, config.permissions) {
            Ok(fd) => return Ok(fd),
            Err(Errno::EXIST) => {}
            Err(e) => return Err(shm_error("shm_open (create)", name, e)),
        }
        let fd = match platform::shm_open(&names.control) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => continue,
            Err(Errno::LOOP) => return Err(symlink_at_name(name)),
            Err(e) => return Err(shm_error("shm_open", name, e)),
        };
        match classify(&fd, name)? {
            (Existing::Live(pid), _) => {
                return Err(Error::AlreadyExists {
                    name: name.to_owned(),
                    owner_pid: Some(pid),
                });
            }
            (Existing::Kept, _) => {
                return Err(Error::AlreadyExists {
                    name: name.to_owned(),
                    owner_pid: None,
                });
            }
            (Existing::Foreign(reason), _) => {
                return Err(Error::NotAChannel {
                    name: name.to_owned(),
                    reason,
                });
            }
            (stale @ (Existing::Stale(_) | Existing::Abandoned(_)), rings) => {
                // The control name only: whoever creates it next owns the ring name too
                // and replaces any leftover rings there (`create_ring_object`).
                remove_stale_objects(name, names, &fd, rings);
                *recovered = Some(Recovered {
                    owner_pid: match stale {
                        Existing::Stale(pid) => Some(pid),
                        Existing::Abandoned(pid) => pid,
                        _ => None,
                    },
                    finished: matches!(stale, Existing::Stale(_)),
                });
            }
        }
    }
    Err(Error::AlreadyExists {
        name: name.to_owned(),
        owner_pid: None,
    })
}

/// Sizes, reserves and maps the new control object and records this process as its
/// owner (first, before anything slow: a creator that shows no live owner for the init
/// wait is taken for dead and its names removed), then makes the ring object.
fn init_objects(
    config: &Config<impl ChannelSettings>,
    geometry: &Geometry,
    control_fd: &OwnedFd,
    control_id: ObjectId,
    ring_store: &RingStore,
    health: &Health,
) -> Result<(ControlMap, OwnedFd, ObjectId)> {
    let name = config.name.as_str();
    let len = geometry.layout().len as u64;
    rustix::fs::ftruncate(control_fd, len).map_err(|e| shm_error("ftruncate", name, e))?;
    platform::reserve(control_fd.as_fd(), len, platform::shm_filesystem()).map_err(|e| match e {
        ReserveError::NoSpace { available, filesystem } => {
            no_space(config, geometry.shm_needed(), available, filesystem)
        }
        ReserveError::Other(e) => shm_error("fallocate", name, e),
    })?;
    let control = map_control(control_fd, len as usize, name, health)?;
    // Until the state turns READY the block is written through raw pointers only: another
    // process may already have mapped it (to inspect it), so no `&mut` may cover it.
    header_of(&control)
        .owner()
        .token
        .store(Identity::current().token(), Ordering::Release);
    // Recorded before anything else can fail, so a stale channel's rings can be told apart
    // from those of a channel created under the name later.
    let ring_fd = create_ring_object(ring_store, config, control_id)?;
    let ring_id = platform::object_id(ring_fd.as_fd()).map_err(|e| shm_error("fstat (rings)", name, e))?;
    Ok((control, ring_fd, ring_id))
}

/// The error for shared memory that does not fit where it must be reserved.
fn no_space(config: &Config<impl ChannelSettings>, needed: u64, available: u64, filesystem: String) -> Error {
    Error::NoSpace {
        name: config.name.clone(),
        needed,
        available,
        filesystem,
        huge_pages: config.huge_pages.size().is_some(),
    }
}

/// Writes the control block of the channel `objects` make up, then sizes, reserves and
/// maps its rings.
fn build(
    config: &Config<impl ChannelSettings>,
    geometry: &Geometry,
    kind: &Kind,
    control: &ControlMap,
    objects: &Objects,
    health: &Health,
) -> Result<Vec<MagicRing>> {
    let name = config.name.as_str();
    let layout = geometry.layout();
    let ring_object_len = geometry.ring_object_len();
    // Until READY, written through the header view's raw writes only (`init_objects`).
    let info = record(config, geometry, kind, &objects.ring_store, objects.ring_id);
    // SAFETY: this process created the channel and has not stored READY yet. A peer
    // inspecting the block meanwhile may copy a torn info; every copy is validated, and
    // `connect` uses only one read after the READY store.
    unsafe { header_of(control).write_info(info) };

    if kind.topology == Fanout::ID {
        let base = NonNull::new(control.as_ptr()).expect("a mapping is never at address 0");
        // SAFETY: the fresh mapping was sized to this geometry's layout, and the block is
        // dropped before `control`, which the caller holds.
        let block = unsafe { ControlBlock::new(base, layout, geometry.publishers, geometry.subscribers) };
        // No subscriber yet: publishers are held back by none.
        for subscriber in 0..geometry.subscribers as usize {
            for publisher in 0..geometry.publishers as usize {
                block
                    .cursor(subscriber, publisher)
                    .store(CURSOR_IDLE, Ordering::Relaxed);
            }
        }
    }

    let huge_pages = geometry.huge_pages.size().is_some();
    let ring_fd = &objects.ring_fd;
    rustix::fs::ftruncate(ring_fd, ring_object_len).map_err(|e| {
        let err = shm_error("ftruncate (rings)", name, e);
        if huge_pages {
            err.with_hint("the hugetlbfs mount has too few free huge pages for the rings")
        } else {
            err
        }
    })?;
    let ring_filesystem = match &objects.ring_store {
        RingStore::HugeFile(path) => path.parent().unwrap_or(path).display().to_string(),
        RingStore::Shm(_) => platform::shm_filesystem().to_owned(),
    };
    // Without this, a ring that does not fit maps fine and kills its first writer with
    // SIGBUS: tmpfs and hugetlbfs allocate on first touch, and MAP_POPULATE reports nothing.
    let reserve_rings = || {
        // Counted before: a reservation that fails holds the pages it got until the object
        // is removed, so the pool reads empty afterwards whatever it had.
        let free_huge_pages = geometry.huge_pages.size().and_then(platform::free_huge_pages);
        platform::reserve(ring_fd.as_fd(), ring_object_len, &ring_filesystem).map_err(|e| match e {
            ReserveError::NoSpace { available, filesystem } => match geometry.huge_pages.size() {
                Some(page) => no_space(
                    config,
                    ring_object_len,
                    free_huge_pages.map_or(available, |pages| pages * page as u64),
                    format!("the {}-byte huge page pool (mounted at {filesystem})", page),
                ),
                None => no_space(config, geometry.shm_needed(), available, filesystem),
            },
            ReserveError::Other(e) => shm_error("fallocate (rings)", name, e),
        })
    };
    // Pages are allocated under the memory policy in force when they are reserved: with a
    // NUMA node, the rings are mapped and bound first, and reserved and faulted in after.
    let numa = config.numa_node.is_some();
    if !numa {
        reserve_rings()?;
    }
    let options = RingOptions {
        huge_page: geometry.huge_pages.size(),
        numa_node: config.numa_node,
        populate: !numa,
    };
    let rings = map_rings(ring_fd, geometry.publishers, geometry.capacity, &options, health, name)?;
    if numa {
        reserve_rings()?;
        let page = page_size(geometry.huge_pages);
        for ring in &rings {
            // SAFETY: each ring's first view is a live mapping of `capacity` bytes, now backed.
            unsafe { platform::touch_pages(ring.base(), geometry.capacity, page) };
        }
    }
    Ok(rings)
}

/// The control block's info for the channel `config` makes with `geometry` and `kind`,
/// its rings in `ring_store` as object `ring_id`.
pub(super) fn record(
    config: &Config<impl ChannelSettings>,
    geometry: &Geometry,
    kind: &Kind,
    ring_store: &RingStore,
    ring_id: ObjectId,
) -> ChannelInfo {
    let name = config.name.as_str();
    let fp = kind.fingerprint;
    let (type_name, type_name_len) = copy_into::<MAX_TYPE_NAME_LEN>(kind.type_name.as_bytes());
    let (field_table, field_table_len) = fields::encode(kind.fields.each()).unwrap_or(([0; MAX_FIELD_TABLE_LEN], 0));
    let (name_bytes, name_len) = copy_into::<MAX_NAME_LEN>(name.as_bytes());
    let dir = match ring_store {
        RingStore::HugeFile(path) => path.parent().map(|p| p.as_os_str().as_encoded_bytes().to_vec()),
        RingStore::Shm(_) => None,
    }
    .unwrap_or_default();
    let (dir_bytes, dir_len) = copy_into::<MAX_DIR_LEN>(&dir);
    ChannelInfo {
        magic: MAGIC,
        layout_version: LAYOUT_VERSION,
        mode: kind.mode,
        topology: kind.topology,
        publishers: geometry.publishers,
        subscribers: geometry.subscribers,
        huge_pages: geometry.huge_pages.to_raw(),
        frame_align: geometry.frame_align as u32,
        max_message_len: geometry.max_message_len as u32,
        name_len,
        hugetlbfs_dir_len: dir_len,
        capacity: geometry.capacity as u64,
        publication_window: geometry.window as u64,
        control_len: geometry.layout().len as u64,
        ring_object_len: geometry.ring_object_len(),
        name: name_bytes,
        message_type: TypeRecord {
            name: type_name,
            name_len: type_name_len,
            size: fp.size,
            align: fp.align,
            schema_version: fp.schema_version,
            layout_hash: fp.layout_hash,
            field_table_len,
            _reserved: 0,
            field_table,
        },
        hugetlbfs_dir: dir_bytes,
        permissions: config.permissions,
        wake_protocol: platform::WAKE_PROTOCOL,
        ring_device: ring_id.device,
        ring_inode: ring_id.inode,
        tether_timeout_ns: geometry.tether_timeout_ns,
    }
}

pub(super) fn create_ring_object<C: ChannelSettings>(
    ring_store: &RingStore,
    config: &Config<C>,
    control_id: ObjectId,
) -> Result<OwnedFd> {
    let name = config.name.as_str();
    // While we own the control name, any ring object under this name is a stale leftover;
    // once the name is someone else's (we stalled and were taken for dead), so are the rings.
    let control_name = ObjectNames::of(name).control;
    let still_ours =
        || platform::shm_open(&control_name).is_ok_and(|fd| platform::object_id(fd.as_fd()) == Ok(control_id));
    for attempt in 0..2 {
        let created = match ring_store {
            RingStore::Shm(os_name) => platform::shm_create(os_name, config.permissions),
            RingStore::HugeFile(path) => create_file_exclusive(path, config.permissions),
        };
        match created {
            Ok(fd) => return Ok(fd),
            Err(Errno::EXIST) if attempt == 0 && still_ours() => unlink_rings(ring_store),
            Err(Errno::EXIST) if attempt == 0 => {
                return Err(Error::AlreadyExists {
                    name: name.to_owned(),
                    owner_pid: None,
                });
            }
            Err(e) => return Err(shm_error("open (create rings)", name, e)),
        }
    }
    unreachable!("the second attempt returns")
}

/// The header of a fresh control mapping, for its creator.
fn header_of(control: &ControlMap) -> HeaderView<'_> {
    let base = NonNull::new(control.as_ptr()).expect("a mapping is never at address 0");
    // SAFETY: the mapping was sized to the channel's layout, which begins with a `Header`,
    // page aligned, and outlives the borrow of `control`.
    unsafe { HeaderView::new(base) }
}
