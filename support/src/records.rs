//! The raw-data records of the benchmark harnesses (benches/ipc, comparison/), one
//! struct per kind of line, written with serde: never hand-formatted JSON. The first line
//! of a file is a [`Header`]; every further line one record, whose `bench` says which:
//! [`Throughput`] (`throughput`, `size`, `stress`), [`LossyRun`], [`PingPong`],
//! [`OpenLoop`], [`Wake`]. Fields that mean nothing for a system are present as `null`. `label` is a caption for people
//! only: everything it says is also in a field of its own.

use serde::{Deserialize, Serialize};

use crate::clock::{self, LatencyClock};
use crate::cores::cores;
use crate::hist::Quantiles;
use crate::machine::Machine;
use crate::realtime::Realtime;
use crate::state::SpeedProbe;
use crate::trips::Batched;

/// The first line of a raw-data file: where, how and with what it was measured.
#[derive(Clone, Debug, Serialize)]
pub struct Header {
    /// [`Machine`]'s description: CPU, cores, kernel.
    pub machine: String,
    /// The command that produced the file.
    pub command: String,
    /// Rounds every variant ran.
    pub rounds: usize,
    /// Versions of what was measured, where the harness records them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions: Option<serde_json::Value>,
    /// The harness's settings, where it records them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
    /// The clock of the throughput runs' stamps.
    pub clock: Clock,
    /// The clock of every latency figure (ping-pong, floors, open loop): its source,
    /// calibration, step, and why the counter was refused if it was. Absent in files
    /// written before it was: those took `clock` for latency too.
    pub latency_clock: LatencyClock,
}

impl Header {
    /// A header for this machine and clock, with no versions or config.
    pub fn new(command: impl Into<String>, rounds: usize) -> Header {
        Header {
            machine: Machine::detect().to_string(),
            command: command.into(),
            rounds,
            versions: None,
            config: None,
            clock: Clock::monotonic(),
            latency_clock: clock::latency().clone(),
        }
    }
}

/// The clock of the stamps.
#[derive(Clone, Debug, Serialize)]
pub struct Clock {
    /// Always `CLOCK_MONOTONIC` ([`crate::clock::now_ns`]).
    pub source: &'static str,
    /// Its resolution by `clock_getres`, in ns.
    pub resolution_ns: u64,
}

impl Clock {
    /// `CLOCK_MONOTONIC` and its resolution on this machine.
    pub fn monotonic() -> Clock {
        Clock {
            source: "CLOCK_MONOTONIC",
            resolution_ns: clock::resolution_ns(),
        }
    }
}

/// What was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum System {
    /// salias.
    Salias,
    /// Aeron IPC.
    Aeron,
    /// iceoryx2.
    Iceoryx2,
    /// The bare SPSC ring floor.
    SpscFloor,
    /// The bare cache-line floor.
    Floor,
    /// The 64-byte message floor ([`crate::message_floor`]).
    MessageFloor,
    /// The 64-byte message through a ring of salias's frames ([`crate::ring_floor`]).
    RingFloor,
    /// One process writing salias's frames into a mapping of the ring's size, with no
    /// reader (benches/ipc's write floor).
    WriteFloor,
}

/// Which of the throughput-like benchmarks a [`Throughput`] record comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThroughputBench {
    /// 64-byte messages over every kind, shape and ring.
    Throughput,
    /// The message size sweep.
    Size,
    /// More publishers than cores into small rings.
    Stress,
    /// The C++ original's headline grid (`comparison --headline`): 2P1S and 2P2S × 1, 4
    /// and 64 MiB, salias FIFO `offer` against Aeron `try_claim`.
    Headline,
}

