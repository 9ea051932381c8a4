//! The command line, and how much each scale runs.

use clap::{Parser, ValueEnum};

/// salias cross-process throughput and latency, by doc/benchmarking.md: every publisher and
/// subscriber a separate pinned process, variants alternating round by round, raw data
/// as JSON lines in target/bench-results/ipc-<unix time>.jsonl.
#[derive(Parser, Debug)]
#[command(name = "ipc")]
pub struct Cli {
    /// 1 MiB rings only, 3 rounds, 2M messages per publisher (about a minute).
    #[arg(long, conflicts_with = "smoke")]
    pub quick: bool,

    /// A tiny run that completes in seconds, to check the harness and its records; its
    /// figures mean nothing.
    #[arg(long)]
    pub smoke: bool,

    /// Run one section only.
    #[arg(long, value_enum)]
    pub only: Option<Section>,

    /// The salias ping-pong's message, in bytes: 64 sends the typed 64-byte message of
    /// every other section; any other size a raw message of that many bytes, to see what
    /// the frame's lines cost (a frame is a 16-byte header and the message, so a 48-byte
    /// message's frame is one cache line and a 64-byte message's two). The floors are
    /// unchanged.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(8..=4096))]
    pub pingpong_bytes: u32,

    /// Passed by `cargo bench`; changes nothing.
    #[arg(long, hide = true)]
    pub bench: bool,
}

/// A part of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Section {
    /// 64-byte messages over every kind, shape, batch and ring size.
    Throughput,
    /// FifoMpsc 1P1S single and batch-16 offers at 1, 4 and 64 MiB rings, at any scale,
    /// and at 4 and 64 MiB again on 2 MiB huge pages where the machine has them (only when
    /// asked for).
    Rings,
    /// FifoMpsc, OrderedMpsc and OrderedFanout 1P1S single and batch-16 offers at a 1 MiB
    /// ring, at any scale (only when asked for).
    Order,
    /// FifoMpsc and OrderedMpsc 1P1S single and batch-16 offers at a 1 MiB ring, each
    /// received by a `drain` loop and by `recv_batch` with `wait::Batching` (only when asked
    /// for).
    Receive,
    /// Raw frames of 8 B to 4 KiB, FifoMpsc 1P1S, 4 MiB ring.
    Sizes,
    /// 4 and 8 publishers into 64 KiB rings (more processes than cores).
    Stress,
    /// FifoFanout 1P: a tethered subscriber alone, with a sleeping lossy one beside it,
    /// with a lossy or a tethered history joiner beside it, and a lossy one alone, keeping up.
    Lossy,
    /// Ping-pong round trip / 2, next to the cache-line floor between the same cores.
    Latency,
}

/// How much a run measures.
#[derive(Clone, Debug)]
pub struct Scale {
    /// What the flags were called, for the raw data.
    pub name: &'static str,
    /// Rounds of every variant.
    pub rounds: usize,
    /// Messages per publisher of a throughput run, at least (`min_laps`; the other
    /// sections derive theirs).
    pub messages: u64,
    /// The fewest laps of its ring a 64-byte throughput run that does not oversubscribe
    /// the cores moves: max(`messages`, `min_laps` × ring / 64) messages. 10M messages lap
    /// a 64 MiB ring 9.5 times, and 5× as many ran the write floor there 1.10× and salias
    /// 1.015–1.06× (doc/performance-notes.md, "How far a subscriber runs behind").
    pub min_laps: u64,
    /// Ring sizes of the throughput section.
    pub rings: &'static [usize],
    /// Recorded round trips per ping-pong run.
    pub pings: u64,
    /// Ring sizes at which FifoMpsc 1P1S runs again on 2 MiB huge pages: those this
    /// machine could create such a channel of when the benchmark started
    /// (`huge_pages::usable`); empty where it has no hugetlbfs mount with free pages.
    pub huge_page_rings: Vec<usize>,
}

impl Cli {
    /// Whether `section` runs. `rings` only when asked for: a full run's throughput
    /// section already holds its setups.
    pub fn runs(&self, section: Section) -> bool {
        match self.only {
            None => !matches!(section, Section::Rings | Section::Order | Section::Receive),
            Some(only) => only == section,
        }
    }

    /// The scale the flags ask for.
    pub fn scale(&self) -> Scale {
        if self.smoke {
            Scale {
                name: "smoke",
                rounds: 2,
                messages: 20_000,
                min_laps: 0,
                rings: &[1 << 20],
                pings: 2_000,
                huge_page_rings: Vec::new(),
            }
        } else if self.quick {
            Scale {
                name: "quick",
                rounds: 3,
                messages: 2_000_000,
                min_laps: 50,
                rings: &[1 << 20],
                pings: 200_000,
                huge_page_rings: Vec::new(),
            }
        } else {
            Scale {
                name: "full",
                rounds: 5,
                messages: 10_000_000,
                min_laps: 50,
                rings: &[1 << 20, 4 << 20, 64 << 20],
                pings: 200_000,
                huge_page_rings: Vec::new(),
            }
        }
    }
}
