//! Joining with history: walking a ring back from its tail, frame by frame, and trusting
//! only what its publisher cannot have overwritten meanwhile.
//!
//! A frame's commit word is its position XOR a key, so a word of another lap, or of a
//! frame being overwritten, names another position and matches nothing; a frame's length
//! says where it ends. The frame before a boundary is found by the caller
//! (`subscriber/history.rs` reads the ring; the loom model its own frames); this is the
//! walk and what makes its result safe to start from.

use super::Word;
use super::overrun::overwritten;

/// Walks back from `head` (a frame boundary, the ring's tail) to no lower than `floor`:
/// `frame_before(end, lowest)` gives the frame ending at `end` that starts no lower than
/// `lowest`, as `(position, sequence)`. At most `limit` frames (without one, all the ring
/// holds), oldest first, each one the publisher had not overwritten when the walk ended.
/// A tethered subscriber's `floor` is its cursor, which the publisher does not pass; a
/// lossy one's is 0, and the frontier alone bounds the walk.
pub fn walk_back<W: Word>(
    frontier: &W,
    capacity: u64,
    head: u64,
    floor: u64,
    limit: Option<u64>,
    mut frame_before: impl FnMut(u64, u64) -> Option<(u64, u64)>,
) -> Vec<(u64, u64)> {
    // Below this the publisher may already be writing its next lap. Relaxed: the bound
    // only saves looking at frames the check below would drop anyway.
    let lowest = frontier
        .load(std::sync::atomic::Ordering::Relaxed)
        .saturating_sub(capacity)
        .max(floor);
    let mut frames = Vec::new();
    let mut boundary = head;
    while boundary > 0 && limit.is_none_or(|limit| (frames.len() as u64) < limit) {
        let Some((at, sequence)) = frame_before(boundary, lowest) else {
            break;
        };
        frames.push((at, sequence));
        boundary = at;
    }
    frames.reverse();
    // SYNC POINT overwrite-frontier (subscriber side, in `overwritten`): the walk's reads
    // come before its fence, so a frame whose position it clears was read as committed in
    // this lap. Positions only grow, so once one is clear, every later one is.
    let overwritten = frames
        .iter()
        .take_while(|&&(at, _)| overwritten(frontier, at, capacity))
        .count();
    frames.drain(..overwritten);
    frames
}
