//! Order id → pool slot, in a table allocated once.
//!
//! Open addressing with linear probing, at most half full (its size is a power of two at
//! least twice the pool's), so a lookup probes a couple of entries on average and the
//! table never grows. Removal shifts later entries of the same run back instead of leaving
//! tombstones, so a long add/cancel workload does not degrade it.

use crate::pool::NIL;
use crate::types::OrderId;

#[derive(Clone, Copy)]
struct Entry {
    id: OrderId,
    slot: u32,
}

const VACANT: Entry = Entry { id: 0, slot: NIL };

/// Consecutive ids land in groups of this many neighbouring entries (two 64-byte lines).
const GROUP_BITS: u32 = 3;
const GROUP: usize = 1 << GROUP_BITS;

pub(crate) struct OrderIndex {
    entries: Vec<Entry>,
    mask: usize,
    shift: u32,
}

impl OrderIndex {
    /// A table for up to `max_live` ids at once.
    pub(crate) fn with_capacity(max_live: u32) -> OrderIndex {
        let size = (max_live as usize * 2).next_power_of_two().max(2 * GROUP);
        OrderIndex {
            entries: vec![VACANT; size],
            mask: size - 1,
            // The multiply's top bits, as many as there are groups.
            shift: 64 - (size / GROUP).trailing_zeros(),
        }
    }

    /// Fibonacci hashing of the id without its low bits, which then pick the entry within
    /// a group of `GROUP` neighbours: the multiply scatters groups over the table, and ids
    /// that are consecutive (what a gateway hands out) share cache lines, so a new id's
    /// duplicate check usually finds its line already cached by its predecessor's insert.
    fn home(&self, id: OrderId) -> usize {
        let group = (id >> GROUP_BITS).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift;
        ((group << GROUP_BITS) as usize | (id as usize & (GROUP - 1))) & self.mask
    }

    /// Where `id`'s entry is: its run starts at its home position and ends at a vacant
    /// entry.
    fn position(&self, id: OrderId) -> Option<usize> {
        let mut position = self.home(id);
        loop {
            let entry = self.entries[position];
            if entry.slot == NIL {
                return None;
            }
            if entry.id == id {
                return Some(position);
            }
            position = (position + 1) & self.mask;
        }
    }

    pub(crate) fn get(&self, id: OrderId) -> Option<u32> {
        self.position(id).map(|position| self.entries[position].slot)
    }

    /// Inserts an id known to be absent. The engine never holds more ids than the pool has
    /// slots, so a vacant entry always exists.
    pub(crate) fn insert(&mut self, id: OrderId, slot: u32) {
        debug_assert!(self.get(id).is_none());
        let mut position = self.home(id);
        while self.entries[position].slot != NIL {
            position = (position + 1) & self.mask;
        }
        self.entries[position] = Entry { id, slot };
    }

    /// Removes an id and returns the slot it pointed at.
    pub(crate) fn remove(&mut self, id: OrderId) -> Option<u32> {
        let position = self.position(id)?;
        let removed = self.entries[position].slot;
        // Backward-shift deletion: move each later entry of the run into the hole unless
        // the hole lies before its home position (cyclically), where a lookup would not
        // look for it.
        let mut hole = position;
        let mut next = (hole + 1) & self.mask;
        loop {
            let entry = self.entries[next];
            if entry.slot == NIL {
                break;
            }
            let home = self.home(entry.id);
            let distance_from_home = next.wrapping_sub(home) & self.mask;
            let distance_from_hole = next.wrapping_sub(hole) & self.mask;
            if distance_from_home >= distance_from_hole {
                self.entries[hole] = entry;
                hole = next;
            }
            next = (next + 1) & self.mask;
        }
        self.entries[hole] = VACANT;
        Some(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn agrees_with_a_hashmap_through_heavy_churn() {
        let mut index = OrderIndex::with_capacity(64);
        let mut model: HashMap<OrderId, u32> = HashMap::new();
        let mut state = 7_u64;
        for step in 0..200_000_u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // A small id space forces collisions, long runs and wrap-around.
            let id = state % 200 * 64;
            match model.get(&id) {
                Some(&slot) => {
                    assert_eq!(index.get(id), Some(slot));
                    assert_eq!(index.remove(id), Some(slot));
                    model.remove(&id);
                }
                None if model.len() < 64 => {
                    assert_eq!(index.get(id), None);
                    index.insert(id, step);
                    model.insert(id, step);
                }
                None => assert_eq!(index.remove(id), None),
            }
        }
        for (id, slot) in model {
            assert_eq!(index.get(id), Some(slot));
        }
    }

    /// How far each entry sits from its home position: the probes a lookup of it costs.
    fn longest_displacement(index: &OrderIndex) -> usize {
        (0..index.entries.len())
            .filter(|&position| index.entries[position].slot != NIL)
            .map(|position| position.wrapping_sub(index.home(index.entries[position].id)) & index.mask)
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn common_id_patterns_keep_probe_runs_short_at_full_load() {
        let live = 1 << 14;
        type IdOf = fn(u64) -> OrderId;
        let patterns: [(&str, IdOf); 4] = [
            ("sequential", |i| i + 1),
            ("four gateways, gateway in the high bits", |i| ((i % 4) << 32) | (i / 4)),
            ("strided by 64", |i| i * 64),
            ("scattered", |i| i.wrapping_mul(0x2545_F491_4F6C_DD1D)),
        ];
        for (name, id_of) in patterns {
            let mut index = OrderIndex::with_capacity(live as u32);
            for i in 0..live {
                index.insert(id_of(i), i as u32);
            }
            let longest = longest_displacement(&index);
            assert!(longest < 64, "{name}: an entry sits {longest} probes from home");
            for i in 0..live {
                assert_eq!(index.get(id_of(i)), Some(i as u32), "{name}");
            }
        }
    }
}
