//! The C ABI's hot paths allocate nothing: a counting global allocator watches every
//! publish and receive function after setup, on every kind, backpressure included (a
//! refused offer is an outcome, not a failure whose sentence would be allocated).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::{CString, c_void};
use std::ptr;

use salias_c::channel::{
    SALIAS_FIFO_FANOUT, SALIAS_FIFO_MPSC, SALIAS_ORDERED_FANOUT, SALIAS_ORDERED_MPSC, salias_channel,
    salias_channel_create, salias_channel_free, salias_channel_publisher, salias_channel_subscriber,
};
use salias_c::publisher::{
    salias_bytes, salias_publisher, salias_publisher_claim, salias_publisher_commit, salias_publisher_free,
    salias_publisher_offer, salias_publisher_offer_array, salias_publisher_offer_batch,
};
use salias_c::subscriber::{
    salias_message, salias_subscriber, salias_subscriber_drain, salias_subscriber_drain_into, salias_subscriber_free,
    salias_subscriber_release, salias_subscriber_try_recv,
};
use salias_c::{SALIAS_BACKPRESSURED, SALIAS_EMPTY, SALIAS_OK, salias_config_default};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; only counts calls on this thread.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(work: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    work();
    ALLOCATIONS.with(Cell::get) - before
}

const MESSAGE: usize = 48;
const ROUNDS: usize = 20_000;

unsafe extern "C" fn count_message(context: *mut c_void, message: *const salias_message) {
    // SAFETY: `context` is the `usize` the caller passed; `message` is valid for the call.
    unsafe {
        assert_eq!((*message).len, MESSAGE);
        *context.cast::<usize>() += 1;
    }
}

/// Publishes and receives `ROUNDS` times each way the ABI offers, then fills the ring until
/// offers are refused, counting allocations throughout.
fn hot_paths(kind: u32) {
    let name = CString::new(format!("ffi-no-alloc-{kind}-{}", std::process::id())).unwrap();
    let mut config = salias_config_default(name.as_ptr());
    config.capacity = 64 << 10;
    config.max_message_size = MESSAGE;
    let (mut channel, mut publisher, mut subscriber): (
        *mut salias_channel,
        *mut salias_publisher,
        *mut salias_subscriber,
    ) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: the pointers are this test's own live locals (so for every call below).
    unsafe {
        assert_eq!(
            salias_channel_create(kind, &config, ptr::null(), &mut channel),
            SALIAS_OK
        );
        assert_eq!(salias_channel_publisher(channel, &mut publisher), SALIAS_OK);
        assert_eq!(salias_channel_subscriber(channel, &mut subscriber), SALIAS_OK);
    }
    let payload = [7u8; MESSAGE];
    let batch = [salias_bytes {
        data: payload.as_ptr().cast(),
        len: MESSAGE,
    }; 4];
    let array = [7u8; MESSAGE * 4];
    let mut into = [0u8; MESSAGE * 8];
    let allocations = allocations_during(|| {
        for _ in 0..ROUNDS {
            let (mut published, mut handled, mut copied) = (0usize, 0usize, 0usize);
            let mut message = salias_message {
                data: ptr::null(),
                len: 0,
                publisher_slot: 0,
                sequence: 0,
                gap_before: 0,
            };
            let mut claimed: *mut c_void = ptr::null_mut();
            // SAFETY: as above; `claimed` points to `MESSAGE` writable bytes once claimed.
            unsafe {
                assert_eq!(
                    salias_publisher_offer(publisher, payload.as_ptr().cast(), MESSAGE),
                    SALIAS_OK
                );
                assert_eq!(salias_subscriber_try_recv(subscriber, &mut message), SALIAS_OK);
                assert_eq!(message.len, MESSAGE);
                assert_eq!(salias_subscriber_release(subscriber), SALIAS_OK);
                assert_eq!(
                    salias_publisher_offer_batch(publisher, batch.as_ptr(), 4, &mut published),
                    SALIAS_OK
                );
                assert_eq!(
                    salias_publisher_offer_array(publisher, array.as_ptr().cast(), MESSAGE, 4, &mut published),
                    SALIAS_OK
                );
                assert_eq!(salias_publisher_claim(publisher, MESSAGE, &mut claimed), SALIAS_OK);
                claimed.cast::<u8>().write_bytes(7, MESSAGE);
                assert_eq!(salias_publisher_commit(publisher, MESSAGE), SALIAS_OK);
                let context = (&raw mut handled).cast();
                assert_eq!(
                    salias_subscriber_drain(subscriber, 5, Some(count_message), context, &mut handled),
                    SALIAS_OK
                );
                assert_eq!(handled, 5);
                assert_eq!(
                    salias_subscriber_drain_into(subscriber, into.as_mut_ptr().cast(), MESSAGE, 8, &mut copied),
                    SALIAS_OK
                );
                assert_eq!(copied, 4);
                assert_eq!(salias_subscriber_try_recv(subscriber, &mut message), SALIAS_EMPTY);
            }
        }
        // Backpressure: offers refused when the ring is full, as outcomes.
        let mut refused = 0;
        while refused < 1000 {
            // SAFETY: as above.
            match unsafe { salias_publisher_offer(publisher, payload.as_ptr().cast(), MESSAGE) } {
                SALIAS_OK => {}
                SALIAS_BACKPRESSURED => refused += 1,
                other => panic!("offer returned {other}"),
            }
        }
    });
    assert_eq!(allocations, 0, "kind {kind}: the C ABI's hot paths allocated");
    assert_eq!(salias_subscriber_free(subscriber), SALIAS_OK);
    assert_eq!(salias_publisher_free(publisher), SALIAS_OK);
    assert_eq!(salias_channel_free(channel), SALIAS_OK);
}

#[test]
fn publishing_and_receiving_through_the_c_abi_allocate_nothing() {
    for kind in [
        SALIAS_FIFO_MPSC,
        SALIAS_FIFO_FANOUT,
        SALIAS_ORDERED_MPSC,
        SALIAS_ORDERED_FANOUT,
    ] {
        hot_paths(kind);
    }
}
