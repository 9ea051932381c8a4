//! What one throughput run is: the channel kind and the setup, which the parent hands
//! each role as its parameters.

use serde::{Deserialize, Serialize};
use support::records::{Api, Receive, ThroughputBench};

/// The salias channel kind of a run; `RawFifoMpsc` carries raw frames (`Bytes`), the
/// others `Msg64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    RawFifoMpsc,
    FifoMpsc,
    FifoFanout,
    OrderedMpsc,
    OrderedFanout,
    /// No channel: the write floor (`write_floor.rs`), one process writing the run's
    /// frames with nobody reading them.
    WriteFloor,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::RawFifoMpsc => "RawFifoMpsc",
            Kind::FifoMpsc => "FifoMpsc",
            Kind::FifoFanout => "FifoFanout",
            Kind::OrderedMpsc => "OrderedMpsc",
            Kind::OrderedFanout => "OrderedFanout",
            Kind::WriteFloor => "WriteFloor",
        }
    }

    /// Whether it has one subscriber only.
    pub fn is_mpsc(self) -> bool {
        matches!(self, Kind::RawFifoMpsc | Kind::FifoMpsc | Kind::OrderedMpsc)
    }
}

/// What a refused publisher, or a subscriber that found nothing, does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Backoff {
    /// Spins: the process has a core of its own.
    Spin,
    /// Yields its core: processes outnumber the cores, and spinning through the rest of
    /// a time slice would only keep the one that could make progress off it.
    Yield,
}

impl Backoff {
    pub fn back_off(self) {
        match self {
            Backoff::Spin => std::hint::spin_loop(),
            Backoff::Yield => std::thread::yield_now(),
        }
    }
}

/// One throughput configuration.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Setup {
    pub bench: ThroughputBench,
    pub kind: Kind,
    pub publishers: u32,
    pub subscribers: u32,
    pub ring: usize,
    pub batch: usize,
    pub messages: u64,
    /// Payload bytes: the raw frames' size, or 64 for `Msg64`.
    pub size: usize,
    pub backoff: Backoff,
    /// How the subscribers receive (raw ones always drain).
    pub receive: Receive,
    /// Rings on 2 MiB huge pages (`Config::huge_pages`) instead of normal pages.
    pub huge_pages: bool,
}

impl Setup {
    /// A caption for people: `FifoMpsc 1P1S ring 1 MiB offer`.
    pub fn label(&self) -> String {
        let size = if matches!(self.kind, Kind::RawFifoMpsc | Kind::WriteFloor) {
            format!(" {} B", self.size)
        } else {
            String::new()
        };
        let ring = if self.ring >= 1 << 20 {
            format!("{} MiB", self.ring >> 20)
        } else {
            format!("{} KiB", self.ring >> 10)
        };
        let api = if self.batch > 1 {
            format!("batch {}", self.batch)
        } else {
            "offer".into()
        };
        let receive = match self.receive {
            Receive::Drain => "",
            Receive::Batching => ", recv_batch",
        };
        let pages = if self.huge_pages { " on 2 MiB pages" } else { "" };
        format!(
            "{}{size} {}P{}S ring {ring}{pages} {api}{receive}",
            self.kind.name(),
            self.publishers,
            self.subscribers
        )
    }

    pub fn api(&self) -> Api {
        if self.batch > 1 { Api::OfferBatch } else { Api::Offer }
    }

    /// Processes that spin during the run.
    pub fn busy_processes(&self) -> u32 {
        self.publishers + self.subscribers
    }
}