/// How the publishers sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// One message per call (salias `offer`, Aeron `offer`).
    Offer,
    /// salias `offer_batch`.
    OfferBatch,
    /// Aeron `try_claim`.
    TryClaim,
    /// iceoryx2 `loan_uninit`, the application retrying a refused send.
    LoanUninit,
    /// iceoryx2 `loan_uninit` with `RetryUntilDelivered`: the library's own blocking send,
    /// a different measurement from the application's retry.
    LoanUninitBlock,
    /// The SPSC floor's batched publication.
    Batch,
    /// The SPSC floor's batched publication in slots of salias's frame bytes (a 64-byte
    /// message in an 80-byte slot): the bare ring moving what salias moves per message.
    FrameBatch,
}

impl Api {
    /// The name the records use (the serde name), also for captions.
    pub fn name(self) -> &'static str {
        match self {
            Api::Offer => "offer",
            Api::OfferBatch => "offer_batch",
            Api::TryClaim => "try_claim",
            Api::LoanUninit => "loan_uninit",
            Api::LoanUninitBlock => "loan_uninit_block",
            Api::Batch => "batch",
            Api::FrameBatch => "frame_batch",
        }
    }
}

/// One throughput, size-sweep or stress run: every publisher floods, and the rates are
/// over the time from the start barrier to the last offer (published) and to the last
/// message received (delivered).
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    /// Which benchmark.
    pub bench: ThroughputBench,
    /// What was measured.
    pub system: System,
    /// The round, from 0.
    pub round: usize,
    /// A caption for people, e.g. `FifoMpsc 1P1S ring 1 MiB offer`; never parsed.
    pub label: String,
    /// The salias kind (`FifoMpsc`, `RawFifoMpsc`, …); `ipc` for Aeron, `ipc::Service`
    /// for iceoryx2; none for the SPSC floor.
    pub kind: Option<String>,
    /// Publisher processes.
    pub publishers: u32,
    /// Subscriber processes.
    pub subscribers: u32,
    /// salias ring (per publisher), SPSC floor ring or Aeron term length (the publication
    /// URI's `term-length`; each publisher's log holds three terms), in bytes.
    pub ring_bytes: Option<u64>,
    /// iceoryx2's subscriber buffer, in messages.
    pub buffer_messages: Option<u64>,
    /// How the publishers sent.
    pub api: Api,
    /// Messages per call; 1 for single-message APIs.
    pub batch: u32,
    /// Bytes of one message.
    pub message_bytes: u64,
    /// Messages each publisher sent.
    pub messages_per_publisher: u64,
    /// Messages published per second, all publishers together.
    pub published_per_s: f64,
    /// Messages delivered per second, all subscribers together.
    pub delivered_per_s: f64,
    /// Bytes delivered per second, where it is recorded.
    pub delivered_bytes_per_s: Option<f64>,
    /// Refused offers over all offers.
    pub refused_fraction: f64,
    /// Where each process ran, e.g. `S0@1 P0@0`.
    pub placement: String,
    /// Processes that spin: publishers + subscribers.
    pub busy_processes: u32,
    /// More busy processes than the machine has cores: they took turns, and the rate
    /// says as much about the scheduler as about the channel.
    pub oversubscribed: bool,
    /// The cache-line one-way latency between the run's cores just before and just after
    /// it ([`crate::state`]): the speed state it ran in. Absent in files written before
    /// it was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<SpeedProbe>,
    /// benches/ipc: the messages a salias subscriber's `drain` handed out per call that
    /// found any, all subscribers together. Near the call's maximum (256) the subscriber
    /// stayed behind its publishers and read lines nobody was writing; a few, it caught up
    /// and waited on the frame being written, which slows the publisher. Absent where it
    /// is not counted (the comparison crate) and in files written before it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_per_drain: Option<f64>,
    /// benches/ipc: how the salias subscriber received. Absent where there is no salias
    /// subscriber loop (the comparison crate) and in files written before it was recorded,
    /// which all drained ([`Receive::Drain`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive: Option<Receive>,
    /// The comparison: `pause`s every system's subscriber spun after a poll that came back
    /// short (`--subscriber-pauses`). Absent where it polled again at once, the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscriber_pauses: Option<u32>,
    /// benches/ipc: the huge page size the salias rings were on (`Config::huge_pages`),
    /// in bytes. Absent on normal pages, which every run before it was recorded used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub huge_page_bytes: Option<u64>,
}

