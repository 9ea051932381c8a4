//! The control block as this process sees it: every reference formed into it is formed
//! here, and only to its atomics-only parts (the header's state and owner words, the hot
//! words, the slot tables and the cursors). Its plain fields (`ChannelInfo`) are bytes any
//! peer may write, so they are never referenced in place: they are copied out with one
//! volatile read and validated (`region::header`).

use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;

use super::layout::{
    ChannelInfo, ControlLayout, Cursor, HOT_OFFSET, Header, Holder, Hot, PublisherSlot, SubscriberSlot,
};

/// The header of a control object known only to be long enough to hold one: what is at a
/// name before anything about it is trusted, and what its creator fills in.
#[derive(Clone, Copy)]
pub(crate) struct HeaderView<'m> {
    header: NonNull<Header>,
    _mapping: PhantomData<&'m Header>,
}

impl<'m> HeaderView<'m> {
    /// The header mapped at `base`.
    ///
    /// # Safety
    /// `base` must be page-aligned and start a mapping of at least `size_of::<Header>()`
    /// bytes that stays mapped for `'m`.
    pub(crate) unsafe fn new(base: NonNull<u8>) -> Self {
        HeaderView {
            header: base.cast(),
            _mapping: PhantomData,
        }
    }

    /// The state word (SYNC POINT header-ready: the creator stores READY with Release
    /// after writing the info; a reader loads it with Acquire before copying the info).
    pub(crate) fn state(self) -> &'m AtomicU32 {
        // SAFETY: the mapping holds a `Header` (`new`); the place projection through the
        // raw pointer references only the atomic field, never the header itself.
        unsafe { &(*self.header.as_ptr()).state }
    }

    /// The owner's holder word.
    pub(crate) fn owner(self) -> &'m Holder {
        // SAFETY: as for `state`; `Holder` holds only an atomic.
        unsafe { &(*self.header.as_ptr()).owner }
    }

    /// A copy of the channel's description: plain bytes any peer may be writing, read
    /// with one volatile copy and never referenced in place; every use validates it first.
    pub(crate) fn copy_info(self) -> ChannelInfo {
        let info = self
            .header
            .as_ptr()
            .wrapping_byte_add(std::mem::offset_of!(Header, info));
        // SAFETY: inside the mapped `Header` (`new`), aligned as the header is; a raw read,
        // as no reference to bytes a peer may write may exist.
        unsafe { info.cast::<ChannelInfo>().read_volatile() }
    }

    /// Writes the channel's description.
    ///
    /// # Safety
    /// Only the creator, before it stores READY: another process may already have mapped
    /// the block to inspect it and may copy a torn description, which it validates, but no
    /// one else writes it.
    pub(crate) unsafe fn write_info(self, info: ChannelInfo) {
        let place = self
            .header
            .as_ptr()
            .wrapping_byte_add(std::mem::offset_of!(Header, info));
        // SAFETY: inside the mapped `Header` (`new`); a raw write, as no reference to the
        // bytes may exist; the caller is the one writer.
        unsafe { place.cast::<ChannelInfo>().write_volatile(info) }
    }
}

/// A validated control block: its base and the geometry its tables were checked against.
pub(crate) struct ControlBlock {
    base: NonNull<u8>,
    layout: ControlLayout,
    /// Publisher slots (and rings).
    pub publishers: u32,
    /// Subscriber slots.
    pub subscribers: u32,
}

// SAFETY: the block is an address into a mapping its holder keeps alive (`new`'s contract);
// every method forms a reference to atomics only, which any thread may use, as a peer
// process does.
unsafe impl Send for ControlBlock {}
// SAFETY: as above.
unsafe impl Sync for ControlBlock {}

impl ControlBlock {
    /// The control block mapped at `base`.
    ///
    /// # Safety
    /// `base` must be page-aligned and start a mapping of at least `layout.len` bytes that
    /// stays mapped as long as the block (and every reference it hands out) is used, and
    /// `layout` must be `ControlLayout::new(publishers, subscribers)` of a geometry checked
    /// against that mapping's length.
    pub(crate) unsafe fn new(base: NonNull<u8>, layout: ControlLayout, publishers: u32, subscribers: u32) -> Self {
        ControlBlock {
            base,
            layout,
            publishers,
            subscribers,
        }
    }

    /// Bytes the block spans.
    pub(crate) fn len(&self) -> usize {
        self.layout.len
    }

    fn at<T>(&self, offset: usize) -> *const T {
        self.base.as_ptr().wrapping_add(offset).cast()
    }

    /// The header, for as long as `self` is borrowed.
    pub(crate) fn header(&self) -> HeaderView<'_> {
        // SAFETY: the block's mapping holds its layout, which begins with a `Header`, and
        // outlives the block (`new`).
        unsafe { HeaderView::new(self.base) }
    }

    /// The header's state word (SYNC POINT header-ready).
    pub(crate) fn header_state(&self) -> &AtomicU32 {
        self.header().state()
    }

    /// The owner's holder word in the header.
    pub(crate) fn owner(&self) -> &Holder {
        self.header().owner()
    }

    /// The words every participant writes, each on its own cache line.
    pub(crate) fn hot(&self) -> &Hot {
        // SAFETY: `Hot` sits at HOT_OFFSET (128-aligned) inside the mapping and holds only
        // atomics.
        unsafe { &*self.at::<Hot>(HOT_OFFSET) }
    }

    /// Publisher slot `index`.
    pub(crate) fn publisher_slot(&self, index: usize) -> &PublisherSlot {
        assert!(index < self.publishers as usize);
        let table = self.at::<PublisherSlot>(self.layout.publishers_offset);
        // SAFETY: `index` is in range; the publisher table lies inside the mapping at a
        // 128-aligned offset (`new`: the layout was checked against it) and holds only
        // atomics.
        unsafe { &*table.wrapping_add(index) }
    }

    /// Subscriber slot `index`.
    pub(crate) fn subscriber_slot(&self, index: usize) -> &SubscriberSlot {
        assert!(index < self.subscribers as usize);
        let table = self.at::<SubscriberSlot>(self.layout.subscribers_offset);
        // SAFETY: as for `publisher_slot`, for the subscriber table.
        unsafe { &*table.wrapping_add(index) }
    }

    /// Subscriber `subscriber`'s read position in ring `publisher`.
    pub(crate) fn cursor(&self, subscriber: usize, publisher: usize) -> &Cursor {
        assert!(subscriber < self.subscribers as usize && publisher < self.publishers as usize);
        let index = subscriber * self.publishers as usize + publisher;
        let table = self.at::<Cursor>(self.layout.cursors_offset);
        // SAFETY: `index` < S·P, the size of the cursor table inside the mapping; a cursor
        // is an atomic.
        unsafe { &*table.wrapping_add(index) }
    }
}
