//! Making, finding and mapping a channel's shared memory: the control object and the ring
//! object. Everything read from an existing channel is validated here before any handle
//! can use it.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memmap2::MmapRaw;
use rustix::io::Errno;

use crate::config::{Config, HugePages, MAX_CAPACITY, MAX_NAME_LEN, MAX_PRODUCERS, MAX_SUBSCRIBERS, validate_name};
use crate::error::{Error, Result, Role};
use crate::kind::{Fanout, Fifo, Mode, Mpsc, Ordered, Topology, mode_name, topology_name};
use crate::layout::{
    CURSOR_IDLE, ChannelInfo, ControlLayout, Cursor, FRAME_LEN_OFFSET, HOT_OFFSET, Header, Holder, Hot, LAYOUT_VERSION,
    MAGIC, MAX_DIR_LEN, MAX_POSITION, MAX_TYPE_NAME_LEN, ProducerSlot, SLOT_FREE, STATE_READY, SubscriberSlot,
    TypeRecord,
};
use crate::message::{Fingerprint, round_up};
use crate::platform::{self, Identity, MagicRing, ObjectNames, RingOptions};

/// How often a claim looks again at a slot whose holder word changed under it.
const CLAIM_ATTEMPTS_PER_SLOT: u32 = 8;

/// How long `connect` waits for an owner that is still initialising the channel, in ms.
static INIT_WAIT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(2_000);

/// Shortens the wait for fuzzing, where every forged "initialising" channel would
/// otherwise cost two seconds.
pub(crate) fn set_init_wait(wait: Duration) {
    INIT_WAIT_MS.store(wait.as_millis() as u64, Ordering::Relaxed);
}

/// What a handle's type says the channel must be; built from the generic parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kind {
    pub mode: u32,
    pub topology: u32,
    /// `Some(size)` for typed channels.
    pub fixed_len: Option<usize>,
    pub frame_align: usize,
    pub header_len: usize,
    pub fingerprint: Fingerprint,
    /// Accept any message type (explicit raw view of a typed channel).
    pub any_type: bool,
}

impl Kind {
    pub(crate) fn frame_len(&self, payload: usize) -> usize {
        round_up(self.header_len + payload, self.frame_align)
    }

    fn name(&self) -> String {
        format!("{}{}", mode_name(self.mode), topology_name(self.topology))
    }
}

/// Takes `holder`'s slot for `me` if it is free or its holder died. The word may change
/// while we look (a reaper freeing it, another claimer): look again at what it changed
/// to, a bounded number of times so a peer flipping it cannot keep us here.
fn take_if_free_or_dead(holder: &Holder, me: u64) -> bool {
    let mut token = holder.token.load(Ordering::Acquire);
    for _ in 0..CLAIM_ATTEMPTS_PER_SLOT {
        if token != SLOT_FREE && platform::token_alive(token) {
            return false;
        }
        match holder
            .token
            .compare_exchange(token, me, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => return true,
            Err(now) => token = now,
        }
    }
    false
}

/// Where the ring object lives, so the owner (or `remove`) can unlink it.
enum RingStore {
    Shm(String),
    HugeFile(PathBuf),
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
    control: Control,
    rings: Vec<MagicRing>,
    names: ObjectNames,
    ring_store: RingStore,
}

impl std::ops::Deref for Shared {
    type Target = Control;
    fn deref(&self) -> &Control {
        &self.control
    }
}

impl Shared {
    pub(crate) fn ring(&self, producer: usize) -> &MagicRing {
        &self.rings[producer]
    }
}

/// A mapped control object whose geometry has been validated: its header, hot words, slot
/// tables and cursors.
pub(crate) struct Control {
    map: MmapRaw,
    layout: ControlLayout,
    /// Publisher slots (and rings).
    pub producers: u32,
    /// Subscriber slots.
    pub subscribers: u32,
}

