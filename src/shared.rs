//! Making, finding and mapping a channel's shared memory: the control object and the ring
//! object. Everything read from an existing channel is validated here before any handle
//! can use it.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

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
use crate::platform::{
    self, ControlMap, HEALTHY, Health, Identity, MagicRing, ObjectFacts, ObjectId, ObjectNames, ReserveError,
    RingOptions,
};
use crate::trust::Trust;

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
    /// The objects this view mapped, so the owner unlinks exactly those.
    control_id: ObjectId,
    ring_id: ObjectId,
    /// Kept open to notice a truncation that no access of ours has run into yet.
    control_fd: OwnedFd,
    ring_fd: OwnedFd,
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
    pub(crate) fn ring(&self, producer: usize) -> &MagicRing {
        &self.rings[producer]
    }

    /// This channel's health cell: handles check it on every call.
    pub(crate) fn health(&self) -> &'static std::sync::atomic::AtomicU32 {
        self.health.word()
    }

    /// Fails once another process truncated the channel's objects, or in a `fork()` child.
    pub(crate) fn check_health(&self) -> Result<()> {
        match self.health.state() {
            HEALTHY => Ok(()),
            state => Err(platform::unhealthy(&self.name, state)),
        }
    }

    /// Asks the system whether either object was shrunk below what this view maps, and
    /// poisons the channel if so: a process that never touches the lost pages learns of it
    /// too. Two `fstat` calls; for rate-limited cold paths only.
    pub(crate) fn check_objects(&self) -> Result<()> {
        let short = |fd: &OwnedFd, len: u64| platform::object_len(fd.as_fd()).is_ok_and(|now| now < len);
        if short(&self.control_fd, self.control.layout.len as u64)
            || short(&self.ring_fd, (self.capacity * self.producers as usize) as u64)
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

    /// Whether this process may act on the channel's shared state (it is not a `fork()`
    /// child holding inherited handles).
    pub(crate) fn is_ours(&self) -> bool {
        self.health.state() != platform::INHERITED
    }
}

/// A mapped control object whose geometry has been validated: its header, hot words, slot
/// tables and cursors.
pub(crate) struct Control {
    map: ControlMap,
    layout: ControlLayout,
    /// Publisher slots (and rings).
    pub producers: u32,
    /// Subscriber slots.
    pub subscribers: u32,
}

impl Control {
    fn base(&self) -> *mut u8 {
        self.map.as_ptr()
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
        if !shared.is_ours() {
            // A fork() child: the channel is its parent's to keep or remove.
            return;
        }
        if self.keep {
            // Detach: the channel lives on without an owner, so it is not stale.
            shared.header().owner.token.store(SLOT_FREE, Ordering::Release);
        } else {
            unlink_objects(
                &shared.names,
                shared.control_id,
                &shared.ring_store,
                Some(shared.ring_id),
            );
        }
    }
}