/// How a benches/ipc salias subscriber received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Receive {
    /// `drain(256)` in a loop that looks again at once (one `pause` after an empty one).
    Drain,
    /// `recv_batch(256)` with `wait::Batching::default()`: 64 pauses after a batch that
    /// came back short.
    Batching,
}

/// Whether `busy_processes` spinning processes are more than this machine's cores.
pub fn oversubscribed(busy_processes: u32) -> bool {
    busy_processes as usize > cores()
}

/// One ping-pong run between two cores: one way = round trip / 2.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "bench", rename = "pingpong")]
pub struct PingPong {
    /// What was measured.
    pub system: System,
    /// The round, from 0.
    pub round: usize,
    /// The pinger's and the ponger's core.
    pub cores: [usize; 2],
    /// One-way latency in ns, per round trip (by the latency clock, to its step).
    pub one_way_ns: Quantiles,
    /// One way from samples of consecutive round trips, precise far below the clock's
    /// step ([`crate::trips`]); `null` where the harness times trips apart.
    pub batched: Option<Batched>,
    /// The cache-line one-way latency between the run's cores just before and just after
    /// it ([`crate::state`]): the speed state it ran in. Absent in files written before
    /// it was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<SpeedProbe>,
}

/// One run of the lossy-subscriber section (benches/ipc `--only lossy`): a publisher and
/// its tethered subscribers, with or without a lossy subscriber beside them.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "bench", rename = "lossy")]
pub struct LossyRun {
    /// What was measured.
    pub system: System,
    /// The round, from 0.
    pub round: usize,
    /// A caption for people; everything it says is in the fields below.
    pub label: String,
    /// The channel kind, e.g. `FifoFanout`.
    pub kind: String,
    /// Tethered subscribers (0 or 1).
    pub tethered: u32,
    /// What the lossy subscriber did: `none`, `sleeping` (a message a millisecond) or
    /// `keeping-up` (receiving as fast as it can).
    pub lossy: String,
    /// Bytes per publisher ring.
    pub ring_bytes: u64,
    /// Payload bytes per message.
    pub message_bytes: u64,
    /// Messages published.
    pub messages_per_publisher: u64,
    /// Messages published per second.
    pub published_per_s: f64,
    /// Messages the tethered subscriber received per second, if there is one.
    pub tethered_received_per_s: Option<f64>,
    /// Messages the lossy subscriber received per second, if there is one.
    pub lossy_received_per_s: Option<f64>,
    /// Messages the lossy subscriber missed over those published, if there is one.
    pub lossy_missed_fraction: Option<f64>,
    /// Refused offers over all offers.
    pub refused_fraction: f64,
    /// Where each role ran: `P0@1 S0@0`.
    pub placement: String,
    /// Processes that spin while the run is timed.
    pub busy_processes: u32,
    /// Whether they outnumber the cores.
    pub oversubscribed: bool,
}

/// One open-loop run at one offered load: messages sent at planned times, latencies
/// split into queueing (sent − planned), service (received − sent) and total (received −
/// planned).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "bench", rename = "openloop")]
pub struct OpenLoop {
    /// What was measured.
    pub system: System,
    /// The round, from 0.
    pub round: usize,
    /// Messages per second planned.
    pub offered_per_s: f64,
    /// Messages per second sent.
    pub achieved_per_s: f64,
    /// Seconds measured.
    pub duration_s: f64,
    /// Seconds sent before, not measured.
    pub warmup_s: f64,
    /// Refused offers over all offers.
    pub refused_fraction: f64,
    /// Messages sent after their planned time, over all.
    pub late_fraction: f64,
    /// The publisher could not keep to the plan.
    pub saturated: bool,
    /// Where each process ran, e.g. `P0@0 S0@1`.
    pub placement: String,
    /// Sent − planned, ns.
    pub queueing_ns: Quantiles,
    /// Received − sent, ns.
    pub service_ns: Quantiles,
    /// Received − planned, ns.
    pub total_ns: Quantiles,
    /// The real-time policy the publisher and subscriber ran under; absent when they ran
    /// under the ordinary scheduler (and in files written before it was recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub realtime: Option<Realtime>,
    /// The cache-line one-way latency between the run's cores just before and just after
    /// it ([`crate::state`]): the speed state it ran in. Absent in files written before
    /// it was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<SpeedProbe>,
}

