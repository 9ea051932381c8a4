//! The handle table: C holds opaque tokens (a slot index and that slot's generation), never
//! pointers to Rust objects, so a freed, forged or mistyped handle is found and refused
//! instead of dereferenced.
//!
//! Lookups take no lock: the table is chunks that are allocated once and never move, and a
//! slot's generation (odd while live) says whether the token still names its object.
//! Allocation and freeing take a lock, off the hot path.

use std::cell::UnsafeCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use crate::codes::SALIAS_ERROR_BAD_HANDLE;
use crate::entry::Failure;
use crate::kinds::{ChannelOps, PublisherOps, SubscriberOps};

/// What a handle names.
pub(crate) enum Object {
    Channel(Box<dyn ChannelOps>),
    Publisher(Box<dyn PublisherOps>),
    Subscriber(Box<dyn SubscriberOps>),
}

impl Object {
    fn role(&self) -> &'static str {
        match self {
            Object::Channel(_) => "a channel",
            Object::Publisher(_) => "a publisher",
            Object::Subscriber(_) => "a subscriber",
        }
    }
}

const CHUNK: usize = 1024;
const CHUNKS: usize = 1024;

struct Slot {
    /// Odd while the slot holds an object; each allocation and each free adds one.
    generation: AtomicU32,
    object: UnsafeCell<Option<Object>>,
}

/// Chunks of `CHUNK` slots, allocated on first use and never freed or moved.
static TABLE: [AtomicPtr<Slot>; CHUNKS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS];

struct Allocator {
    free: Vec<u32>,
    next: u32,
}

static ALLOCATOR: Mutex<Allocator> = Mutex::new(Allocator {
    free: Vec::new(),
    next: 0,
});

#[inline(always)]
fn slot(index: usize) -> Option<&'static Slot> {
    let chunk = TABLE.get(index / CHUNK)?.load(Ordering::Acquire);
    if chunk.is_null() {
        return None;
    }
    // SAFETY: a published chunk is `CHUNK` initialised slots that are never freed, and
    // `index % CHUNK < CHUNK`.
    Some(unsafe { &*chunk.add(index % CHUNK) })
}

/// A token: slot index + 1 in the high half (so never null), the generation in the low.
fn token(index: u32, generation: u32) -> usize {
    (((index as u64 + 1) << 32) | generation as u64) as usize
}

/// Stores `object` and returns its token, as the opaque pointer C holds.
pub(crate) fn insert<H>(object: Object) -> Result<*mut H, Failure> {
    let mut allocator = ALLOCATOR.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let index = match allocator.free.pop() {
        Some(index) => index,
        None => {
            let index = allocator.next;
            if index as usize >= CHUNK * CHUNKS {
                return Err(Failure::new(
                    SALIAS_ERROR_BAD_HANDLE,
                    format!(
                        "{} handles are live at once, the most the table holds; free some",
                        CHUNK * CHUNKS
                    ),
                ));
            }
            let chunk = &TABLE[index as usize / CHUNK];
            if chunk.load(Ordering::Relaxed).is_null() {
                let slots: Box<[Slot]> = (0..CHUNK)
                    .map(|_| Slot {
                        generation: AtomicU32::new(0),
                        object: UnsafeCell::new(None),
                    })
                    .collect();
                // SYNC POINT chunk-published: Release here, Acquire in `slot`.
                chunk.store(Box::into_raw(slots).cast::<Slot>(), Ordering::Release);
            }
            allocator.next += 1;
            index
        }
    };
    let slot = slot(index as usize).expect("the allocator's slots exist");
    // SAFETY: the slot is free (its generation is even): no token names it, so no lookup
    // forms a reference to its object; the allocator lock keeps other inserts out.
    unsafe { *slot.object.get() = Some(object) };
    let generation = slot.generation.load(Ordering::Relaxed).wrapping_add(1);
    // SYNC POINT slot-live: Release here, Acquire in `get`: a lookup that sees the new
    // generation sees the object.
    slot.generation.store(generation, Ordering::Release);
    Ok(std::ptr::without_provenance_mut(token(index, generation)))
}

