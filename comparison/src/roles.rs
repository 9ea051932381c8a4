//! The child processes: every publisher, subscriber, pinger and ponger is this binary
//! started again with a role (`<system> <role>`, in an environment variable) and its
//! [`Params`] (JSON, in a second one). A child pins itself, opens the run's barrier, plays
//! its role (`child.rs`) and prints one [`Report`]; the parent (`parent.rs`) waits for all
//! of them under a watchdog.

use serde::{Deserialize, Serialize};
use support::hist::Quantiles;
use support::realtime::Realtime;
use support::records::{Api, System};
use support::role::{Role, report_json};
use support::trips::Batched;

/// The variable that names a child's role.
pub const ROLE: Role = Role::new("SALIAS_COMPARISON_ROLE");

/// What a role process is told: where it runs and what it sends.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Params {
    /// The run's name: its barrier, channel, service or ring.
    pub name: String,
    /// The core this process pins itself to.
    pub core: usize,
    /// How a throughput or open-loop publisher sends (ping-pong has one way per system).
    pub api: Option<Api>,
    /// Messages per call.
    pub batch: usize,
    pub publishers: u32,
    /// Subscribers of the run, each receiving every message (salias connects to a fanout
    /// channel when there are more than one).
    pub subscribers: u32,
    /// Messages per publisher (throughput, open loop) or recorded round trips (ping-pong).
    pub messages: u64,
    /// The buffer, as `Setup::param`; a wake-up sender's idle interval in ms.
    pub param: u64,
    /// This publisher's (or subscriber's) index.
    pub index: u64,
    /// The Aeron driver's directory (empty without Aeron).
    pub aeron_dir: String,
    /// The Aeron stream of the run (ping-pong: pings; pongs on the next one).
    pub stream: i32,
    /// The open-loop plan, for the open-loop roles.
    pub plan: Option<OpenLoopPlan>,
    /// A throughput subscriber's pauses after a poll that came back short
    /// (`--subscriber-pauses`).
    pub subscriber_pauses: u32,
}

/// An open-loop publisher's schedule.
#[derive(Serialize, Deserialize, Clone, Copy, Debug)]
pub struct OpenLoopPlan {
    /// Δ between planned send times, in picoseconds.
    pub interval_ps: u64,
    /// The first messages, sent by the plan but not recorded.
    pub warmup: u64,
    /// The real-time policy both roles run under, if any (`--realtime`).
    pub realtime: Option<Realtime>,
}

/// What a child tells its parent, once, at the end.
#[derive(Serialize, Deserialize, Clone, Debug)]
#[serde(tag = "report", rename_all = "snake_case")]
pub enum Report {
    /// From the start barrier to the last successful offer.
    Publisher {
        elapsed_ns: u64,
        attempts: u64,
        refused: u64,
    },
    /// From the start barrier to the last message.
    Subscriber { elapsed_ns: u64, received: u64 },
    /// The recorded round trips.
    Pings {
        round_trip_ns: Quantiles,
        batched: Option<Batched>,
    },
    /// How the open-loop plan went.
    OpenLoopPublisher {
        span_ns: u64,
        planned_span_ns: u64,
        attempts: u64,
        refused: u64,
        late: u64,
    },
    /// The wake-up sender's reading of the idle receiver's CPU.
    WakeSender { idle: support::cpu::IdleCpu },
    /// The wake-up receiver's latencies, commit to woken receiver.
    WakeReceiver { wake_ns: Quantiles, not_slept: u64 },
    /// The open-loop histograms.
    OpenLoopSubscriber {
        queueing_ns: Quantiles,
        service_ns: Quantiles,
        total_ns: Quantiles,
    },
}

impl Report {
    /// Prints this report for the parent.
    pub fn send(&self) {
        report_json(self);
    }
}

/// A system's name in role names and run names, as the records spell it.
pub fn system_name(system: System) -> &'static str {
    match system {
        System::Salias => "salias",
        System::Aeron => "aeron",
        System::Iceoryx2 => "iceoryx2",
        System::SpscFloor => "spsc-floor",
        System::Floor => "floor",
        System::MessageFloor => "message-floor",
        System::RingFloor => "ring-floor",
        System::WriteFloor => "write-floor",
    }
}