/// How a woken receiver waited, in a [`Wake`] record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WakeMechanism {
    /// salias `Subscriber::recv` with the default `Adaptive` strategy (spin, yield, sleep).
    RecvAdaptive,
    /// salias `Subscriber::recv` with a strategy that sleeps in the futex at once.
    RecvPark,
    /// Design A prototype: a watcher thread futex-waits on a shared word and writes the
    /// receiver's eventfd, which an epoll loop watches.
    WatcherEventfd,
    /// Design B prototype: the waking publisher writes a byte to the sleeping receiver's
    /// named FIFO, which the receiver's epoll loop watches.
    Fifo,
    /// salias `Subscriber`'s own descriptor in a raw epoll loop.
    FdEpoll,
    /// salias `recv_async` in a current-thread tokio runtime.
    RecvAsync,
    /// iceoryx2's event service: `Notifier::notify`, `Listener::blocking_wait`.
    EventListener,
}

/// One wake-up latency run: messages a few milliseconds apart, each waking a receiver
/// that was asleep; latency from just before the publisher's commit to the woken
/// receiver's first instruction, and the waiting side's CPU over an idle interval.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "bench", rename = "wake")]
pub struct Wake {
    /// What was measured.
    pub system: System,
    /// The round, from 0.
    pub round: usize,
    /// A caption for people; never parsed.
    pub label: String,
    /// How the receiver waited.
    pub mechanism: WakeMechanism,
    /// A prototype built in the benchmark, not the library's code.
    pub prototype: bool,
    /// Where each process ran, e.g. `P0@0 S0@1`.
    pub placement: String,
    /// The shortest and longest planned gap between messages, in ns.
    pub gap_ns: [u64; 2],
    /// Commit to woken receiver, in ns, over the messages whose receiver slept.
    pub wake_ns: Quantiles,
    /// Messages found before the receiver slept (not in `wake_ns`); none where the API
    /// does not tell.
    pub not_slept: Option<u64>,
    /// System calls the publisher made to wake the receiver; none where the library does it.
    pub publisher_wakes: Option<u64>,
    /// Seconds the receiver idled while its CPU time was measured.
    pub idle_s: f64,
    /// Its `utime + stime` per idle second (clock-tick resolution, `idle_tick_s`).
    pub idle_cpu_s_per_s: f64,
    /// One clock tick, the resolution of `idle_cpu_s_per_s` over `idle_s`, in seconds.
    pub idle_tick_s: f64,
    /// Its threads' scheduler run time per idle second (ns resolution).
    pub idle_runtime_s_per_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn keys(value: &impl Serialize) -> Vec<String> {
        match serde_json::to_value(value).unwrap() {
            Value::Object(map) => map.keys().cloned().collect(),
            other => panic!("not an object: {other}"),
        }
    }

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        names.sort();
        names
    }

    fn throughput() -> Throughput {
        Throughput {
            bench: ThroughputBench::Stress,
            system: System::Salias,
            round: 2,
            label: "OrderedMpsc 4P1S ring 64 KiB batch 16".into(),
            kind: Some("OrderedMpsc".into()),
            publishers: 4,
            subscribers: 1,
            ring_bytes: Some(65536),
            buffer_messages: None,
            api: Api::OfferBatch,
            batch: 16,
            message_bytes: 64,
            messages_per_publisher: 500_000,
            published_per_s: 1.5e6,
            delivered_per_s: 1.25e6,
            delivered_bytes_per_s: None,
            refused_fraction: 0.25,
            placement: "S0@1 P0@0 P1@1 P2@0 P3@1".into(),
            busy_processes: 5,
            oversubscribed: true,
            state: Some(SpeedProbe {
                before_ns: 61.5,
                after_ns: 270.25,
            }),
            messages_per_drain: Some(12.5),
            receive: Some(Receive::Batching),
            subscriber_pauses: Some(64),
            huge_page_bytes: Some(2 << 20),
        }
    }

    #[test]
    fn a_throughput_record_has_exactly_the_contracts_fields() {
        let contract = [
            "bench",
            "system",
            "round",
            "label",
            "kind",
            "publishers",
            "subscribers",
            "ring_bytes",
            "buffer_messages",
            "api",
            "batch",
            "message_bytes",
            "messages_per_publisher",
            "published_per_s",
            "delivered_per_s",
            "delivered_bytes_per_s",
            "refused_fraction",
            "placement",
            "busy_processes",
            "oversubscribed",
            "state",
            "messages_per_drain",
            "receive",
            "subscriber_pauses",
            "huge_page_bytes",
        ];
        assert_eq!(keys(&throughput()), sorted(&contract));
    }

    #[test]
    fn a_throughput_record_spells_its_values_as_the_contract_does() {
        let json = serde_json::to_value(throughput()).unwrap();
        assert_eq!(json["bench"], "stress");
        assert_eq!(json["system"], "salias");
        assert_eq!(json["api"], "offer_batch");
        assert_eq!(json["buffer_messages"], Value::Null, "meaningless fields stay, as null");
        assert_eq!(json["oversubscribed"], true);
        assert_eq!(json["receive"], "batching");
        assert_eq!(json["subscriber_pauses"], 64);
        assert_eq!(json["huge_page_bytes"], 2 << 20);
        assert_eq!(json["ring_bytes"], 65536);
        assert_eq!(
            json["state"],
            serde_json::json!({"before_ns": 61.5, "after_ns": 270.25})
        );
        let names = |v: &[&dyn Fn() -> Value]| v.iter().map(|f| f()).collect::<Vec<_>>();
        assert_eq!(
            names(&[
                &|| serde_json::to_value(System::Iceoryx2).unwrap(),
                &|| serde_json::to_value(System::SpscFloor).unwrap(),
                &|| serde_json::to_value(System::Floor).unwrap(),
                &|| serde_json::to_value(System::Aeron).unwrap(),
                &|| serde_json::to_value(System::MessageFloor).unwrap(),
                &|| serde_json::to_value(System::RingFloor).unwrap(),
                &|| serde_json::to_value(System::WriteFloor).unwrap(),
            ]),
            [
                "iceoryx2",
                "spsc-floor",
                "floor",
                "aeron",
                "message-floor",
                "ring-floor",
                "write-floor"
            ]
        );
        assert_eq!(
            [Api::Offer, Api::TryClaim, Api::LoanUninit, Api::Batch, Api::FrameBatch]
                .map(|a| serde_json::to_value(a).unwrap()),
            ["offer", "try_claim", "loan_uninit", "batch", "frame_batch"]
        );
        assert_eq!(
            [
                ThroughputBench::Throughput,
                ThroughputBench::Size,
                ThroughputBench::Headline
            ]
            .map(|b| serde_json::to_value(b).unwrap()),
            ["throughput", "size", "headline"]
        );
    }

    fn quantiles() -> Quantiles {
        Quantiles {
            at: [60, 60, 65, 75, 190],
            max: 103303,
            count: 200000,
        }
    }

    #[test]
    fn a_pingpong_record_reads_as_the_committed_data() {
        let record = PingPong {
            system: System::Floor,
            round: 0,
            cores: [0, 1],
            one_way_ns: quantiles(),
            batched: None,
            state: None,
        };
        assert_eq!(
            serde_json::to_string(&record).unwrap(),
            r#"{"bench":"pingpong","system":"floor","round":0,"cores":[0,1],"one_way_ns":{"p50":60,"p90":60,"p99":65,"p99.9":75,"p99.99":190,"max":103303,"count":200000},"batched":null}"#
        );
    }

    #[test]
    fn an_openloop_record_has_the_fields_of_today() {
        let record = OpenLoop {
            system: System::Aeron,
            round: 1,
            offered_per_s: 1e6,
            achieved_per_s: 999_990.0,
            duration_s: 1.0,
            warmup_s: 0.2,
            refused_fraction: 0.0,
            late_fraction: 0.001,
            saturated: false,
            placement: "P0@0 S0@1".into(),
            queueing_ns: quantiles(),
            service_ns: quantiles(),
            total_ns: quantiles(),
            realtime: None,
            state: None,
        };
        let contract = [
            "bench",
            "system",
            "round",
            "offered_per_s",
            "achieved_per_s",
            "duration_s",
            "warmup_s",
            "refused_fraction",
            "late_fraction",
            "saturated",
            "placement",
            "queueing_ns",
            "service_ns",
            "total_ns",
        ];
        assert_eq!(keys(&record), sorted(&contract));
        assert_eq!(serde_json::to_value(&record).unwrap()["bench"], "openloop");
        let realtime = OpenLoop {
            realtime: Some(Realtime {
                policy: crate::realtime::Policy::Fifo,
                priority: 50,
            }),
            ..record
        };
        assert_eq!(
            serde_json::to_value(&realtime).unwrap()["realtime"],
            serde_json::json!({"policy": "SCHED_FIFO", "priority": 50})
        );
    }

    #[test]
    fn the_header_keeps_its_keys_and_records_the_clock() {
        let mut header = Header::new("cargo bench --bench ipc", 5);
        assert_eq!(
            keys(&header),
            sorted(&["machine", "command", "rounds", "clock", "latency_clock"])
        );
        header.versions = Some(serde_json::json!({"salias": "abc"}));
        header.config = Some(serde_json::json!({"pings": 1}));
        assert_eq!(
            keys(&header),
            sorted(&[
                "machine",
                "command",
                "rounds",
                "versions",
                "config",
                "clock",
                "latency_clock"
            ])
        );
        let json = serde_json::to_value(&header).unwrap();
        assert_eq!(json["clock"]["source"], "CLOCK_MONOTONIC");
        assert!(json["clock"]["resolution_ns"].as_u64().unwrap() >= 1);
        let latency = &json["latency_clock"];
        assert!(
            latency["source"] == "tsc" || latency["refused"].is_string(),
            "{latency}"
        );
        assert!(latency["smallest_step_ns"].as_f64().unwrap() > 0.0, "{latency}");
    }

    #[test]
    fn a_wake_record_names_its_bench_and_mechanism() {
        let record = Wake {
            system: System::Salias,
            round: 0,
            label: "futex recv (Adaptive)".into(),
            mechanism: WakeMechanism::RecvAdaptive,
            prototype: false,
            placement: "P0@0 S0@1".into(),
            gap_ns: [2_000_000, 5_000_000],
            wake_ns: quantiles(),
            not_slept: None,
            publisher_wakes: Some(3),
            idle_s: 1.0,
            idle_cpu_s_per_s: 0.0,
            idle_tick_s: 0.01,
            idle_runtime_s_per_s: 1e-5,
        };
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["bench"], "wake");
        assert_eq!(json["mechanism"], "recv-adaptive");
        assert_eq!(json["not_slept"], Value::Null);
        assert_eq!(json["wake_ns"]["p99.9"], 75);
        assert_eq!(
            serde_json::to_value(WakeMechanism::WatcherEventfd).unwrap(),
            "watcher-eventfd"
        );
    }

    #[test]
    fn more_busy_processes_than_cores_oversubscribe() {
        assert!(!oversubscribed(cores() as u32));
        assert!(oversubscribed(cores() as u32 + 1));
    }
}
