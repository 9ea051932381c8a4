//! Inspecting what is at a name without trusting it: mapping a control object, copying
//! its header out, waiting a bounded time for an owner still creating it, and telling a
//! live, kept, stale, abandoned or foreign object apart.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::object::{recorded_rings, shm_error};
use crate::config::{MAX_NAME_LEN, MAX_PUBLISHERS, MAX_SUBSCRIBERS, validate_name};
use crate::error::Result;
use crate::platform::{self, ControlMap, Health, ObjectId, ObjectNames};
use crate::wire::control::HeaderView;
use crate::wire::layout::{ChannelInfo, ControlLayout, Header, MAGIC, SLOT_FREE, STATE_READY};

/// How long `connect` waits for an owner that is still initialising the channel, in ms.
pub(super) static INIT_WAIT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(2_000);

#[cfg(salias_testing)]
/// Shortens the wait for fuzzing, where every forged "initialising" channel would
/// otherwise cost two seconds.
pub(crate) fn set_init_wait(wait: Duration) {
    INIT_WAIT_MS.store(wait.as_millis() as u64, Ordering::Relaxed);
}

/// What an existing control object turned out to be.
pub(super) enum Existing {
    Live(u32),
    Kept,
    /// Its owner (this pid) died without removing it.
    Stale(u32),
    /// Never finished initialising and its creator (this pid, if it recorded itself) is gone.
    Abandoned(Option<u32>),
    Foreign(String),
}

pub(super) fn map_control(fd: &OwnedFd, len: usize, name: &str, health: &Health) -> Result<ControlMap> {
    ControlMap::map(
        fd.as_fd(),
        len,
        health,
        &format!("the shared memory of channel {name:?}"),
    )
}

/// A control object's header as copied out: state, owner word and info (still to be
/// validated; any peer may have scribbled on it).
pub(super) struct HeaderCopy {
    pub(super) state: u32,
    pub(super) owner: u64,
    pub(super) info: Box<ChannelInfo>,
}

/// Copies the header out of `map` (at least a `Header` long). Fails if the object was
/// truncated under the copy.
pub(super) fn copy_header(map: &ControlMap, health: &Health, name: &str) -> Result<HeaderCopy> {
    let base = std::ptr::NonNull::new(map.as_ptr()).expect("a mapping is never at address 0");
    // SAFETY: the caller mapped at least a `Header`, page aligned, and `map` outlives the view.
    let header = unsafe { HeaderView::new(base) };
    // SYNC POINT header-ready (Acquire side).
    let state = header.state().load(Ordering::Acquire);
    let owner = header.owner().token.load(Ordering::Acquire);
    let info = Box::new(header.copy_info());
    health.check(name)?;
    Ok(HeaderCopy { state, owner, info })
}

/// Reads just the header of the object open as `fd`, if it is long enough to hold one.
pub(super) fn read_header(fd: &OwnedFd, name: &str) -> Result<Option<HeaderCopy>> {
    let len = platform::object_len(fd.as_fd()).map_err(|e| shm_error("fstat", name, e))?;
    if len < size_of::<Header>() as u64 {
        return Ok(None);
    }
    let health = Health::new(name)?;
    let map = map_control(fd, size_of::<Header>(), name, &health)?;
    copy_header(&map, &health, name).map(Some)
}

/// What a control object holds, as far as can be told without trusting it.
pub(super) enum Found {
    /// Initialised: its mapping, info (still to be validated) and owner word.
    Ready(ControlMap, Box<ChannelInfo>, u64),
    /// Not initialised within the wait; the owner word if it was written.
    Unready(u64),
    /// Certainly not a salias channel.
    Foreign(String),
}

/// Reads a control object's header, waiting a bounded time for an owner still creating it.
/// The mapping it returns is registered with `health`.
pub(super) fn inspect(fd: &OwnedFd, name: &str, wait: bool, health: &Health) -> Result<Found> {
    let wait_ms = if wait { INIT_WAIT_MS.load(Ordering::Relaxed) } else { 0 };
    let deadline = Instant::now() + Duration::from_millis(wait_ms);
    // No control block is larger than one with the most slots; map no more than that,
    // whatever size the object's writer gave it.
    let largest = ControlLayout::new(MAX_PUBLISHERS, MAX_SUBSCRIBERS).len;
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
pub(super) fn classify(fd: &OwnedFd, name: &str) -> Result<(Existing, Option<ObjectId>)> {
    let health = Health::new(name)?;
    let (info, owner) = match inspect(fd, name, true, &health)? {
        Found::Ready(_, info, owner) => (info, owner),
        Found::Foreign(reason) => return Ok((Existing::Foreign(reason), None)),
        Found::Unready(owner) => {
            let existing = if owner != SLOT_FREE && platform::token_alive(owner) {
                Existing::Live(platform::token_pid(owner))
            } else {
                Existing::Abandoned((owner != SLOT_FREE).then(|| platform::token_pid(owner)))
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
        Existing::Stale(platform::token_pid(owner))
    };
    Ok((existing, recorded_rings(&info)))
}

/// The channel name behind shared-memory object `file_name` (as listed in the
/// shared-memory directory), if it is a salias control object whose recorded name maps
/// back to it.
pub(crate) fn channel_name_of_object(file_name: &str) -> Option<String> {
    let os_name = ObjectNames::control_object(file_name)?;
    let fd = platform::shm_open(&os_name).ok()?;
    // The header alone: the object's size is whatever its writer made it.
    let info = read_header(&fd, file_name).ok()??.info;
    if info.magic != MAGIC {
        return None;
    }
    let name = std::str::from_utf8(info.name.get(..info.name_len as usize)?).ok()?;
    (validate_name(name).is_ok() && ObjectNames::of(name).control == os_name).then(|| name.to_owned())
}