/// The live slot a token names. Inlined into every call: it is on each one's way in.
#[inline(always)]
fn live<H>(handle: *mut H, role: &str) -> Result<&'static Slot, Failure> {
    if handle.is_null() {
        return Err(bad(handle, role, "is null"));
    }
    let token = handle.addr() as u64;
    let (index, generation) = ((token >> 32).wrapping_sub(1), token as u32);
    let Some(slot) = usize::try_from(index).ok().and_then(slot) else {
        return Err(bad(handle, role, "was never made by salias"));
    };
    if generation % 2 == 0 {
        return Err(bad(handle, role, "was never made by salias"));
    }
    // SYNC POINT slot-live: Acquire, paired with `insert`'s Release.
    if slot.generation.load(Ordering::Acquire) != generation {
        return Err(bad(handle, role, "was freed (or was never made by salias)"));
    }
    Ok(slot)
}

#[cold]
#[inline(never)]
fn bad<H>(handle: *mut H, role: &str, why: &str) -> Failure {
    Failure::new(SALIAS_ERROR_BAD_HANDLE, format!("the {role} handle {handle:p} {why}"))
}

/// The object a live token names, if it is the role `role` accepts.
///
/// # Safety
/// The header's contract: a handle is used by one thread at a time and not freed while a
/// call uses it. The caller drops the reference before its call returns, so it is the
/// only reference to the object while it lives.
#[inline(always)]
pub(crate) unsafe fn get<'a, H, R>(
    handle: *mut H,
    role: &'static str,
    pick: impl FnOnce(&mut Object) -> Option<&mut R>,
) -> Result<&'a mut R, Failure>
where
    R: ?Sized,
{
    let slot = live(handle, role)?;
    // SAFETY: the slot is live (checked above), so its object is initialised and stays
    // until the handle is freed, which the caller's contract forbids while the reference
    // lives; one thread at a time uses a handle, so no other reference to it exists.
    let Some(object) = (unsafe { (*slot.object.get()).as_mut() }) else {
        unreachable!("a live slot holds an object")
    };
    let found = object.role();
    match pick(object) {
        Some(picked) => Ok(picked),
        None => Err(mistyped(handle, found, role)),
    }
}

#[cold]
#[inline(never)]
fn mistyped<H>(handle: *mut H, found: &str, role: &str) -> Failure {
    Failure::new(
        SALIAS_ERROR_BAD_HANDLE,
        format!("the handle {handle:p} is {found}, not {role}"),
    )
}

/// Frees the object a live token names, if it is of the role `is_role` accepts; a second
/// free of the same token is refused.
pub(crate) fn remove<H>(handle: *mut H, role: &'static str, is_role: impl Fn(&Object) -> bool) -> Result<(), Failure> {
    let slot = live(handle, role)?;
    let mut allocator = ALLOCATOR.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let generation = handle.addr() as u32;
    // SAFETY: as in `get`.
    let object = unsafe { (*slot.object.get()).as_ref() }.expect("a live slot holds an object");
    if !is_role(object) {
        let found = object.role();
        return Err(Failure::new(
            SALIAS_ERROR_BAD_HANDLE,
            format!("the handle {handle:p} is {found}, not {role}"),
        ));
    }
    if slot
        .generation
        .compare_exchange(
            generation,
            generation.wrapping_add(1),
            Ordering::AcqRel,
            Ordering::Relaxed,
        )
        .is_err()
    {
        return Err(Failure::new(
            SALIAS_ERROR_BAD_HANDLE,
            format!("the {role} handle {handle:p} was freed already"),
        ));
    }
    // SAFETY: the generation moved on, so no later lookup reaches the object; the
    // contract keeps current ones out. Taken under the lock, so no insert reuses the slot
    // before the object is out.
    let object = unsafe { (*slot.object.get()).take() };
    let index = ((handle.addr() as u64 >> 32) - 1) as u32;
    allocator.free.push(index);
    drop(allocator);
    drop(object);
    Ok(())
}
