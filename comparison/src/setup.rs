//! What one run is, as the plan lists it, the parent creates its resources and the
//! records describe it: a throughput setup (system, API, shape, messages and buffer), or
//! a wake-up variant.

use support::records::{System, ThroughputBench, WakeMechanism};

use crate::roles::Params;

/// Messages per `offer_batch`, and the SPSC floor's publication interval.
pub const BATCH: usize = 16;

/// How a publisher hands over its messages: the records' names. `Offer` is salias or
/// Aeron `offer`, `OfferBatch` salias `offer_batch` of [`BATCH`], `TryClaim` Aeron's claim,
/// write and commit, `LoanUninit` iceoryx2's `loan_uninit` → `write_payload` → `send`
/// retried by the application, `LoanUninitBlock` the same with iceoryx2's blocking send,
/// `Batch` the SPSC floor publishing its tail every [`BATCH`] messages.
pub use support::records::Api;

/// One throughput setup: a system, its API, publishers, subscribers, messages and buffer.
#[derive(Clone, Debug)]
pub struct Setup {
    pub system: System,
    pub api: Api,
    /// Messages per call (1 for the single-message APIs).
    pub batch: usize,
    pub publishers: u32,
    /// Subscribers, each receiving every message (salias: FifoFanout when more than one;
    /// Aeron: one subscription each on the same stream).
    pub subscribers: u32,
    pub messages: u64,
    /// salias / spsc-floor: ring bytes per publisher; iceoryx2: subscriber buffer (samples);
    /// aeron: term length bytes (the publication URI's `term-length`).
    pub param: u64,
    /// Which benchmark the records name.
    pub bench: ThroughputBench,
    /// Marked oversubscribed whatever the count of busy processes (`--headline
    /// --allow-oversubscribed` on a machine with too few cores).
    pub marked_oversubscribed: bool,
    /// The subscriber's pauses after a poll that came back short (`--subscriber-pauses`).
    pub subscriber_pauses: u32,
}

impl Setup {
    /// A setup of a single-message API, or of a batching one with [`BATCH`].
    pub fn new(system: System, api: Api, publishers: u32, messages: u64, param: u64) -> Setup {
        let batch = if matches!(api, Api::OfferBatch | Api::Batch | Api::FrameBatch) {
            BATCH
        } else {
            1
        };
        Setup {
            system,
            api,
            batch,
            publishers,
            subscribers: 1,
            messages,
            param,
            bench: ThroughputBench::Throughput,
            marked_oversubscribed: false,
            subscriber_pauses: 0,
        }
    }

    /// This setup with `subscribers` subscribers.
    pub fn with_subscribers(self, subscribers: u32) -> Setup {
        Setup { subscribers, ..self }
    }

    /// This setup as a run of the headline grid, every record marked oversubscribed if
    /// `marked`.
    pub fn headline(self, marked: bool) -> Setup {
        Setup {
            bench: ThroughputBench::Headline,
            marked_oversubscribed: marked,
            ..self
        }
    }

    /// This setup with a subscriber that spins `pauses` pauses after a poll that came
    /// back short.
    pub fn with_subscriber_pauses(self, pauses: u32) -> Setup {
        Setup {
            subscriber_pauses: pauses,
            ..self
        }
    }

    /// The salias kind of this setup: every subscriber sees every message, so more than
    /// one needs a fanout channel.
    pub fn salias_kind(&self) -> &'static str {
        if self.subscribers > 1 { "FifoFanout" } else { "FifoMpsc" }
    }

    /// Processes that spin while the run lasts: every publisher and subscriber. Aeron's
    /// media driver is not one: its thread parks between duty cycles (backoff idle), and
    /// took about 6 % of a core during a 1P1S `try_claim` flood (measured from
    /// /proc/<pid>/task/*/stat on the 2-core AMD EPYC development VM, 2026-12).
    pub fn busy_processes(&self) -> u32 {
        self.publishers + self.subscribers
    }

    /// The API with its batch, as the summary names it: `offer_batch16`.
    pub fn variant(&self) -> String {
        if self.batch > 1 {
            format!("{}{}", self.api.name(), self.batch)
        } else {
            self.api.name().to_owned()
        }
    }

    /// A caption for people: `salias FifoMpsc 1P1S ring 1 MiB offer`, with `, subscriber
    /// pauses 64` where the subscriber pauses after a short poll.
    pub fn label(&self) -> String {
        let shape = format!("{}P{}S", self.publishers, self.subscribers);
        let variant = match self.subscriber_pauses {
            0 => self.variant(),
            pauses => format!("{}, subscriber pauses {pauses}", self.variant()),
        };
        match self.system {
            System::Salias => format!(
                "salias {} {shape} ring {} MiB {variant}",
                self.salias_kind(),
                self.param >> 20
            ),
            System::Aeron => format!("aeron ipc {shape} term {} MiB {variant}", self.param >> 20),
            System::Iceoryx2 => format!("iceoryx2 {shape} buffer {} {variant}", self.param),
            System::SpscFloor | System::Floor | System::MessageFloor | System::RingFloor => {
                format!("spsc-floor {shape} ring {} MiB {variant}", self.param >> 20)
            }
            System::WriteFloor => unreachable!("the write floor runs in benches/ipc only"),
        }
    }

    /// What process `index` of this setup's run `name` is told; `aeron_dir` is the Aeron
    /// driver's (empty without Aeron).
    pub fn params(&self, name: &str, core: usize, index: usize, aeron_dir: &str, stream: i32) -> Params {
        Params {
            name: name.to_owned(),
            core,
            api: Some(self.api),
            batch: self.batch,
            publishers: self.publishers,
            subscribers: self.subscribers,
            messages: self.messages,
            param: self.param,
            index: index as u64,
            aeron_dir: aeron_dir.to_owned(),
            stream,
            plan: None,
            subscriber_pauses: self.subscriber_pauses,
        }
    }
}

/// The wake-up variants compared, in the order they alternate.
pub const VARIANTS: [Variant; 3] = [
    (System::Salias, WakeMechanism::RecvAdaptive),
    (System::Salias, WakeMechanism::FdEpoll),
    (System::Iceoryx2, WakeMechanism::EventListener),
];

/// A system and how its receiver waits.
pub type Variant = (System, WakeMechanism);

/// How much one wake-up run measures.
#[derive(Clone, Copy, Debug)]
pub struct WakePlan {
    pub messages: u64,
    pub idle_ms: u64,
}

/// A wake-up variant's caption.
pub fn wake_label((system, mechanism): Variant) -> &'static str {
    match (system, mechanism) {
        (System::Iceoryx2, _) => "iceoryx2 event listener blocking_wait",
        (_, WakeMechanism::FdEpoll) => "salias Subscriber fd in epoll",
        _ => "salias futex recv (Adaptive)",
    }
}
