//! The write floor: one process, on the publisher's core, writing a run's frames into a
//! mapping of the ring's size, with no subscriber, no commit protocol and no room check.
//! What one core writes alone at that ring size and frame length, measured in the same
//! rounds as salias: a reference for how near a publisher, which stores the same bytes
//! into lines it must own again a lap later, comes to the machine's write rate. It is not
//! a strict bound: its rate is timed at the writer and salias's at its subscriber, and
//! salias's 1 KiB frames have run at 1.01–1.04× of it.
//!
//! Its stores are salias's: a header of two words (the sequence where salias writes its
//! commit word, the length), the message copied in after it, frames back to back at the
//! frame length salias gives the message, and ownership of the lines asked for 2 KiB
//! ahead for every 512-byte block a frame enters (`src/publisher/write.rs`; a lone writer
//! into a 64 MiB buffer ran 1.2× as fast with that prefetch as without). Two differences:
//! salias asks for at most the last six blocks of a publish (the floor for every block, up
//! to nine for a 4 KiB frame), and a frame that would cross the end of the mapping starts
//! the next lap at 0, where salias writes on through its ring's second view.

use support::barrier::Barrier;
use support::clock::now_ns;
use support::role::report_json;
use support::shm::ShmFile;
use support::throughput::Finished;

use crate::msg64::Msg64;
use crate::setup::{Kind, Setup};

const PREFETCH_AHEAD: usize = 2048;
const PREFETCH_BLOCK: usize = 512;
const LINE: usize = 64;

/// salias's FIFO frame header: the commit word and the length word.
const HEADER: usize = 16;

/// The mapping of run `name`'s write floor.
fn mapping_name(name: &str) -> String {
    format!("{name}.write-floor")
}

/// Bytes salias's FIFO frame of a `size`-byte message occupies: the header, the message,
/// rounded up to 8 (`create` checks it against a typed channel's frame length; for raw
/// frames it is argued, not checked: `Bytes` aligns to 1, so salias rounds to its
/// minimum frame alignment of 8, `src/wire/frame.rs`).
pub fn frame_len(size: usize) -> usize {
    (HEADER + size).next_multiple_of(8)
}

/// The parent creates the run's mapping, as it creates a channel. It first checks
/// `frame_len` against the frame length salias reports for `Msg64`, so the floor cannot
/// drift from the frames it stands for.
pub fn create(name: &str, setup: &Setup) -> Result<ShmFile, Box<dyn std::error::Error>> {
    let shape = format!("{name}-shape");
    let _typed = salias::FifoMpsc::<Msg64>::create(&salias::Config::new(&shape).capacity(64 << 10))?;
    let salias_frame = salias::status::channel_status(&shape)?.frame_len();
    if salias_frame != Some(frame_len(size_of::<Msg64>())) {
        return Err(format!(
            "the write floor's frame of Msg64 is {} bytes, salias's {salias_frame:?}",
            frame_len(size_of::<Msg64>())
        )
        .into());
    }
    Ok(ShmFile::create(&mapping_name(name), setup.ring)?)
}

/// The floor's child: writes `setup.messages` frames from the start barrier on, and
/// reports as a publisher.
pub fn run(name: &str, setup: &Setup) {
    assert_eq!(setup.kind, Kind::WriteFloor);
    let file = ShmFile::open(&mapping_name(name)).unwrap_or_else(|e| panic!("{e}"));
    let ring = file.len();
    let frame = frame_len(setup.size);
    assert!(
        ring.is_power_of_two() && ring >= PREFETCH_BLOCK.max(frame),
        "ring of {ring} bytes for frames of {frame}"
    );
    let base = file.as_ptr();
    // Opaque to the optimiser, so each frame is a copy from memory, as a publisher's is,
    // never a fill of a known byte.
    let message = std::hint::black_box(vec![0x5au8; setup.size]);
    // Every page touched before the clock starts, as a channel's are by its creator.
    // SAFETY: `base` maps `ring` bytes this process alone writes.
    unsafe { std::ptr::write_bytes(base, 0, ring) };
    let barrier = Barrier::open(name).unwrap_or_else(|e| panic!("{e}"));
    barrier.arrive_and_wait();
    let started = now_ns();
    let mut pos = 0usize;
    for seq in 0..setup.messages {
        let end = pos + frame;
        // Every block the frame enters, as many lines ahead.
        for block in pos / PREFETCH_BLOCK + 1..=end / PREFETCH_BLOCK {
            let ahead = block * PREFETCH_BLOCK + PREFETCH_AHEAD;
            for line in (ahead..ahead + PREFETCH_BLOCK).step_by(LINE) {
                support::prefetch::for_write(base.wrapping_add(line & (ring - 1)));
            }
        }
        // A frame that would cross the end starts the next lap at 0 (module doc).
        if end > ring {
            pos = 0;
        }
        // SAFETY: pos + frame <= ring (just above, and frame <= ring, asserted), so every
        // store lands inside the mapping; `pos` is a multiple of 8 and the mapping page
        // aligned, so the header words are aligned.
        unsafe {
            let at = base.add(pos);
            at.cast::<u64>().write(seq);
            at.add(8).cast::<u64>().write(setup.size as u64);
            std::ptr::copy_nonoverlapping(message.as_ptr(), at.add(HEADER), setup.size);
        }
        pos += frame;
    }
    let elapsed_ns = now_ns() - started;
    report_json(&Finished::Publisher {
        elapsed_ns,
        attempts: setup.messages,
        refused: 0,
    });
}