/// Unlinks the control object if the name still names object `control`, and the rings if
/// they are object `rings` (when known). Never anything created under the name since.
fn unlink_objects(names: &ObjectNames, control: ObjectId, ring_store: &RingStore, rings: Option<ObjectId>) {
    platform::shm_unlink_if(&names.control, control);
    if let Some(rings) = rings {
        unlink_rings_if(ring_store, rings);
    }
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

fn symlink_at_name(name: &str) -> Error {
    Error::NotAChannel {
        name: name.to_owned(),
        reason: "a symbolic link stands at its name, which salias never follows".into(),
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

fn map_control(fd: &OwnedFd, len: usize, name: &str, health: &Health) -> Result<ControlMap> {
    ControlMap::map(
        fd.as_fd(),
        len,
        health,
        &format!("the shared memory of channel {name:?}"),
    )
}

/// A control object's header as copied out: state, owner word and info (still to be
/// validated; any peer may have scribbled on it).
struct HeaderCopy {
    state: u32,
    owner: u64,
    info: Box<ChannelInfo>,
}

/// Copies the header out of `map` (at least a `Header` long). Fails if the object was
/// truncated under the copy.
fn copy_header(map: &ControlMap, health: &Health, name: &str) -> Result<HeaderCopy> {
    let header = map.as_ptr() as *const Header;
    // SAFETY: the mapping holds at least a `Header`, page aligned; `state` and `owner`
    // are atomics, read in place.
    let (state, owner) = unsafe {
        (
            // SYNC POINT header-ready (Acquire side).
            (*header).state.load(Ordering::Acquire),
            (*header).owner.token.load(Ordering::Acquire),
        )
    };
    // SAFETY: plain bytes copied out of the mapping, never referenced in place; every use
    // validates the copy first.
    let info = Box::new(unsafe { std::ptr::read_volatile(&raw const (*header).info) });
    match health.state() {
        HEALTHY => Ok(HeaderCopy { state, owner, info }),
        state => Err(platform::unhealthy(name, state)),
    }
}

/// Reads just the header of the object open as `fd`, if it is long enough to hold one.
fn read_header(fd: &OwnedFd, name: &str) -> Result<Option<HeaderCopy>> {
    let len = platform::object_len(fd.as_fd()).map_err(|e| shm_error("fstat", name, e))?;
    if len < size_of::<Header>() as u64 {
        return Ok(None);
    }
    let health = Health::new(name)?;
    let map = map_control(fd, size_of::<Header>(), name, &health)?;
    copy_header(&map, &health, name).map(Some)
}

/// What a control object holds, as far as can be told without trusting it.
enum Found {
    /// Initialised: its mapping, info (still to be validated) and owner word.
    Ready(ControlMap, Box<ChannelInfo>, u64),
    /// Not initialised within the wait; the owner word if it was written.
    Unready(u64),
    /// Certainly not a salias channel.
    Foreign(String),
}

/// Reads a control object's header, waiting a bounded time for an owner still creating it.
/// The mapping it returns is registered with `health`.
fn inspect(fd: &OwnedFd, name: &str, wait: bool, health: &Health) -> Result<Found> {
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
            let map = map_control(fd, len, name, health)?;
            let copy = copy_header(&map, health, name)?;
            owner = copy.owner;
            if copy.state == STATE_READY {
                return Ok(Found::Ready(map, copy.info, owner));
            }
            if copy.state != 0 {
                return Ok(Found::Foreign(format!("its state word is {:#x}", copy.state)));
            }
            if copy.info.magic != 0 && copy.info.magic != MAGIC {
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

/// What the control object open as `fd` is, and the ring object it recorded (if it got as
/// far as recording one).
fn classify(fd: &OwnedFd, name: &str) -> Result<(Existing, Option<ObjectId>)> {
    let health = Health::new(name)?;
    let (info, owner) = match inspect(fd, name, true, &health)? {
        Found::Ready(_, info, owner) => (info, owner),
        Found::Foreign(reason) => return Ok((Existing::Foreign(reason), None)),
        Found::Unready(owner) => {
            let existing = if owner != SLOT_FREE && platform::token_alive(owner) {
                Existing::Live(platform::token_pid(owner))
            } else {
                Existing::Abandoned
            };
            // An abandoned channel may have recorded its rings before its owner died.
            let rings = read_header(fd, name)?.and_then(|copy| recorded_rings(&copy.info));
            return Ok((existing, rings));
        }
    };
    if info.magic != MAGIC {
        return Ok((
            Existing::Foreign("its first bytes are not the salias magic".into()),
            None,
        ));
    }
    if info.name_len as usize > MAX_NAME_LEN || &info.name[..info.name_len as usize] != name.as_bytes() {
        return Ok((
            Existing::Foreign("it belongs to a channel with another name".into()),
            None,
        ));
    }
    let existing = if owner == SLOT_FREE {
        Existing::Kept
    } else if platform::token_alive(owner) {
        Existing::Live(platform::token_pid(owner))
    } else {
        Existing::Stale
    };
    Ok((existing, recorded_rings(&info)))
}

/// The ring object a control block says is its own; `None` if it recorded none.
fn recorded_rings(info: &ChannelInfo) -> Option<ObjectId> {
    (info.magic == MAGIC && info.ring_inode != 0).then_some(ObjectId {
        device: info.ring_device,
        inode: info.ring_inode,
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
    let health = Health::new(name)?;
    let control_fd = create_control(&names, config)?;
    let control_id = platform::object_id(control_fd.as_fd()).map_err(|e| shm_error("fstat", name, e))?;
    let ring_store = match &huge_dir {
        Some(dir) => RingStore::HugeFile(hugetlbfs_ring_path(dir, &names)),
        None => RingStore::Shm(names.rings.clone()),
    };
    // From here on, a failure must not leave names behind.
    let mut ring_id = None;
    let built = build(config, kind, &control_fd, &ring_store, &health, &mut ring_id);
    match built {
        Ok((control, rings, layout, ring_id, ring_fd)) => {
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
                control_id,
                ring_id,
                control_fd,
                ring_fd,
                health,
            };
            // A peer may have truncated the objects while they were being set up.
            shared.check_health()?;
            // SYNC POINT header-ready (Release side): everything above is visible first.
            shared.header().state.store(STATE_READY, Ordering::Release);
            Ok((shared, Ownership { keep: config.keep }))
        }
        Err(e) => {
            unlink_objects(&names, control_id, &ring_store, ring_id);
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
            (Existing::Stale | Existing::Abandoned, rings) => {
                // The control name only: whoever creates it next owns the ring name too
                // and replaces any leftover rings there (`create_ring_object`).
                remove_stale_objects(name, names, &fd, rings);
            }
        }
    }
    Err(Error::AlreadyExists {
        name: name.to_owned(),
        owner_pid: None,
    })
}

type Built = (ControlMap, Vec<MagicRing>, ControlLayout, ObjectId, OwnedFd);

fn build(
    config: &Config,
    kind: Kind,
    control_fd: &OwnedFd,
    ring_store: &RingStore,
    health: &Health,
    ring_id_out: &mut Option<ObjectId>,
) -> Result<Built> {
    let name = config.name.as_str();
    let layout = ControlLayout::new(config.producers, config.subscribers);
    let ring_object_len = config.capacity as u64 * config.producers as u64;
    let huge_pages = config.huge_pages.size().is_some();
    let no_space = |needed: u64, available: u64, filesystem: String| Error::NoSpace {
        name: name.to_owned(),
        needed,
        available,
        filesystem,
        huge_pages,
    };
    // With huge pages the rings come from the kernel's huge page pool, not from /dev/shm.
    let shm_needed = if huge_pages {
        layout.len as u64
    } else {
        layout.len as u64 + ring_object_len
    };
    rustix::fs::ftruncate(control_fd, layout.len as u64).map_err(|e| shm_error("ftruncate", name, e))?;
    platform::reserve(control_fd.as_fd(), layout.len as u64, platform::shm_filesystem()).map_err(|e| match e {
        ReserveError::NoSpace { available, filesystem } => no_space(shm_needed, available, filesystem),
        ReserveError::Other(e) => shm_error("fallocate", name, e),
    })?;
    let control = map_control(control_fd, layout.len, name, health)?;
    // Recorded before anything else can fail, so a stale channel's rings can be told apart
    // from those of a channel created under the name later.
    let ring_fd = create_ring_object(ring_store, config)?;
    let ring_id = platform::object_id(ring_fd.as_fd()).map_err(|e| shm_error("fstat (rings)", name, e))?;
    *ring_id_out = Some(ring_id);
    // SAFETY: the fresh mapping is `layout.len` ≥ size_of::<Header>() bytes, page aligned,
    // zero filled, and nobody else can have mapped it in a READY state yet.
    let header = unsafe { &mut *(control.as_ptr() as *mut Header) };
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
        permissions: config.permissions,
        _reserved: 0,
        ring_device: ring_id.device,
        ring_inode: ring_id.inode,
    };

    if kind.topology == Fanout::ID {
        // No subscriber yet: publishers are held back by none.
        for index in 0..(config.producers as usize * config.subscribers as usize) {
            // SAFETY: the cursor table lies inside the fresh mapping; index < S·P.
            let cursor = unsafe { &*(control.as_ptr().add(layout.cursors_offset) as *const Cursor).add(index) };
            cursor.store(CURSOR_IDLE, Ordering::Relaxed);
        }
    }

    rustix::fs::ftruncate(&ring_fd, ring_object_len).map_err(|e| {
        let err = shm_error("ftruncate (rings)", name, e);
        if huge_pages {
            err.with_hint("the hugetlbfs mount has too few free huge pages for the rings")
        } else {
            err
        }
    })?;
    let ring_filesystem = match ring_store {
        RingStore::HugeFile(path) => path.parent().unwrap_or(path).display().to_string(),
        RingStore::Shm(_) => platform::shm_filesystem().to_owned(),
    };
    // Without this, a ring that does not fit maps fine and kills its first writer with
    // SIGBUS: tmpfs and hugetlbfs allocate on first touch, and MAP_POPULATE reports nothing.
    platform::reserve(ring_fd.as_fd(), ring_object_len, &ring_filesystem).map_err(|e| match e {
        ReserveError::NoSpace { available, filesystem } => match config.huge_pages.size() {
            Some(page) => no_space(
                ring_object_len,
                platform::free_huge_pages(page).map_or(available, |pages| pages * page as u64),
                format!("the {}-byte huge page pool (mounted at {filesystem})", page),
            ),
            None => no_space(shm_needed, available, filesystem),
        },
        ReserveError::Other(e) => shm_error("fallocate (rings)", name, e),
    })?;
    let options = RingOptions {
        huge_page: config.huge_pages.size(),
        numa_node: config.numa_node,
        populate: true,
    };
    let rings = map_rings(&ring_fd, config.producers, config.capacity, &options, health, name)?;
    Ok((control, rings, layout, ring_id, ring_fd))
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

/// Unlinks the rings only if the name still names object `id`.
fn unlink_rings_if(ring_store: &RingStore, id: ObjectId) {
    match ring_store {
        RingStore::Shm(os_name) => platform::shm_unlink_if(os_name, id),
        RingStore::HugeFile(path) => {
            if open_ring_file(path).is_ok_and(|fd| platform::object_id(fd.as_fd()) == Ok(id)) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

fn open_ring_file(path: &Path) -> std::result::Result<OwnedFd, Errno> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(path, OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
}

fn create_file_exclusive(path: &Path, permissions: u32) -> std::result::Result<OwnedFd, Errno> {
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

fn map_rings(
    fd: &OwnedFd,
    producers: u32,
    capacity: usize,
    options: &RingOptions,
    health: &Health,
    name: &str,
) -> Result<Vec<MagicRing>> {
    let object = format!("the rings of channel {name:?}");
    let rings = (0..producers as usize)
        .map(|p| MagicRing::map(fd.as_fd(), (p * capacity) as u64, capacity, options, health, &object))
        .collect::<Result<Vec<_>>>()?;
    // Faulting the pages in may have found the object shrunk.
    match health.state() {
        HEALTHY => Ok(rings),
        state => Err(platform::unhealthy(name, state)),
    }
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

/// Opens an existing channel's control object by name, with what `fstat` says of it.
fn open_control(name: &str) -> Result<(ObjectNames, OwnedFd, ObjectFacts)> {
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

/// A control object that its owner finished creating.
struct Opened {
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
fn open_ready(name: &str, wait: bool, trust: &Trust, health: &Health) -> Result<Opened> {
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
    let checked = validate_info(name, &info, kind, facts.len.min(control.len() as u64))?;
    if owner != SLOT_FREE && !platform::token_alive(owner) {
        return Err(Error::Stale {
            name: name.to_owned(),
            owner_pid: platform::token_pid(owner),
        });
    }

    let (ring_fd, ring_store, ring_facts) = open_rings(name, &names, &info, &checked, &facts, trust)?;
    let options = RingOptions {
        huge_page: checked.huge_pages.size(),
        numa_node: None,
        populate: true,
    };
    let rings = map_rings(&ring_fd, checked.producers, checked.capacity, &options, &health, name)?;
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
        control_id: facts.id,
        ring_id: ring_facts.id,
        control_fd,
        ring_fd,
        health,
    })
}

/// Opens the ring object of the channel whose validated info is `info`, and checks it the
/// way `connect` must: trusted owner, the very object the control block recorded, and at
/// least as long as promised.
fn open_rings(
    name: &str,
    names: &ObjectNames,
    info: &ChannelInfo,
    checked: &Checked,
    control: &ObjectFacts,
    trust: &Trust,
) -> Result<(OwnedFd, RingStore, ObjectFacts)> {
    let (ring_fd, ring_store) = match checked.huge_pages.size() {
        Some(size) => {
            let dir = PathBuf::from(std::ffi::OsStr::new(
                std::str::from_utf8(&info.hugetlbfs_dir[..info.hugetlbfs_dir_len as usize])
                    .map_err(|_| Error::corrupt(name, "the hugetlbfs directory is not valid UTF-8"))?,
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

struct Checked {
    producers: u32,
    subscribers: u32,
    capacity: usize,
    window: usize,
    max_message_len: usize,
    huge_pages: HugePages,
    typed: bool,
}

fn validate_info(name: &str, info: &ChannelInfo, kind: Kind, object_len: u64) -> Result<Checked> {
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
    if info.control_len != layout.len as u64 || object_len < layout.len as u64 {
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
    let (names, fd, _) = open_control(name)?;
    remove_by_names(name, &names, &fd);
    Ok(())
}

/// Removes the channel only if its owner died without removing it (or died while creating
/// it). Returns whether it was removed.
pub(crate) fn remove_stale(name: &str) -> Result<bool> {
    let (names, fd, _) = open_control(name)?;
    match classify(&fd, name)? {
        (Existing::Stale | Existing::Abandoned, rings) => {
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
fn remove_stale_objects(name: &str, names: &ObjectNames, fd: &OwnedFd, rings: Option<ObjectId>) {
    let Ok(control) = platform::object_id(fd.as_fd()) else {
        return;
    };
    let store = ring_store_of(name, names, fd);
    unlink_objects(names, control, &store, rings);
}

/// Where the rings of the channel whose control object is open as `fd` live: the huge page
/// ring file's directory is recorded in its control block.
fn ring_store_of(name: &str, names: &ObjectNames, fd: &OwnedFd) -> RingStore {
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

fn remove_by_names(name: &str, names: &ObjectNames, fd: &OwnedFd) {
    let store = ring_store_of(name, names, fd);
    let _ = platform::shm_unlink(&names.control);
    unlink_rings(&store);
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
        match self.health.state() {
            HEALTHY => Ok(()),
            state => Err(platform::unhealthy(name, state)),
        }
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
    let checked = validate_info(name, &info, kind, facts.len.min(map.len() as u64))?;
    // The rings are not mapped, but a channel whose rings are gone is not one to report
    // as fine.
    let names = ObjectNames::of(name);
    open_rings(name, &names, &info, &checked, &facts, trust)?;
    let control = Control {
        map,
        layout: ControlLayout::new(checked.producers, checked.subscribers),
        producers: checked.producers,
        subscribers: checked.subscribers,
    };
    Ok(ControlView {
        control,
        info,
        owner,
        facts,
        health,
    })
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
    // The header alone: the object's size is whatever its writer made it.
    let info = read_header(&fd, file_name).ok()??.info;
    if info.magic != MAGIC {
        return None;
    }
    let name = std::str::from_utf8(info.name.get(..info.name_len as usize)?).ok()?;
    (validate_name(name).is_ok() && ObjectNames::of(name).control == os_name).then(|| name.to_owned())
}