impl Control {
    fn base(&self) -> *mut u8 {
        self.map.as_mut_ptr()
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: the control mapping is at least `layout.len` bytes (checked against the
        // object size), page aligned, and `Header` sits at offset 0. Its plain fields are
        // never read through this reference, only from the validated copy `inspect` made.
        unsafe { &*(self.base() as *const Header) }
    }

    pub(crate) fn hot(&self) -> &Hot {
        // SAFETY: `Hot` sits at HOT_OFFSET (128-aligned) inside the checked mapping and
        // holds only atomics.
        unsafe { &*(self.base().add(HOT_OFFSET) as *const Hot) }
    }

    pub(crate) fn producer_slot(&self, index: usize) -> &ProducerSlot {
        assert!(index < self.producers as usize);
        // SAFETY: `index` is in range; the producer table lies inside the checked mapping
        // at a 128-aligned offset and holds only atomics.
        unsafe { &*(self.base().add(self.layout.producers_offset) as *const ProducerSlot).add(index) }
    }

    pub(crate) fn subscriber_slot(&self, index: usize) -> &SubscriberSlot {
        assert!(index < self.subscribers as usize);
        // SAFETY: as for `producer_slot`, for the subscriber table.
        unsafe { &*(self.base().add(self.layout.subscribers_offset) as *const SubscriberSlot).add(index) }
    }

    /// Subscriber `subscriber`'s read position in ring `producer`.
    pub(crate) fn cursor(&self, subscriber: usize, producer: usize) -> &Cursor {
        assert!(subscriber < self.subscribers as usize && producer < self.producers as usize);
        let index = subscriber * self.producers as usize + producer;
        // SAFETY: `index` < S·P, the size of the cursor table inside the checked mapping.
        unsafe { &*(self.base().add(self.layout.cursors_offset) as *const Cursor).add(index) }
    }
}

impl Shared {
    /// Claims the first free slot of `holders`, or takes over one whose holder died.
    pub(crate) fn claim_slot<'a>(
        &'a self,
        role: Role,
        holders: impl Iterator<Item = &'a Holder> + Clone,
    ) -> Result<usize> {
        let me = Identity::current().token();
        for (index, holder) in holders.clone().enumerate() {
            if holder
                .token
                .compare_exchange(SLOT_FREE, me, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(index);
            }
        }
        // All taken: a holder that died without releasing its slot gives it up.
        for (index, holder) in holders.enumerate() {
            if take_if_free_or_dead(holder, me) {
                return Ok(index);
            }
        }
        let slots = match role {
            Role::Publisher => self.producers,
            Role::Subscriber => self.subscribers,
        };
        Err(Error::NoFreeSlot {
            name: self.name.clone(),
            role,
            slots,
        })
    }

