//! The slots the latency floors ([`crate::floor`], [`crate::message_floor`]) go round:
//! trip `i` of a floor runs on slot `i % SLOTS`.
//!
//! What moving one cache line between two cores costs depends on the line: on the
//! development host (Intel, 2 vCPU guest) 48 lines of one buffer took 102.5 to 173.5 ns one
//! way between the same two cores in one invocation, 96 to 132 ns in another, each line
//! within 3.5 ns of itself when measured again (the host keeps each line at a place chosen
//! by its physical address; a reading, the VM has no counters). A floor on one line was
//! therefore decided by the page its run was given: from one round to the next the
//! comparison's floor moved between 106 and 166 ns, and salias's ratio to it between 1.01×
//! and 1.99×. Going round 64 lines at 64 offsets on 16 pages, a floor measures a line at a
//! typical place, as a ring of messages, which moves along thousands of lines, pays for it.
//!
//! Sixteen pages, not 64: a floor going round 64 pages read 108–124 ns from one buffer to
//! the next where 16 or 4 pages read 105–109 (the first-level TLB, a reading), a cost a
//! ring, which stays on a page for dozens of messages, does not pay.
//!
//! # Layout
//! [`SPREAD_LINES`] cache lines, page aligned. Slot `k` starts on page `k / 4` at line
//! `(k % 4) * 16 + k / 4` of it, so the 64 slots start at 64 different offsets and four
//! slots of one page lie 16 lines apart. A slot is [`SLOT_LINES`] lines: the first carries
//! the cache-line floor's two words and the message floor's ping, the third the message
//! floor's pong (not the second: two lines of one 128-byte pair are fetched together by
//! the cache's spatial prefetcher).

use std::sync::atomic::AtomicU64;

/// Eight words on one cache line of their own.
#[repr(C, align(64))]
#[derive(Default)]
pub struct CacheLine(pub [AtomicU64; 8]);

/// Slots a floor goes round, one trip each in turn (a power of two).
pub const SLOTS: usize = 64;
/// Slots that start on one page.
const SLOTS_PER_PAGE: usize = 4;
/// Lines between two slots of one page.
const SLOT_SPACING: usize = 16;
/// Cache lines in a page.
const PAGE_LINES: usize = 4096 / 64;
/// Lines of one slot.
pub const SLOT_LINES: usize = 3;
/// Lines the slots take, from the first slot's first line to the last slot's last.
pub const SPREAD_LINES: usize = first_line(SLOTS - 1) + SLOT_LINES;
const _: () = assert!(SLOTS.is_power_of_two() && SLOTS <= PAGE_LINES * SLOTS_PER_PAGE);
const _: () =
    assert!(SLOT_LINES <= SLOT_SPACING && (SLOTS_PER_PAGE - 1) * SLOT_SPACING + SLOTS / SLOTS_PER_PAGE <= PAGE_LINES);

/// Slot `slot`'s first line.
const fn first_line(slot: usize) -> usize {
    let page = slot / SLOTS_PER_PAGE;
    page * PAGE_LINES + (slot % SLOTS_PER_PAGE) * SLOT_SPACING + page
}

/// The lines the slots are made of, page aligned.
#[repr(C, align(4096))]
pub struct SpreadLines(pub [CacheLine; SPREAD_LINES]);

/// The slots a floor's trips go round.
#[derive(Clone, Copy)]
pub struct Slots<'a>(&'a SpreadLines);

impl<'a> Slots<'a> {
    /// The slots in `lines`.
    pub fn new(lines: &'a SpreadLines) -> Slots<'a> {
        Slots(lines)
    }

    /// Trip `trip`'s slot.
    #[inline(always)]
    pub fn slot(self, trip: u64) -> &'a [CacheLine; SLOT_LINES] {
        let at = first_line(trip as usize % SLOTS);
        self.0.0[at..at + SLOT_LINES]
            .try_into()
            .expect("a slot lies inside the lines")
    }
}

/// Slots in this process's memory, for floors between two threads.
pub struct OwnedSlots(Box<SpreadLines>);

impl OwnedSlots {
    /// Zeroed slots.
    pub fn new() -> OwnedSlots {
        OwnedSlots(Box::new(SpreadLines(std::array::from_fn(|_| CacheLine::default()))))
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
    let lines = OwnedSlots::new();
    std::thread::scope(|scope| {
        scope.spawn(|| pong(lines.slots(), count));
        round_trips(lines.slots(), 0, count);
    });
    let last = (0..SLOTS as u64)
        .map(|slot| {
            (1..=count)
                .rev()
                .find(|trip| trip % SLOTS as u64 == slot)
                .expect("count reaches every slot")
        })
        .collect();
    (lines, last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slots_start_at_64_offsets_on_16_pages_and_never_overlap() {
        let lines = OwnedSlots::new();
        let slots = lines.slots();
        let base = slots.slot(0).as_ptr() as usize;
        assert_eq!(base % 4096, 0, "the lines are page aligned");
        let starts: Vec<usize> = (0..SLOTS as u64)
            .map(|slot| slots.slot(slot).as_ptr() as usize - base)
            .collect();
        let mut pages: Vec<usize> = starts.iter().map(|start| start / 4096).collect();
        let mut offsets: Vec<usize> = starts.iter().map(|start| start % 4096).collect();
        pages.sort_unstable();
        pages.dedup();
        offsets.sort_unstable();
        offsets.dedup();
        assert_eq!((pages.len(), offsets.len()), (SLOTS / SLOTS_PER_PAGE, SLOTS));
        let mut sorted = starts.clone();
        sorted.sort_unstable();
        for pair in sorted.windows(2) {
            assert!(
                pair[1] - pair[0] >= SLOT_LINES * 64,
                "slots at {} and {} overlap",
                pair[0],
                pair[1]
            );
        }
        assert_eq!(
            slots.slot(SLOTS as u64).as_ptr(),
            slots.slot(0).as_ptr(),
            "trip SLOTS goes back to the first slot"
        );
    }
}
