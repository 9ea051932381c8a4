//! The slots the latency floors ([`crate::floor`], [`crate::message_floor`]) go round:
//! trip `i` of a floor runs on slot `i % SLOTS`, so that a floor measures a line at a
//! typical place rather than whichever line its run was given. On the development host
//! one line cost 96 to 173.5 ns one way between the same two cores depending on which line
//! it was; slots on 64 pages paid for the TLB now and then, which a ring does not, so the
//! slots sit on 16 (doc/benchmarking.md, "The floors", has the measurements).
//!
//! # Layout
//! [`SlotPages`]: 16 pages, page aligned. Slot `k` starts on page `k / 4` at line
//! `(k % 4) * 16 + k / 4`, so the 64 slots start at 64 different offsets and the four of
//! a page lie 16 lines apart. A slot has two lines: its first carries the cache-line
//! floor's two words and the message floor's ping; the line two on, in the same page
//! (counting round from its end), the message floor's pong. Not the next line: two lines
//! of one 128-byte pair are fetched together by the cache's spatial prefetcher.

use std::sync::atomic::AtomicU64;

/// Eight words on one cache line of their own.
#[repr(C, align(64))]
#[derive(Default)]
pub struct CacheLine(pub [AtomicU64; 8]);

/// Slots a floor goes round, one trip each in turn (a power of two).
pub const SLOTS: usize = 64;
/// Slots that start on one page.
const SLOTS_PER_PAGE: usize = 4;
/// Pages the slots are on.
const PAGES: usize = SLOTS / SLOTS_PER_PAGE;
/// Lines between the starts of two slots of one page.
const SLOT_SPACING: usize = 16;
/// Lines from a slot's first line to its second.
const SECOND_LINE: usize = 2;
/// Cache lines in a page.
const PAGE_LINES: usize = 4096 / 64;
// Every slot starts at an offset of its own (the page number is added to the spacing), and
// the slots of a page never share a line.
const _: () = assert!(SLOTS.is_power_of_two() && SLOTS.is_multiple_of(SLOTS_PER_PAGE));
const _: () = assert!(SLOTS_PER_PAGE * SLOT_SPACING == PAGE_LINES && PAGES <= SLOT_SPACING);
const _: () = assert!(SECOND_LINE < SLOT_SPACING && SECOND_LINE > 1);

/// The pages the slots are on, page aligned.
#[repr(C, align(4096))]
pub struct SlotPages(pub [[CacheLine; PAGE_LINES]; PAGES]);

/// The slots a floor's trips go round.
#[derive(Clone, Copy)]
pub struct Slots<'a>(&'a SlotPages);

impl<'a> Slots<'a> {
    /// The slots in `pages`.
    pub fn new(pages: &'a SlotPages) -> Slots<'a> {
        Slots(pages)
    }

    /// Trip `trip`'s slot: its first line and its second.
    #[inline(always)]
    pub fn slot(self, trip: u64) -> [&'a CacheLine; 2] {
        let slot = trip as usize % SLOTS;
        let page_index = slot / SLOTS_PER_PAGE;
        let first = (slot % SLOTS_PER_PAGE) * SLOT_SPACING + page_index;
        let page = &self.0.0[page_index];
        [&page[first], &page[(first + SECOND_LINE) % PAGE_LINES]]
    }
}

/// Slots in this process's memory, for floors between two threads.
pub struct OwnedSlots(Box<SlotPages>);

impl OwnedSlots {
    /// Zeroed slots.
    pub fn new() -> OwnedSlots {
        OwnedSlots(Box::new(SlotPages(std::array::from_fn(|_| {
            std::array::from_fn(|_| CacheLine::default())
        }))))
    }

    /// Its slots.
    pub fn slots(&self) -> Slots<'_> {
        Slots::new(&self.0)
    }
}

impl Default for OwnedSlots {
    fn default() -> Self {
        OwnedSlots::new()
    }
}

/// Runs `count` trips of a floor (its pinger `round_trips` and ponger `pong`) on fresh slots
/// in two threads and hands back the slots and, for each slot, the last trip that ran on
/// it: for tests that read what the trips left behind.
#[cfg(test)]
pub(crate) fn after_trips(
    count: u64,
    round_trips: fn(Slots<'_>, u64, u64) -> Vec<u64>,
    pong: fn(Slots<'_>, u64),
) -> (OwnedSlots, Vec<u64>) {
    let owned = OwnedSlots::new();
    std::thread::scope(|scope| {
        scope.spawn(|| pong(owned.slots(), count));
        round_trips(owned.slots(), 0, count);
    });
    let last = (0..SLOTS as u64)
        .map(|slot| {
            (1..=count)
                .rev()
                .find(|trip| trip % SLOTS as u64 == slot)
                .expect("count reaches every slot")
        })
        .collect();
    (owned, last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slots_start_at_64_offsets_on_16_pages_and_never_share_a_line() {
        let owned = OwnedSlots::new();
        let slots = owned.slots();
        let base = owned.0.as_ref() as *const SlotPages as usize;
        assert_eq!(base % 4096, 0, "the pages are page aligned");
        let line_of = |line: &CacheLine| (line as *const CacheLine as usize - base) / 64;
        let firsts: Vec<usize> = (0..SLOTS as u64).map(|slot| line_of(slots.slot(slot)[0])).collect();
        let mut pages: Vec<usize> = firsts.iter().map(|line| line / PAGE_LINES).collect();
        let mut offsets: Vec<usize> = firsts.iter().map(|line| line % PAGE_LINES).collect();
        pages.sort_unstable();
        pages.dedup();
        offsets.sort_unstable();
        offsets.dedup();
        assert_eq!((pages.len(), offsets.len()), (PAGES, SLOTS));
        let mut used: Vec<usize> = (0..SLOTS as u64)
            .flat_map(|slot| {
                let [first, second] = slots.slot(slot);
                assert_eq!(
                    line_of(first) / PAGE_LINES,
                    line_of(second) / PAGE_LINES,
                    "slot {slot} spans two pages"
                );
                assert_ne!(
                    line_of(first) / 2,
                    line_of(second) / 2,
                    "slot {slot} is one 128-byte pair"
                );
                // The line between is the slot's too: nothing else may use it.
                [line_of(first), line_of(first) + 1, line_of(second)]
            })
            .collect();
        used.sort_unstable();
        let all = used.len();
        used.dedup();
        assert_eq!(used.len(), all, "two slots share a line");
        assert_eq!(
            slots.slot(SLOTS as u64)[0] as *const CacheLine,
            slots.slot(0)[0] as *const CacheLine
        );
    }
}