    /// Frees the slots of holders that died. A dead fanout subscriber's cursors turn idle,
    /// so it stops holding publishers back; a dead Mpsc subscriber's cursors stay, so the
    /// next subscriber resumes there. Returns (publishers, subscribers) reaped.
    pub(crate) fn reap(&self, fanout: bool) -> (u32, u32) {
        let me = Identity::current().token();
        // Replaces a dead holder's word with `to`, if it is still that dead holder's.
        let replace_if_dead = |holder: &Holder, to: u64| {
            let token = holder.token.load(Ordering::Acquire);
            token != SLOT_FREE
                && !platform::token_alive(token)
                && holder
                    .token
                    .compare_exchange(token, to, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
        };
        // A dead publisher's or Mpsc subscriber's slot is freed in one step: a slot taken
        // over even for a moment would make a concurrent claim fail with `NoFreeSlot`.
        let mut publishers = 0;
        for p in 0..self.producers as usize {
            if replace_if_dead(&self.producer_slot(p).holder, SLOT_FREE) {
                publishers += 1;
            }
        }
        let mut subscribers = 0;
        for s in 0..self.subscribers as usize {
            let holder = &self.subscriber_slot(s).holder;
            if !fanout {
                subscribers += u32::from(replace_if_dead(holder, SLOT_FREE));
            } else if replace_if_dead(holder, me) {
                // Taken over first, so no one claims it while its cursors are reset.
                for p in 0..self.producers as usize {
                    self.cursor(s, p).store(CURSOR_IDLE, Ordering::Release);
                }
                holder.token.store(SLOT_FREE, Ordering::Release);
                subscribers += 1;
            }
        }
        (publishers, subscribers)
    }

    /// Claims subscriber slot `index` specifically (fanout).
    pub(crate) fn claim_subscriber_slot_at(&self, index: usize) -> Result<usize> {
        if index >= self.subscribers as usize {
            return Err(Error::SlotOutOfRange {
                name: self.name.clone(),
                slot: index,
                slots: self.subscribers,
            });
        }
        let holder = &self.subscriber_slot(index).holder;
        if take_if_free_or_dead(holder, Identity::current().token()) {
            return Ok(index);
        }
        Err(Error::SlotInUse {
            name: self.name.clone(),
            slot: index,
            holder_pid: platform::token_pid(holder.token.load(Ordering::Relaxed)),
        })
    }

    /// Recovers the true end of ring `producer`: the reported tail, plus any frames a
    /// previous holder committed but died before reporting.
    pub(crate) fn recover_tail(&self, producer: usize) -> Result<u64> {
        let mut tail = self.producer_slot(producer).progress.tail.load(Ordering::Acquire);
        let ring = self.ring(producer).base();
        let mask = self.capacity as u64 - 1;
        let scan_end = tail.wrapping_add(self.capacity as u64);
        if !tail.is_multiple_of(self.frame_align as u64) || tail >= MAX_POSITION {
            return Err(Error::corrupt(
                &self.name,
                format!("ring {producer} reports tail {tail}, which is not a frame-aligned position"),
            ));
        }
        while tail < scan_end {
            // SAFETY: `tail & mask` < capacity and frames are 8-aligned, so the commit word
            // lies inside the first view and is aligned for AtomicU64.
            let at = unsafe { ring.add((tail & mask) as usize) };
            // SAFETY: see above.
            if !crate::protocol::is_committed(unsafe { &*(at as *const AtomicU64) }, tail) {
                break;
            }
            // SAFETY: the length field is inside the double-mapped window after `at`.
            let len = unsafe { at.add(FRAME_LEN_OFFSET).cast::<u32>().read_volatile() } as usize;
            if len > self.max_message_len {
                break;
            }
            tail += round_up(self.header_len + len, self.frame_align) as u64;
        }
        Ok(tail)
    }
}

/// The owner's handle on the names: removes them on drop unless the channel is kept.
pub(crate) struct Ownership {
    keep: bool,
}

impl Ownership {
    pub(crate) fn release(&self, shared: &Shared) {
        if self.keep {
            // Detach: the channel lives on without an owner, so it is not stale.
            shared.header().owner.token.store(SLOT_FREE, Ordering::Release);
        } else {
            unlink_objects(&shared.names, &shared.ring_store);
        }
    }
}

fn unlink_objects(names: &ObjectNames, ring_store: &RingStore) {
    let _ = platform::shm_unlink(&names.control);
    unlink_rings(ring_store);
}

fn copy_into<const N: usize>(bytes: &[u8]) -> ([u8; N], u32) {
    let mut out = [0u8; N];
    let len = bytes.len().min(N);
    out[..len].copy_from_slice(&bytes[..len]);
    (out, len as u32)
}

fn shm_error(call: &'static str, name: &str, errno: Errno) -> Error {
    let err = Error::platform(call, format!("the shared memory of channel {name:?}"), errno);
    if errno == Errno::ACCESS {
        err.with_hint("the channel belongs to another user; ask its owner to create it with wider `permissions`, or run as that user")
    } else {
        err
    }
}

/// What an existing control object turned out to be.
enum Existing {
    Live(u32),
    Kept,
    Stale,
    /// Never finished initialising and its creator is gone (or unknowable).
    Abandoned,
    Foreign(String),
}

fn map_control(fd: &OwnedFd, len: usize, name: &str) -> Result<MmapRaw> {
    memmap2::MmapOptions::new()
        .len(len)
        .populate()
        .map_raw(fd.as_raw_fd())
        .map_err(|e| {
            Error::platform(
                "mmap (control block)",
                format!("the shared memory of channel {name:?}"),
                Errno::from_io_error(&e).unwrap_or(Errno::IO),
            )
        })
}

/// What a control object holds, as far as can be told without trusting it.
enum Found {
    /// Initialised: its info (still to be validated) and owner word.
    Ready(MmapRaw, Box<ChannelInfo>, u64),
    /// Not initialised within the wait; the owner word if it was written.
    Unready(u64),
    /// Certainly not a salias channel.
    Foreign(String),
}

/// Reads a control object's header, waiting a bounded time for an owner still creating it.
fn inspect(fd: &OwnedFd, name: &str, wait: bool) -> Result<Found> {
    let wait_ms = if wait { INIT_WAIT_MS.load(Ordering::Relaxed) } else { 0 };
    let deadline = Instant::now() + Duration::from_millis(wait_ms);
    // No control block is larger than one with the most slots; map no more than that,
    // whatever size the object's writer gave it.
    let largest = ControlLayout::new(MAX_PRODUCERS, MAX_SUBSCRIBERS).len;
    loop {
        let len = platform::object_len(fd.as_fd()).map_err(|e| shm_error("fstat", name, e))? as usize;
        let len = len.min(largest);
        let mut owner = SLOT_FREE;
        if len >= size_of::<Header>() {
            let map = map_control(fd, len, name)?;
            // SAFETY: the mapping holds at least a `Header`, page aligned.
            let header = unsafe { &*(map.as_mut_ptr() as *const Header) };
            // SYNC POINT header-ready (Acquire side).
            let state = header.state.load(Ordering::Acquire);
            owner = header.owner.token.load(Ordering::Acquire);
            // SAFETY: plain bytes copied out of the mapping; any peer may have scribbled on
            // them, which is why every use validates the copy first.
            let info = unsafe { std::ptr::read_volatile(&header.info) };
            if state == STATE_READY {
                return Ok(Found::Ready(map, Box::new(info), owner));
            }
            if state != 0 {
                return Ok(Found::Foreign(format!("its state word is {state:#x}")));
            }
            if info.magic != 0 && info.magic != MAGIC {
                return Ok(Found::Foreign("its first bytes are not the salias magic".into()));
            }
            if owner != SLOT_FREE && !platform::token_alive(owner) {
                return Ok(Found::Unready(owner));
            }
        } else if len > 0 {
            return Ok(Found::Foreign(format!("it is only {len} bytes long")));
        }
        if Instant::now() >= deadline {
            return Ok(Found::Unready(owner));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn classify(fd: &OwnedFd, name: &str) -> Result<Existing> {
    let (info, owner) = match inspect(fd, name, true)? {
        Found::Ready(_, info, owner) => (info, owner),
        Found::Foreign(reason) => return Ok(Existing::Foreign(reason)),
        Found::Unready(owner) => {
            return Ok(if owner != SLOT_FREE && platform::token_alive(owner) {
                Existing::Live(platform::token_pid(owner))
            } else {
                Existing::Abandoned
            });
        }
    };
    if info.magic != MAGIC {
        return Ok(Existing::Foreign("its first bytes are not the salias magic".into()));
    }
    if info.name_len as usize > MAX_NAME_LEN || &info.name[..info.name_len as usize] != name.as_bytes() {
        return Ok(Existing::Foreign("it belongs to a channel with another name".into()));
    }
    Ok(if owner == SLOT_FREE {
        Existing::Kept
    } else if platform::token_alive(owner) {
        Existing::Live(platform::token_pid(owner))
    } else {
        Existing::Stale
    })
}

fn hugetlbfs_ring_path(dir: &Path, names: &ObjectNames) -> PathBuf {
    dir.join(&names.ring_file)
}

/// Makes a new channel named in `config`, recovering a stale one of the same name.
pub(crate) fn create(config: &Config, kind: Kind) -> Result<(Shared, Ownership)> {
    config.validate(kind.fixed_len, |len| kind.frame_len(len))?;
    if kind.topology == Mpsc::ID && config.subscribers != 1 {
        return Err(Error::config(
            "subscribers",
            format!(
                "an Mpsc channel has exactly 1 subscriber slot, not {}; use a Fanout channel for several subscribers",
                config.subscribers
            ),
        ));
    }
    if let Some(node) = config.numa_node {
        check_numa_node(node)?;
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
    let control_fd = create_control(&names, config)?;
    let ring_store = match &huge_dir {
        Some(dir) => RingStore::HugeFile(hugetlbfs_ring_path(dir, &names)),
        None => RingStore::Shm(names.rings.clone()),
    };
    // From here on, a failure must not leave names behind.
    let built = build(config, kind, &control_fd, &ring_store);
    match built {
        Ok((control, rings, layout)) => {
            let max_message_len = kind.fixed_len.unwrap_or(config.max_message_size);
            let shared = Shared {
                name: name.to_owned(),
                capacity: config.capacity,
                window: config.publication_window.unwrap_or(config.capacity),
                max_message_len,
                fixed_len: kind.fixed_len,
                frame_align: kind.frame_align,
                header_len: kind.header_len,
                control: Control {
                    map: control,
                    layout,
                    producers: config.producers,
                    subscribers: config.subscribers,
                },
                rings,
                names,
                ring_store,
            };
            // SYNC POINT header-ready (Release side): everything above is visible first.
            shared.header().state.store(STATE_READY, Ordering::Release);
            Ok((shared, Ownership { keep: config.keep }))
        }
        Err(e) => {
            unlink_objects(&names, &ring_store);
            Err(e)
        }
    }
}

fn create_control(names: &ObjectNames, config: &Config) -> Result<OwnedFd> {
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
            Err(e) => return Err(shm_error("shm_open", name, e)),
        };
        match classify(&fd, name)? {
            Existing::Live(pid) => {
                return Err(Error::AlreadyExists {
                    name: name.to_owned(),
                    owner_pid: Some(pid),
                });
            }
            Existing::Kept => {
                return Err(Error::AlreadyExists {
                    name: name.to_owned(),
                    owner_pid: None,
                });
            }
            Existing::Foreign(reason) => {
                return Err(Error::NotAChannel {
                    name: name.to_owned(),
                    reason,
                });
            }
            Existing::Stale | Existing::Abandoned => {
                remove_by_names(name, names);
            }
        }
    }
    Err(Error::AlreadyExists {
        name: name.to_owned(),
        owner_pid: None,
    })
}

type Built = (MmapRaw, Vec<MagicRing>, ControlLayout);

fn build(config: &Config, kind: Kind, control_fd: &OwnedFd, ring_store: &RingStore) -> Result<Built> {
    let name = config.name.as_str();
    let layout = ControlLayout::new(config.producers, config.subscribers);
    rustix::fs::ftruncate(control_fd, layout.len as u64).map_err(|e| shm_error("ftruncate", name, e))?;
    let control = map_control(control_fd, layout.len, name)?;
    // SAFETY: the fresh mapping is `layout.len` ≥ size_of::<Header>() bytes, page aligned,
    // zero filled, and nobody else can have mapped it in a READY state yet.
    let header = unsafe { &mut *(control.as_mut_ptr() as *mut Header) };
    header.owner.token.store(Identity::current().token(), Ordering::Release);

    let fp = kind.fingerprint;
    let (type_name, type_name_len) = copy_into::<MAX_TYPE_NAME_LEN>(fp.name.as_bytes());
    let (name_bytes, name_len) = copy_into::<MAX_NAME_LEN>(name.as_bytes());
    let dir = match ring_store {
        RingStore::HugeFile(path) => path.parent().map(|p| p.as_os_str().as_encoded_bytes().to_vec()),
        RingStore::Shm(_) => None,
    }
    .unwrap_or_default();
    let (dir_bytes, dir_len) = copy_into::<MAX_DIR_LEN>(&dir);
    let ring_object_len = config.capacity as u64 * config.producers as u64;
    header.info = ChannelInfo {
        magic: MAGIC,
        layout_version: LAYOUT_VERSION,
        mode: kind.mode,
        topology: kind.topology,
        producers: config.producers,
        subscribers: config.subscribers,
        huge_pages: config.huge_pages.to_raw(),
        frame_align: kind.frame_align as u32,
        max_message_len: kind.fixed_len.unwrap_or(config.max_message_size) as u32,
        name_len,
        hugetlbfs_dir_len: dir_len,
        capacity: config.capacity as u64,
        publication_window: config.publication_window.unwrap_or(config.capacity) as u64,
        control_len: layout.len as u64,
        ring_object_len,
        name: name_bytes,
        message_type: TypeRecord {
            name: type_name,
            name_len: type_name_len,
            size: fp.size,
            align: fp.align,
            schema_version: fp.schema_version,
            layout_hash: fp.layout_hash,
        },
        hugetlbfs_dir: dir_bytes,
    };

    if kind.topology == Fanout::ID {
        // No subscriber yet: publishers are held back by none.
        for index in 0..(config.producers as usize * config.subscribers as usize) {
            // SAFETY: the cursor table lies inside the fresh mapping; index < S·P.
            let cursor = unsafe { &*(control.as_mut_ptr().add(layout.cursors_offset) as *const Cursor).add(index) };
            cursor.store(CURSOR_IDLE, Ordering::Relaxed);
        }
    }

    let ring_fd = create_ring_object(ring_store, config)?;
    rustix::fs::ftruncate(&ring_fd, ring_object_len).map_err(|e| {
        let err = shm_error("ftruncate (rings)", name, e);
        if config.huge_pages.size().is_some() {
            err.with_hint("the hugetlbfs mount has too few free huge pages for the rings")
        } else {
            err
        }
    })?;
    let options = RingOptions {
        huge_page: config.huge_pages.size(),
        numa_node: config.numa_node,
        populate: true,
    };
    let rings = map_rings(&ring_fd, config.producers, config.capacity, &options, name)?;
    Ok((control, rings, layout))
}

fn create_ring_object(ring_store: &RingStore, config: &Config) -> Result<OwnedFd> {
    let name = config.name.as_str();
    // We own the control name, so any ring object under this name is a stale leftover.
    for attempt in 0..2 {
        let created = match ring_store {
            RingStore::Shm(os_name) => platform::shm_create(os_name, config.permissions),
            RingStore::HugeFile(path) => create_file_exclusive(path, config.permissions),
        };
        match created {
            Ok(fd) => return Ok(fd),
            Err(Errno::EXIST) if attempt == 0 => unlink_rings(ring_store),
            Err(e) => return Err(shm_error("open (create rings)", name, e)),
        }
    }
    unreachable!("the second attempt returns")
}

fn unlink_rings(ring_store: &RingStore) {
    match ring_store {
        RingStore::Shm(os_name) => {
            let _ = platform::shm_unlink(os_name);
        }
        RingStore::HugeFile(path) => {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn create_file_exclusive(path: &Path, permissions: u32) -> std::result::Result<OwnedFd, Errno> {
    use rustix::fs::{Mode, OFlags};
    let mode = Mode::from_bits_truncate(permissions as _);
    let fd = rustix::fs::open(
        path,
        OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::CLOEXEC,
        mode,
    )?;
    rustix::fs::fchmod(&fd, mode)?;
    Ok(fd)
}

fn map_rings(
    fd: &OwnedFd,
    producers: u32,
    capacity: usize,
    options: &RingOptions,
    name: &str,
) -> Result<Vec<MagicRing>> {
    let object = format!("the rings of channel {name:?}");
    (0..producers as usize)
        .map(|p| MagicRing::map(fd.as_fd(), (p * capacity) as u64, capacity, options, &object))
        .collect()
}

#[cfg(all(target_os = "linux", not(feature = "portable")))]
fn check_numa_node(node: u32) -> Result<()> {
    if Path::new(&format!("/sys/devices/system/node/node{node}")).exists() {
        return Ok(());
    }
    let mut nodes: Vec<String> = std::fs::read_dir("/sys/devices/system/node")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("node"))
                .map(str::to_owned)
        })
        .filter(|n| n.parse::<u32>().is_ok())
        .collect();
    nodes.sort();
    Err(Error::config(
        "numa_node",
        format!(
            "node {node} does not exist on this machine (its nodes: {}); pick one of those",
            if nodes.is_empty() {
                "none reported".to_owned()
            } else {
                nodes.join(", ")
            }
        ),
    ))
}

#[cfg(any(not(target_os = "linux"), feature = "portable"))]
fn check_numa_node(_node: u32) -> Result<()> {
    Err(Error::Unsupported {
        feature: "NUMA bindings",
        platform: platform::PLATFORM_NAME,
    })
}

/// Opens an existing channel's control object by name.
fn open_control(name: &str) -> Result<(ObjectNames, OwnedFd)> {
    validate_name(name)?;
    let names = ObjectNames::of(name);
    match platform::shm_open(&names.control) {
        Ok(fd) => Ok((names, fd)),
        Err(Errno::NOENT) => Err(Error::NotFound { name: name.to_owned() }),
        Err(e) => Err(shm_error("shm_open", name, e)),
    }
}

/// Opens `name`'s control object once its owner has finished creating it (waiting a
/// bounded time if `wait`): the names of its objects, its mapping, the copy of its info
/// (still to be validated) and its owner word.
fn open_ready(name: &str, wait: bool) -> Result<(ObjectNames, MmapRaw, Box<ChannelInfo>, u64)> {
    let (names, fd) = open_control(name)?;
    match inspect(&fd, name, wait)? {
        Found::Ready(map, info, owner) => Ok((names, map, info, owner)),
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

/// Opens an existing channel and checks that it is what `kind` expects.
pub(crate) fn connect(name: &str, kind: Kind) -> Result<Shared> {
    let (names, control, info, owner) = open_ready(name, true)?;
    let object_len = control.len();
    let checked = validate_info(name, &info, kind, object_len)?;
    if owner != SLOT_FREE && !platform::token_alive(owner) {
        return Err(Error::Stale {
            name: name.to_owned(),
            owner_pid: platform::token_pid(owner),
        });
    }

    let (ring_fd, ring_store) = match checked.huge_pages.size() {
        Some(size) => {
            let dir = PathBuf::from(std::ffi::OsStr::new(
                std::str::from_utf8(&info.hugetlbfs_dir[..info.hugetlbfs_dir_len as usize])
                    .map_err(|_| Error::corrupt(name, "the hugetlbfs directory is not valid UTF-8"))?,
            ));
            // The path comes from shared memory: only ever open our own file name in a real
            // hugetlbfs mount.
            platform::check_hugetlbfs(&dir, size)?;
            let path = hugetlbfs_ring_path(&dir, &names);
            let fd = rustix::fs::open(
                &path,
                rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .map_err(|e| shm_error("open (rings)", name, e))?;
            (fd, RingStore::HugeFile(path))
        }
        None => {
            let fd = platform::shm_open(&names.rings).map_err(|e| match e {
                Errno::NOENT => Error::NotAChannel {
                    name: name.to_owned(),
                    reason: "its ring memory is missing".into(),
                },
                e => shm_error("shm_open (rings)", name, e),
            })?;
            (fd, RingStore::Shm(names.rings.clone()))
        }
    };
    let ring_len = platform::object_len(ring_fd.as_fd()).map_err(|e| shm_error("fstat (rings)", name, e))?;
    if ring_len < info.ring_object_len {
        return Err(Error::corrupt(
            name,
            format!(
                "the ring memory is {ring_len} bytes, the control block promises {}",
                info.ring_object_len
            ),
        ));
    }
    let options = RingOptions {
        huge_page: checked.huge_pages.size(),
        numa_node: None,
        populate: true,
    };
    let rings = map_rings(&ring_fd, checked.producers, checked.capacity, &options, name)?;
    Ok(Shared {
        name: name.to_owned(),
        capacity: checked.capacity,
        window: checked.window,
        max_message_len: checked.max_message_len,
        // A raw view of a typed channel must keep its messages at the type's exact size.
        fixed_len: kind.fixed_len.or(checked.typed.then_some(checked.max_message_len)),
        frame_align: kind.frame_align,
        header_len: kind.header_len,
        control: Control {
            map: control,
            layout: ControlLayout::new(checked.producers, checked.subscribers),
            producers: checked.producers,
            subscribers: checked.subscribers,
        },
        rings,
        names,
        ring_store,
    })
}

struct Checked {
    producers: u32,
    subscribers: u32,
    capacity: usize,
    window: usize,
    max_message_len: usize,
    huge_pages: HugePages,
    typed: bool,
}

fn validate_info(name: &str, info: &ChannelInfo, kind: Kind, object_len: usize) -> Result<Checked> {
    let not_a_channel = |reason: &str| Error::NotAChannel {
        name: name.to_owned(),
        reason: reason.to_owned(),
    };
    let corrupt = |what: String| Error::corrupt(name, what);
    if info.magic != MAGIC {
        return Err(not_a_channel("its first bytes are not the salias magic"));
    }
    if info.layout_version != LAYOUT_VERSION {
        return Err(Error::VersionMismatch {
            name: name.to_owned(),
            found: info.layout_version,
            supported: LAYOUT_VERSION,
        });
    }
    if info.name_len as usize > MAX_NAME_LEN || &info.name[..info.name_len as usize] != name.as_bytes() {
        return Err(not_a_channel("it belongs to a channel with another name"));
    }
    if info.mode != kind.mode || info.topology != kind.topology {
        return Err(Error::KindMismatch {
            name: name.to_owned(),
            channel_kind: format!("{}{}", mode_name(info.mode), topology_name(info.topology)),
            requested_kind: kind.name(),
        });
    }
    let record = &info.message_type;
    let type_name = String::from_utf8_lossy(&record.name[..(record.name_len as usize).min(MAX_TYPE_NAME_LEN)]);
    let stored = Fingerprint {
        name: "",
        size: record.size,
        align: record.align,
        layout_hash: record.layout_hash,
        schema_version: record.schema_version,
    };
    let requested = Fingerprint {
        name: "",
        ..kind.fingerprint
    };
    let names_match = type_name == kind.fingerprint.name;
    if !kind.any_type && (stored != requested || !names_match) {
        return Err(Error::TypeMismatch {
            name: name.to_owned(),
            channel_type: stored.describe(&type_name),
            requested_type: kind.fingerprint.describe(kind.fingerprint.name),
        });
    }
    if info.producers == 0 || info.producers > MAX_PRODUCERS {
        return Err(corrupt(format!("it declares {} publisher slots", info.producers)));
    }
    if info.subscribers == 0
        || info.subscribers > MAX_SUBSCRIBERS
        || (kind.topology == Mpsc::ID && info.subscribers != 1)
    {
        return Err(corrupt(format!("it declares {} subscriber slots", info.subscribers)));
    }
    let huge_pages = HugePages::from_raw(info.huge_pages)
        .ok_or_else(|| corrupt(format!("unknown huge page setting {}", info.huge_pages)))?;
    let page = huge_pages.size().unwrap_or_else(platform::page_size) as u64;
    let capacity = info.capacity;
    if !capacity.is_power_of_two() || !capacity.is_multiple_of(page) || capacity > MAX_CAPACITY as u64 {
        return Err(corrupt(format!(
            "its ring capacity {capacity} is not a power-of-two multiple of {page}"
        )));
    }
    let max = info.max_message_len as usize;
    let window = info.publication_window;
    if info.frame_align as usize != kind.frame_align {
        return Err(corrupt(format!(
            "its frames are aligned to {} bytes, this handle needs {}",
            info.frame_align, kind.frame_align
        )));
    }
    if let Some(fixed) = kind.fixed_len
        && !kind.any_type
        && max != fixed
    {
        return Err(corrupt(format!(
            "its message length {max} differs from the type's size {fixed}"
        )));
    }
    if window > capacity || (kind.frame_len(max) as u64) > window {
        return Err(corrupt(format!(
            "its publication window {window} does not fit between one {max}-byte message and the capacity {capacity}"
        )));
    }
    let layout = ControlLayout::new(info.producers, info.subscribers);
    if info.control_len != layout.len as u64 || object_len < layout.len {
        return Err(corrupt(format!(
            "its control block is {object_len} bytes, {} expected",
            layout.len
        )));
    }
    if info.ring_object_len != capacity * info.producers as u64 {
        return Err(corrupt(format!(
            "its ring memory size {} is inconsistent",
            info.ring_object_len
        )));
    }
    Ok(Checked {
        producers: info.producers,
        subscribers: info.subscribers,
        capacity: capacity as usize,
        window: window as usize,
        max_message_len: max,
        huge_pages,
        typed: record.layout_hash != 0,
    })
}

/// Removes the channel's names whatever its state. Processes that have it mapped keep
/// working; new `connect`s fail with `NotFound`.
pub(crate) fn remove(name: &str) -> Result<()> {
    let (names, _) = open_control(name)?;
    remove_by_names(name, &names);
    Ok(())
}

/// Removes the channel only if its owner died without removing it (or died while creating
/// it). Returns whether it was removed.
pub(crate) fn remove_stale(name: &str) -> Result<bool> {
    let (names, fd) = open_control(name)?;
    match classify(&fd, name)? {
        Existing::Stale | Existing::Abandoned => {
            remove_by_names(name, &names);
            Ok(true)
        }
        Existing::Live(_) | Existing::Kept => Ok(false),
        Existing::Foreign(reason) => Err(Error::NotAChannel {
            name: name.to_owned(),
            reason,
        }),
    }
}

fn remove_by_names(name: &str, names: &ObjectNames) {
    // The huge page ring file's directory is recorded in the control block.
    let mut store = RingStore::Shm(names.rings.clone());
    if let Ok(fd) = platform::shm_open(&names.control)
        && let Ok(len) = platform::object_len(fd.as_fd())
        && len as usize >= size_of::<Header>()
        && let Ok(map) = map_control(&fd, size_of::<Header>(), name)
    {
        // SAFETY: the mapping holds at least a `Header`.
        let header = unsafe { &*(map.as_mut_ptr() as *const Header) };
        // SAFETY: plain bytes copied out and validated below before use.
        let info = unsafe { std::ptr::read_volatile(&header.info) };
        if info.magic == MAGIC
            && info.huge_pages != 0
            && let Some(dir) = info.hugetlbfs_dir.get(..info.hugetlbfs_dir_len as usize)
            && let Ok(dir) = std::str::from_utf8(dir)
            && let Some(size) = HugePages::from_raw(info.huge_pages).and_then(HugePages::size)
            && platform::check_hugetlbfs(Path::new(dir), size).is_ok()
        {
            store = RingStore::HugeFile(hugetlbfs_ring_path(Path::new(dir), names));
        }
    }
    unlink_objects(names, &store);
}

/// Opens a channel's control object alone, whatever its kind and message type, for
/// reading its state (`crate::status`). Returns the validated mapping, the copy of its
/// info it was validated from, and the owner word.
pub(crate) fn open_control_view(name: &str) -> Result<(Control, Box<ChannelInfo>, u64)> {
    // No wait: a status is a snapshot, and one of a channel being created says so.
    let (_, map, info, owner) = open_ready(name, false)?;
    // The channel's own kind, so validation checks the geometry and nothing else.
    let header_len = match info.mode {
        Fifo::ID => Fifo::HEADER_LEN,
        Ordered::ID => Ordered::HEADER_LEN,
        mode => return Err(Error::corrupt(name, format!("it declares mode {mode}"))),
    };
    if ![Mpsc::ID, Fanout::ID].contains(&info.topology) {
        return Err(Error::corrupt(name, format!("it declares topology {}", info.topology)));
    }
    let frame_align = info.frame_align as usize;
    if !frame_align.is_power_of_two() || !(8..=4096).contains(&frame_align) {
        return Err(Error::corrupt(
            name,
            format!("its frames are aligned to {frame_align} bytes"),
        ));
    }
    let kind = Kind {
        mode: info.mode,
        topology: info.topology,
        fixed_len: None,
        frame_align,
        header_len: round_up(header_len, frame_align),
        fingerprint: Fingerprint::BYTES,
        any_type: true,
    };
    let checked = validate_info(name, &info, kind, map.len())?;
    let control = Control {
        map,
        layout: ControlLayout::new(checked.producers, checked.subscribers),
        producers: checked.producers,
        subscribers: checked.subscribers,
    };
    Ok((control, info, owner))
}

/// The channel name behind shared-memory object `file_name` (as listed in the
/// shared-memory directory), if it is a salias control object whose recorded name maps
/// back to it.
pub(crate) fn channel_name_of_object(file_name: &str) -> Option<String> {
    let hash = file_name.strip_prefix("salias-")?.strip_suffix(".c")?;
    if hash.len() != 16 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let os_name = format!("/{file_name}");
    let fd = platform::shm_open(&os_name).ok()?;
    let len = platform::object_len(fd.as_fd()).ok()? as usize;
    if len < size_of::<Header>() {
        return None;
    }
    // The header alone: the object's size is whatever its writer made it.
    let map = map_control(&fd, size_of::<Header>(), file_name).ok()?;
    // SAFETY: the mapping holds at least a `Header`, page aligned.
    let header = unsafe { &*(map.as_mut_ptr() as *const Header) };
    // SAFETY: plain bytes copied out of the mapping and validated below before use.
    let info = unsafe { std::ptr::read_volatile(&header.info) };
    if info.magic != MAGIC {
        return None;
    }
    let name = std::str::from_utf8(info.name.get(..info.name_len as usize)?).ok()?;
    (validate_name(name).is_ok() && ObjectNames::of(name).control == os_name).then(|| name.to_owned())
}
