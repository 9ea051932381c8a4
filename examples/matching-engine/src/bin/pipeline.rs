//! The showcase pipeline: gateway processes → `OrderedMpsc<OrderMsg>` → engine process →
//! `FifoFanout<EventMsg>` → market-data subscriber processes, every role a separate process
//! started by this one command, with open-loop latency; and, for comparison in the same
//! run, the same roles as threads over a mutex + condvar queue and over lock-free SPSC rings.
//!
//! ```text
//! pipeline [--rate N] [--duration-ms N]      one salias run (default 1 M orders/s, 1 s)
//! pipeline --sweep [--rates A,B,..] [--rounds N]
//!                                              every system at every offered load,
//!                                              alternating, raw data to results/*.jsonl
//! options: --gateways N (2) --subscribers N (1) --seed N --warmup-ms N (50)
//!          --gateway-cores 0[,..] --engine-core 1 --subscriber-cores 0[,..]
//!          --gateway-wait yield|sleep (how a gateway waits for a planned time)
//!          --realtime PRIORITY (every role under SCHED_RR, so kernel threads cannot take
//!          a role's core; needs root or CAP_SYS_NICE and util-linux's chrt, and runs
//!          short enough for the kernel's real-time throttling)
//!          --subscriber-wait futex|nap (how an idle subscriber waits; the mutex baseline
//!          always sleeps on its condvar)
//!          --system salias|mutex|lockfree|all (single run) --record DIR (single run)
//!          --quiet-wait-s N (sweep: wait up to N s (2) before each run for the machine to
//!          be under 10 % busy; the reading is recorded with the run)
//! ```
//!
//! Measurement (BENCHMARKING.md rule 5): each gateway sends its pre-generated requests at
//! planned times `t0 + (i·gateways + g)·Δ`, waiting for each planned time and never
//! skipping one to catch up. A request carries its planned time and its queueing time
//! (actual offer − planned); the engine copies both into every event it causes. A
//! subscriber stamps the arrival of each request's first event (published only after the
//! engine finished the request, all of its events in one batch). Queueing, service
//! (arrival − actual send), total (arrival − planned) and the engine's own per-request
//! time (received → events published) go to HdrHistograms. Requests planned in the first
//! `--warmup-ms` are sent and verified but not measured.
//!
//! Verification, every run: the engine checks the channel's global sequence is gap-free,
//! hashes its input and output; each subscriber decodes every event, checks each
//! request's events arrive in input order, and hashes what it received. Counts and hashes
//! must agree or the run fails. `--record DIR` writes the engine's input (in the order it
//! received it) and each subscriber's events, so a single-process replay can be compared
//! byte for byte (`tests/pipeline.rs`).

#![forbid(unsafe_code)]

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use matching_engine::{Engine, EventMsg, OrderMsg, WireHash, gateway_requests, pipeline_engine_config};
use salias::{
    Adaptive, Config, FifoFanout, FifoMpsc, OrderedMpsc, PublishError, ReceiveError, SaliasMessage, WaitStrategy,
};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

// ---------------------------------------------------------------------------------------
// Clock and placement

/// `CLOCK_MONOTONIC` in nanoseconds: one clock for every process on the machine.
fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn pin(core: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(core);
    rustix::thread::sched_setaffinity(None, &set).expect("pin to core");
}

/// Puts the calling thread under SCHED_RR at `priority`, through util-linux's `chrt`
/// (the crate has no `unsafe` to call `sched_setscheduler` itself).
fn round_robin(priority: u32) -> Result<(), String> {
    let tid = rustix::thread::gettid().as_raw_nonzero().to_string();
    let output = Command::new("chrt")
        .args(["-r", "-p", &priority.to_string(), &tid])
        .output()
        .map_err(|e| format!("cannot run chrt (util-linux): {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "chrt -r -p {priority} failed ({}); SCHED_RR needs root or CAP_SYS_NICE",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// How long real-time tasks may run in a row before the kernel throttles them, with some
/// margin, in ms; `None` when it does not throttle them.
fn realtime_limit_ms() -> Option<u64> {
    let read = |name: &str| -> Option<i64> {
        std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let runtime_us = read("sched_rt_runtime_us")?;
    let period_us = read("sched_rt_period_us")?;
    if runtime_us < 0 || runtime_us >= period_us {
        return None;
    }
    Some((runtime_us as u64 / 1_000).saturating_sub(100))
}

/// Pins a role to its core and, with `--realtime`, puts it under SCHED_RR: then no
/// ordinary task can take the core from it (on the development VM a kernel thread,
/// `kdamond`, was seen holding the engine's core for 5 ms), and the roles sharing a core
/// take turns strictly.
fn place_role(p: &Params, core: usize) {
    pin(core);
    if let Some(priority) = p.realtime {
        round_robin(priority).expect("--realtime");
    }
}

// ---------------------------------------------------------------------------------------
// Parameters

#[derive(Clone, Debug)]
struct Params {
    gateways: u32,
    subscribers: u32,
    /// Offered load, requests per second over all gateways.
    rate: f64,
    duration_ms: u64,
    warmup_ms: u64,
    seed: u64,
    gateway_cores: Vec<usize>,
    engine_core: usize,
    subscriber_cores: Vec<usize>,
    /// How a gateway waits for a planned time: "yield" or "sleep" (see `wait_until`).
    gateway_wait: String,
    /// How an idle subscriber waits: "futex" (yield a few times, then sleep until the
    /// engine's next publish wakes it) or "nap" (yield a few times, then sleep 5 µs at a
    /// time and look again; the engine never wakes anyone).
    subscriber_wait: String,
    /// SCHED_RR priority for every role.
    realtime: Option<u32>,
    record: Option<PathBuf>,
}

impl Params {
    fn per_gateway(&self) -> usize {
        ((self.rate * self.duration_ms as f64 / 1000.0) / f64::from(self.gateways)).ceil() as usize
    }

    fn total(&self) -> u64 {
        self.per_gateway() as u64 * u64::from(self.gateways)
    }

    fn interval_ns(&self) -> f64 {
        1e9 / self.rate
    }

    fn gateway_core(&self, g: u32) -> usize {
        self.gateway_cores[g as usize % self.gateway_cores.len()]
    }

    fn subscriber_core(&self, s: u32) -> usize {
        self.subscriber_cores[s as usize % self.subscriber_cores.len()]
    }

    fn placement(&self) -> String {
        let mut parts: Vec<String> = (0..self.gateways)
            .map(|g| format!("gateway{g}@{}", self.gateway_core(g)))
            .collect();
        parts.push(format!("engine@{}", self.engine_core));
        parts.extend((0..self.subscribers).map(|s| format!("subscriber{s}@{}", self.subscriber_core(s))));
        let scheduling = match self.realtime {
            Some(priority) => format!("every role SCHED_RR {priority}"),
            None => "every role SCHED_OTHER".into(),
        };
        format!(
            "{} (gateways wait by: {}; idle subscriber waits: {}; {scheduling})",
            parts.join(" "),
            self.gateway_wait,
            self.subscriber_wait
        )
    }

    /// The arguments a child needs to rebuild these parameters.
    fn to_args(&self) -> Vec<String> {
        let list = |cores: &[usize]| cores.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        let mut args = vec![
            "--gateways".into(),
            self.gateways.to_string(),
            "--subscribers".into(),
            self.subscribers.to_string(),
            "--rate".into(),
            self.rate.to_string(),
            "--duration-ms".into(),
            self.duration_ms.to_string(),
            "--warmup-ms".into(),
            self.warmup_ms.to_string(),
            "--seed".into(),
            self.seed.to_string(),
            "--gateway-cores".into(),
            list(&self.gateway_cores),
            "--engine-core".into(),
            self.engine_core.to_string(),
            "--subscriber-cores".into(),
            list(&self.subscriber_cores),
            "--gateway-wait".into(),
            self.gateway_wait.clone(),
            "--subscriber-wait".into(),
            self.subscriber_wait.clone(),
        ];
        if let Some(priority) = self.realtime {
            args.push("--realtime".into());
            args.push(priority.to_string());
        }
        if let Some(dir) = &self.record {
            args.push("--record".into());
            args.push(dir.display().to_string());
        }
        args
    }
}

struct Options {
    params: Params,
    sweep: bool,
    rates: Vec<f64>,
    rounds: usize,
    quiet_wait_s: u64,
    system: String,
    role: Option<(String, String, u32)>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut options = Options {
        params: Params {
            gateways: 2,
            subscribers: 1,
            rate: 1_000_000.0,
            duration_ms: 1_000,
            warmup_ms: 50,
            seed: 1,
            gateway_cores: vec![0],
            engine_core: 1.min(cores - 1),
            subscriber_cores: vec![0],
            gateway_wait: "yield".into(),
            subscriber_wait: "futex".into(),
            realtime: None,
            record: None,
        },
        sweep: false,
        rates: vec![100_000.0, 500_000.0, 1_000_000.0, 2_000_000.0, 4_000_000.0, 6_000_000.0],
        rounds: 5,
        quiet_wait_s: 2,
        system: "salias".into(),
        role: None,
    };
    let mut duration_given = false;
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        if flag == "--sweep" {
            options.sweep = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag} takes a whole number, not {value:?}"))
        };
        let core_list = || -> Result<Vec<usize>, String> {
            value
                .split(',')
                .map(|c| match c.parse::<usize>() {
                    Ok(core) if core < cores => Ok(core),
                    _ => Err(format!("{flag} takes core numbers below {cores}, not {c:?}")),
                })
                .collect()
        };
        let p = &mut options.params;
        match flag.as_str() {
            "--gateways" => p.gateways = number()?.clamp(1, 32) as u32,
            "--subscribers" => p.subscribers = number()?.clamp(1, 32) as u32,
            "--rate" => {
                p.rate = value
                    .parse::<f64>()
                    .ok()
                    .filter(|r| r.is_finite() && *r >= 1.0)
                    .ok_or("--rate takes requests per second, at least 1")?
            }
            "--duration-ms" => {
                p.duration_ms = number()?.max(1);
                duration_given = true;
            }
            "--warmup-ms" => p.warmup_ms = number()?,
            "--seed" => p.seed = number()?,
            "--gateway-cores" => p.gateway_cores = core_list()?,
            "--engine-core" => p.engine_core = core_list()?[0],
            "--subscriber-cores" => p.subscriber_cores = core_list()?,
            "--record" => p.record = Some(PathBuf::from(value)),
            "--gateway-wait" => {
                if !["yield", "sleep"].contains(&value.as_str()) {
                    return Err(format!("--gateway-wait takes yield or sleep, not {value:?}"));
                }
                p.gateway_wait = value.clone();
            }
            "--realtime" => {
                p.realtime = Some(
                    value
                        .parse::<u32>()
                        .ok()
                        .filter(|n| (1..=99).contains(n))
                        .ok_or("--realtime takes a SCHED_RR priority from 1 to 99")?,
                )
            }
            "--subscriber-wait" => {
                if !["futex", "nap"].contains(&value.as_str()) {
                    return Err(format!("--subscriber-wait takes futex or nap, not {value:?}"));
                }
                p.subscriber_wait = value.clone();
            }
            "--rounds" => options.rounds = number()?.clamp(1, 100) as usize,
            "--quiet-wait-s" => options.quiet_wait_s = number()?,
            "--rates" => {
                options.rates = value
                    .split(',')
                    .map(|r| r.parse::<f64>().ok().filter(|r| r.is_finite() && *r >= 1.0))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("--rates takes a comma-separated list of requests per second")?
            }
            "--system" => {
                if !["salias", "mutex", "lockfree", "all"].contains(&value.as_str()) {
                    return Err(format!("--system takes salias, mutex, lockfree or all, not {value:?}"));
                }
                options.system = value.clone();
            }
            "--role" => {
                let name = args.next().ok_or("--role needs a role, a name and an index")?;
                let index = args
                    .next()
                    .and_then(|i| i.parse().ok())
                    .ok_or("--role needs a role, a name and an index")?;
                options.role = Some((value.clone(), name.clone(), index));
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if options.sweep && !duration_given {
        options.params.duration_ms = 300;
    }
    if options.params.realtime.is_some()
        && let Some(limit_ms) = realtime_limit_ms()
        && options.params.duration_ms + options.params.warmup_ms > limit_ms
    {
        return Err(format!(
            "--realtime runs spin under SCHED_RR, and the kernel throttles real-time tasks after \
             {limit_ms} ms of every second (kernel.sched_rt_runtime_us): use --duration-ms of at most {}",
            limit_ms.saturating_sub(options.params.warmup_ms)
        ));
    }
    if options.params.warmup_ms >= options.params.duration_ms {
        return Err("--warmup-ms must be shorter than --duration-ms".into());
    }
    Ok(options)
}

// ---------------------------------------------------------------------------------------
// Histograms

fn histogram() -> Histogram<u64> {
    // 1 ns to 100 s at 3 significant digits.
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid bounds")
}

/// Bucket values and counts as text, so a child process can hand its histogram over.
fn dump(h: &Histogram<u64>) -> String {
    let buckets: Vec<String> = h
        .iter_recorded()
        .map(|v| format!("{}:{}", v.value_iterated_to(), v.count_at_value()))
        .collect();
    if buckets.is_empty() {
        "-".into()
    } else {
        buckets.join(",")
    }
}

fn undump(text: &str) -> Histogram<u64> {
    let mut h = histogram();
    for bucket in text.split(',').filter(|b| *b != "-") {
        let (value, count) = bucket.split_once(':').expect("bucket");
        h.saturating_record_n(value.parse().expect("value"), count.parse().expect("count"));
    }
    h
}

const QUANTILES: [(&str, f64); 5] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

fn percentiles_json(h: &Histogram<u64>) -> String {
    let mut parts: Vec<String> = QUANTILES
        .iter()
        .map(|(name, q)| format!("\"{name}\":{}", h.value_at_quantile(*q)))
        .collect();
    parts.push(format!("\"max\":{}", h.max()));
    parts.push(format!("\"count\":{}", h.len()));
    format!("{{{}}}", parts.join(","))
}

fn percentiles_line(h: &Histogram<u64>) -> String {
    let us = |ns: u64| format!("{:.2}", ns as f64 / 1000.0);
    format!(
        "p50 {} p90 {} p99 {} p99.9 {} p99.99 {} max {} µs (n={})",
        us(h.value_at_quantile(0.5)),
        us(h.value_at_quantile(0.9)),
        us(h.value_at_quantile(0.99)),
        us(h.value_at_quantile(0.999)),
        us(h.value_at_quantile(0.9999)),
        us(h.max()),
        h.len()
    )
}

// ---------------------------------------------------------------------------------------
// The roles, written once over these transports

/// Gateway side of the request channel.
trait OrderTx {
    /// False when the queue is full (nothing sent).
    fn try_send(&mut self, order: &OrderMsg) -> bool;
}

/// Engine side of the request channel.
trait OrderRx {
    /// The next request and its position in the channel's total order (None: none yet).
    fn try_recv(&mut self) -> Option<(u64, OrderMsg)>;
    /// Waiting for a request: spin, yield or block, as the transport does.
    fn idle(&mut self);
    /// Sequence numbers lost in the channel (ordered salias only).
    fn gaps(&self) -> u64 {
        0
    }
}

/// Engine side of the event channel.
trait EventTx {
    /// Publishes as many of `events` as fit; 0 when none did.
    fn try_send(&mut self, events: &[EventMsg]) -> usize;
}

/// Subscriber side of the event channel.
trait EventRx {
    /// Hands every available event to `handle`; returns how many.
    fn poll(&mut self, handle: impl FnMut(&EventMsg)) -> usize;
    fn idle(&mut self);
    /// The engine's final event count, once it has finished.
    fn engine_done(&mut self) -> Option<u64>;
}

/// Within this much of a planned time a yielding gateway stops sleeping and yields
/// instead: a timer sleep on the development VM wakes 10 µs late at p50 and 28 µs at p99
/// (the sweep measures it, `sleep_wake_floor`).
const YIELD_WINDOW_NS: u64 = 30_000;

/// Waits for a planned send time without holding the core: on two cores the gateways
/// share one with the subscriber, which must get to run. Waking late shows up as queueing
/// time.
///
/// - `yield` (the default): sleep until `YIELD_WINDOW_NS` before the planned time, then
///   `sched_yield` until it. Two gateways and a subscriber on one core take turns within
///   microseconds.
/// - `sleep`: sleep until the planned time (timer slack cut to 1 ns), spinning only the
///   last microsecond. On the development VM each timer wake-up costs the core about
///   10 µs, so two gateways sleeping 100,000 times a second in total already saturate
///   it and fall milliseconds behind.
fn wait_until(planned: u64, how: &str) {
    let yielding = how == "yield";
    loop {
        let now = now_ns();
        if now >= planned {
            return;
        }
        let left = planned - now;
        if yielding {
            if left > YIELD_WINDOW_NS {
                std::thread::sleep(Duration::from_nanos(left - YIELD_WINDOW_NS));
            } else {
                std::thread::yield_now();
            }
        } else if left > 1_000 {
            std::thread::sleep(Duration::from_nanos(left));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// How many times an idle subscriber yields before it sleeps. It shares its core with
/// the gateways: spinning there would take their turn, and sleeping at once would make
/// the engine pay for a wake-up after nearly every request.
const IDLE_YIELDS: u32 = 20;

/// An idle subscriber's alternative to a futex: yield a few times, then sleep 5 µs at a
/// time and look again. Nobody has to wake it, so the engine never pays for a wake-up.
struct YieldThenNap;

const NAP: Duration = Duration::from_micros(5);

impl WaitStrategy for YieldThenNap {
    fn wait(&mut self, idle: u32, _park: &mut salias::Park<'_>) {
        if idle < IDLE_YIELDS {
            std::thread::yield_now();
        } else {
            std::thread::sleep(NAP);
        }
    }
}

/// Sleep with hrtimer precision instead of the default 50 µs slack.
fn precise_sleep() {
    rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1)).expect("set timer slack");
}

#[derive(Default)]
struct GatewayReport {
    sent: u64,
    refused: u64,
    first_send_ns: u64,
    last_send_ns: u64,
    queueing: Option<Histogram<u64>>,
}

fn run_gateway(tx: &mut impl OrderTx, g: u32, p: &Params, requests: &[OrderMsg], t0: u64) -> GatewayReport {
    let interval = p.interval_ns();
    let measure_from = t0 + p.warmup_ms * 1_000_000;
    let mut queueing = histogram();
    let mut report = GatewayReport::default();
    for (i, request) in requests.iter().enumerate() {
        let planned = t0 + ((i as u64 * u64::from(p.gateways) + u64::from(g)) as f64 * interval) as u64;
        wait_until(planned, &p.gateway_wait);
        let mut message = OrderMsg {
            gateway_ts_ns: planned,
            ..*request
        };
        loop {
            let now = now_ns();
            message.send_delay_ns = u32::try_from(now - planned).unwrap_or(u32::MAX);
            if tx.try_send(&message) {
                if planned >= measure_from {
                    queueing.saturating_record(now - planned);
                }
                if i == 0 {
                    report.first_send_ns = now;
                }
                report.last_send_ns = now;
                break;
            }
            report.refused += 1;
            std::hint::spin_loop();
        }
        report.sent += 1;
    }
    report.queueing = Some(queueing);
    report
}

struct EngineReport {
    received: u64,
    events: u64,
    refused: u64,
    gaps: u64,
    out_of_order: u64,
    input: WireHash,
    output: WireHash,
    first_recv_ns: u64,
    last_done_ns: u64,
    processing: Histogram<u64>,
    /// Actual send → received by the engine: the request channel's hop.
    inbound: Histogram<u64>,
}

/// A fresh engine for a run, built (and its memory allocated) before the start.
fn fresh_engine() -> Engine {
    Engine::new(&pipeline_engine_config()).expect("valid engine config")
}

fn run_engine(
    mut engine: Engine,
    rx: &mut impl OrderRx,
    tx: &mut impl EventTx,
    p: &Params,
    t0: u64,
    mut record: Option<&mut dyn Write>,
) -> EngineReport {
    let measure_from = t0 + p.warmup_ms * 1_000_000;
    let total = p.total();
    let mut events: Vec<EventMsg> = Vec::with_capacity(4096);
    let mut report = EngineReport {
        received: 0,
        events: 0,
        refused: 0,
        gaps: 0,
        out_of_order: 0,
        input: WireHash::default(),
        output: WireHash::default(),
        first_recv_ns: 0,
        last_done_ns: 0,
        processing: histogram(),
        inbound: histogram(),
    };
    let mut first_sequence = None;
    while report.received < total {
        let Some((sequence, request)) = rx.try_recv() else {
            rx.idle();
            continue;
        };
        let received_ns = now_ns();
        let index = report.received;
        let first = *first_sequence.get_or_insert(sequence);
        if sequence != first + index {
            report.out_of_order += 1;
        }
        events.clear();
        // Rejections are events like any other.
        let _ = engine.apply_stamped(&request, index, &mut events);
        let mut published = 0;
        while published < events.len() {
            match tx.try_send(&events[published..]) {
                0 => {
                    report.refused += 1;
                    std::hint::spin_loop();
                }
                n => published += n,
            }
        }
        let done_ns = now_ns();
        if request.gateway_ts_ns >= measure_from {
            report.processing.saturating_record(done_ns - received_ns);
            let sent = request.gateway_ts_ns + u64::from(request.send_delay_ns);
            report.inbound.saturating_record(received_ns.saturating_sub(sent));
        }
        if index == 0 {
            report.first_recv_ns = received_ns;
        }
        report.last_done_ns = done_ns;
        // Verification, after the timestamp: it is not the engine's work.
        report.input.add_words(&request.untimed().to_words());
        for event in &events {
            report.output.add_words(&event.untimed().to_words());
        }
        if let Some(out) = record.as_deref_mut() {
            out.write_all(&request.to_bytes()).expect("record input");
        }
        report.received += 1;
        report.events += events.len() as u64;
    }
    report.gaps = rx.gaps();
    report
}

struct SubscriberReport {
    requests: u64,
    undecodable: u64,
    out_of_order: u64,
    output: WireHash,
    last_arrival_ns: u64,
    service: Histogram<u64>,
    total: Histogram<u64>,
}

fn run_subscriber(rx: &mut impl EventRx, p: &Params, t0: u64, mut record: Option<&mut dyn Write>) -> SubscriberReport {
    let measure_from = t0 + p.warmup_ms * 1_000_000;
    let total_requests = p.total();
    let mut report = SubscriberReport {
        requests: 0,
        undecodable: 0,
        out_of_order: 0,
        output: WireHash::default(),
        last_arrival_ns: 0,
        service: histogram(),
        total: histogram(),
    };
    let mut current = u64::MAX;
    let mut engine_events = None;
    loop {
        let polled = rx.poll(|event| {
            if event.engine_seq != current {
                // The first event of the next request: the engine published all of this
                // request's events at once, after it had finished the request.
                let arrival = now_ns();
                if event.engine_seq != report.requests {
                    report.out_of_order += 1;
                }
                current = event.engine_seq;
                report.requests += 1;
                report.last_arrival_ns = arrival;
                if event.gateway_ts_ns >= measure_from {
                    let sent = event.gateway_ts_ns + u64::from(event.send_delay_ns);
                    report.service.saturating_record(arrival.saturating_sub(sent));
                    report
                        .total
                        .saturating_record(arrival.saturating_sub(event.gateway_ts_ns));
                }
            }
            if event.decode().is_err() {
                report.undecodable += 1;
            }
            let untimed = event.untimed();
            report.output.add_words(&untimed.to_words());
            if let Some(out) = record.as_deref_mut() {
                out.write_all(&untimed.to_bytes()).expect("record events");
            }
        });
        if polled > 0 {
            continue;
        }
        if report.requests >= total_requests {
            if engine_events.is_none() {
                engine_events = rx.engine_done();
            }
            // Every request's first event is here; the last request's later events may
            // still be on their way, and the engine's count says how many there are.
            if engine_events.is_some_and(|events| report.output.count >= events) {
                break;
            }
        }
        rx.idle();
    }
    report
}

// ---------------------------------------------------------------------------------------
// salias transports and the cross-process run

/// Start and end of a run, on a control channel (the data channels carry only data).
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Control {
    kind: u64,
    value: u64,
}

const READY: u64 = 1;
const GO: u64 = 2;
const ENGINE_DONE: u64 = 3;

struct Names {
    orders: String,
    events: String,
    ready: String,
    control: String,
}

impl Names {
    fn new(base: &str) -> Names {
        Names {
            orders: format!("{base}-orders"),
            events: format!("{base}-events"),
            ready: format!("{base}-ready"),
            control: format!("{base}-control"),
        }
    }
}

/// Checks in on the ready channel, then waits for the start time on the control channel.
fn ready_and_wait_for_start(
    names: &Names,
    control: &mut salias::Subscriber<Control, salias::Fifo, salias::Fanout>,
) -> u64 {
    let ready = FifoMpsc::<Control>::connect(&names.ready).expect("connect ready");
    ready
        .publisher()
        .expect("ready publisher")
        .send(&Control { kind: READY, value: 0 })
        .expect("report ready");
    loop {
        let message = *control.recv().expect("control");
        if message.kind == GO {
            return message.value;
        }
    }
}

struct SaliasOrderTx(salias::Publisher<OrderMsg, salias::Ordered, salias::Mpsc>);

impl OrderTx for SaliasOrderTx {
    fn try_send(&mut self, order: &OrderMsg) -> bool {
        match self.0.offer(order) {
            Ok(()) => true,
            Err(PublishError::Backpressured) => false,
            Err(e) => panic!("gateway offer: {e}"),
        }
    }
}

struct SaliasOrderRx(salias::Subscriber<OrderMsg, salias::Ordered, salias::Mpsc>);

impl OrderRx for SaliasOrderRx {
    fn try_recv(&mut self) -> Option<(u64, OrderMsg)> {
        let received = self.0.try_recv().expect("engine receive")?;
        Some((received.sequence(), *received))
    }

    fn idle(&mut self) {
        std::hint::spin_loop();
    }

    fn gaps(&self) -> u64 {
        self.0.gaps().missing
    }
}

struct SaliasEventTx(salias::Publisher<EventMsg, salias::Fifo, salias::Fanout>);

impl EventTx for SaliasEventTx {
    fn try_send(&mut self, events: &[EventMsg]) -> usize {
        match self.0.offer_batch(events) {
            Ok(n) => n,
            Err(PublishError::Backpressured) => 0,
            Err(e) => panic!("engine offer: {e}"),
        }
    }
}

struct SaliasEventRx {
    events: salias::Subscriber<EventMsg, salias::Fifo, salias::Fanout>,
    control: salias::Subscriber<Control, salias::Fifo, salias::Fanout>,
}

impl EventRx for SaliasEventRx {
    fn poll(&mut self, mut handle: impl FnMut(&EventMsg)) -> usize {
        let polled = self
            .events
            .poll(1024, |_, event| handle(event))
            .expect("subscriber poll");
        if polled > 0 {
            return polled;
        }
        // Nothing there: wait with the subscriber's strategy (a short spin, then a futex
        // sleep that the engine's next commit ends), so the core is free meanwhile.
        match self.events.recv_timeout(Duration::from_millis(1)) {
            Ok(event) => {
                handle(&event);
                1
            }
            Err(ReceiveError::TimedOut) => 0,
            Err(e) => panic!("subscriber receive: {e}"),
        }
    }

    fn idle(&mut self) {}

    fn engine_done(&mut self) -> Option<u64> {
        let mut done = None;
        self.control
            .poll(16, |_, message| {
                if message.kind == ENGINE_DONE {
                    done = Some(message.value);
                }
            })
            .expect("control poll");
        done
    }
}

fn record_file(p: &Params, name: &str) -> Option<std::io::BufWriter<std::fs::File>> {
    p.record
        .as_ref()
        .map(|dir| std::io::BufWriter::new(std::fs::File::create(dir.join(name)).expect("create record file")))
}

/// One role of a cross-process run, in this (child) process.
fn run_role(role: &str, base: &str, index: u32, p: &Params) {
    let names = Names::new(base);
    let control_channel = FifoFanout::<Control>::connect(&names.control).expect("connect control");
    // Subscribe before checking in: a fanout subscriber sees only what comes after it joins.
    let mut control = control_channel.subscriber().expect("control subscriber");
    match role {
        "gateway" => {
            place_role(p, p.gateway_core(index));
            precise_sleep();
            let requests = gateway_requests(p.seed, index, p.per_gateway());
            let channel = OrderedMpsc::<OrderMsg>::connect(&names.orders).expect("connect orders");
            let mut tx = SaliasOrderTx(channel.publisher().expect("gateway publisher"));
            let t0 = ready_and_wait_for_start(&names, &mut control);
            let report = run_gateway(&mut tx, index, p, &requests, t0);
            println!(
                "REPORT gateway {index} sent {} refused {} first_send {} last_send {} queueing {}",
                report.sent,
                report.refused,
                report.first_send_ns,
                report.last_send_ns,
                dump(report.queueing.as_ref().expect("histogram"))
            );
        }
        "engine" => {
            place_role(p, p.engine_core);
            let orders = OrderedMpsc::<OrderMsg>::connect(&names.orders).expect("connect orders");
            let events = FifoFanout::<EventMsg>::connect(&names.events).expect("connect events");
            let mut rx = SaliasOrderRx(orders.subscriber().expect("engine subscriber"));
            let mut tx = SaliasEventTx(events.publisher().expect("engine publisher"));
            let mut done = control_channel.publisher().expect("control publisher");
            let mut record = record_file(p, "input.bin");
            let engine = fresh_engine();
            let t0 = ready_and_wait_for_start(&names, &mut control);
            let report = run_engine(
                engine,
                &mut rx,
                &mut tx,
                p,
                t0,
                record.as_mut().map(|r| r as &mut dyn Write),
            );
            done.send(&Control {
                kind: ENGINE_DONE,
                value: report.events,
            })
            .expect("report done");
            if let Some(mut record) = record {
                record.flush().expect("flush record");
            }
            print_engine_report(&report);
        }
        _ => {
            place_role(p, p.subscriber_core(index));
            let events = FifoFanout::<EventMsg>::connect(&names.events).expect("connect events");
            let mut subscriber = events.subscriber().expect("market-data subscriber");
            precise_sleep();
            if p.subscriber_wait == "nap" {
                subscriber.set_wait_strategy(YieldThenNap);
            } else {
                subscriber.set_wait_strategy(Adaptive {
                    spins: 0,
                    yields: IDLE_YIELDS,
                    ..Adaptive::default()
                });
            }
            let mut rx = SaliasEventRx {
                events: subscriber,
                control,
            };
            let mut record = record_file(p, &format!("events-{index}.bin"));
            let t0 = ready_and_wait_for_start(&names, &mut rx.control);
            let report = run_subscriber(&mut rx, p, t0, record.as_mut().map(|r| r as &mut dyn Write));
            if let Some(mut record) = record {
                record.flush().expect("flush record");
            }
            print_subscriber_report(index, &report);
        }
    }
}

fn print_engine_report(r: &EngineReport) {
    println!(
        "REPORT engine 0 received {} events {} refused {} gaps {} out_of_order {} input_count {} input_hash {} output_count {} output_hash {} first_recv {} last_done {} processing {} inbound {}",
        r.received,
        r.events,
        r.refused,
        r.gaps,
        r.out_of_order,
        r.input.count,
        r.input.hash,
        r.output.count,
        r.output.hash,
        r.first_recv_ns,
        r.last_done_ns,
        dump(&r.processing),
        dump(&r.inbound)
    );
}

fn print_subscriber_report(index: u32, r: &SubscriberReport) {
    println!(
        "REPORT subscriber {index} requests {} undecodable {} out_of_order {} output_count {} output_hash {} last_arrival {} service {} total {}",
        r.requests,
        r.undecodable,
        r.out_of_order,
        r.output.count,
        r.output.hash,
        r.last_arrival_ns,
        dump(&r.service),
        dump(&r.total)
    );
}

/// What a run measured, whichever system ran it.
struct RunResult {
    t0: u64,
    gateways: Vec<GatewayReport>,
    engine: EngineReport,
    subscribers: Vec<SubscriberReport>,
}

/// Kills the children still running when a run fails (and panics).
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

fn key<'a>(words: &[&'a str], name: &str) -> &'a str {
    let at = words
        .iter()
        .position(|w| *w == name)
        .unwrap_or_else(|| panic!("{name} missing in report"));
    words[at + 1]
}

fn num(words: &[&str], name: &str) -> u64 {
    key(words, name).parse().expect("number in report")
}

fn run_salias(p: &Params, run: usize) -> RunResult {
    let base = format!("me-pipe-{}-{run}", std::process::id());
    let names = Names::new(&base);
    let children_count = p.gateways + 1 + p.subscribers;
    let _orders = OrderedMpsc::<OrderMsg>::create(
        &Config::new(names.orders.as_str())
            .publishers(p.gateways)
            .capacity(4 << 20),
    )
    .expect("create orders channel");
    let _events = FifoFanout::<EventMsg>::create(
        &Config::new(names.events.as_str())
            .subscribers(p.subscribers)
            .capacity(16 << 20),
    )
    .expect("create events channel");
    let ready = FifoMpsc::<Control>::create(
        &Config::new(names.ready.as_str())
            .publishers(children_count)
            .capacity(64 << 10),
    )
    .expect("create ready channel");
    let control = FifoFanout::<Control>::create(
        &Config::new(names.control.as_str())
            .publishers(2)
            .subscribers(children_count)
            .capacity(64 << 10),
    )
    .expect("create control channel");
    let mut ready_rx = ready.subscriber().expect("ready subscriber");
    let mut go = control.publisher().expect("control publisher");

    let exe = std::env::current_exe().expect("own executable");
    let mut children = Children(Vec::new());
    let roles = std::iter::once(("engine", 0))
        .chain((0..p.subscribers).map(|s| ("subscriber", s)))
        .chain((0..p.gateways).map(|g| ("gateway", g)));
    for (role, index) in roles {
        children.0.push(
            Command::new(&exe)
                .args(["--role", role, &base, &index.to_string()])
                .args(p.to_args())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn role"),
        );
    }
    // Everyone connected, subscribed and generated their requests: start 2 ms from now.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut checked_in = 0;
    while checked_in < children_count {
        match ready_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(_) => checked_in += 1,
            Err(ReceiveError::TimedOut) => {
                for child in &mut children.0 {
                    if let Ok(Some(status)) = child.try_wait() {
                        panic!("a pipeline process exited before the start: {status}");
                    }
                }
                assert!(Instant::now() < deadline, "pipeline processes did not check in");
            }
            Err(e) => panic!("ready channel: {e}"),
        }
    }
    let t0 = now_ns() + 2_000_000;
    go.send(&Control { kind: GO, value: t0 }).expect("start");

    let readers: Vec<_> = children
        .0
        .iter_mut()
        .map(|child| {
            let mut stdout = child.stdout.take().expect("piped stdout");
            std::thread::spawn(move || {
                let mut text = String::new();
                stdout.read_to_string(&mut text).expect("child output");
                text
            })
        })
        .collect();
    // A role that fails would leave the others waiting for it forever: watch them all,
    // and on the first failure panic, which kills the rest (`Children::drop`).
    loop {
        let mut running = 0;
        for child in &mut children.0 {
            match child.try_wait().expect("wait for role") {
                Some(status) => assert!(status.success(), "a pipeline process failed: {status}"),
                None => running += 1,
            }
        }
        if running == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let outputs: Vec<String> = readers.into_iter().map(|r| r.join().expect("reader")).collect();

    let mut result = RunResult {
        t0,
        gateways: Vec::new(),
        engine: EngineReport {
            received: 0,
            events: 0,
            refused: 0,
            gaps: 0,
            out_of_order: 0,
            input: WireHash::default(),
            output: WireHash::default(),
            first_recv_ns: 0,
            last_done_ns: 0,
            processing: histogram(),
            inbound: histogram(),
        },
        subscribers: Vec::new(),
    };
    for line in outputs
        .iter()
        .flat_map(|o| o.lines())
        .filter(|l| l.starts_with("REPORT "))
    {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w[1] {
            "gateway" => result.gateways.push(GatewayReport {
                sent: num(&w, "sent"),
                refused: num(&w, "refused"),
                first_send_ns: num(&w, "first_send"),
                last_send_ns: num(&w, "last_send"),
                queueing: Some(undump(key(&w, "queueing"))),
            }),
            "engine" => {
                result.engine = EngineReport {
                    received: num(&w, "received"),
                    events: num(&w, "events"),
                    refused: num(&w, "refused"),
                    gaps: num(&w, "gaps"),
                    out_of_order: num(&w, "out_of_order"),
                    input: WireHash {
                        count: num(&w, "input_count"),
                        hash: num(&w, "input_hash"),
                    },
                    output: WireHash {
                        count: num(&w, "output_count"),
                        hash: num(&w, "output_hash"),
                    },
                    first_recv_ns: num(&w, "first_recv"),
                    last_done_ns: num(&w, "last_done"),
                    processing: undump(key(&w, "processing")),
                    inbound: undump(key(&w, "inbound")),
                }
            }
            _ => result.subscribers.push(SubscriberReport {
                requests: num(&w, "requests"),
                undecodable: num(&w, "undecodable"),
                out_of_order: num(&w, "out_of_order"),
                output: WireHash {
                    count: num(&w, "output_count"),
                    hash: num(&w, "output_hash"),
                },
                last_arrival_ns: num(&w, "last_arrival"),
                service: undump(key(&w, "service")),
                total: undump(key(&w, "total")),
            }),
        }
    }
    assert_eq!(result.gateways.len(), p.gateways as usize, "a gateway did not report");
    assert_eq!(
        result.subscribers.len(),
        p.subscribers as usize,
        "a subscriber did not report"
    );
    result
}

// ---------------------------------------------------------------------------------------
// In-process baselines: the same roles as threads, pinned like the processes

/// A mutex + condvar queue, as in the textbook (and the C++ original's baseline): the
/// consumer sleeps on the condvar when the queue is empty, every push notifies.
struct LockedQueue<T> {
    queue: Mutex<VecDeque<T>>,
    ready: Condvar,
}

impl<T: Copy> LockedQueue<T> {
    fn new(capacity: usize) -> Arc<LockedQueue<T>> {
        Arc::new(LockedQueue {
            queue: Mutex::new(VecDeque::with_capacity(capacity)),
            ready: Condvar::new(),
        })
    }

    fn push_all(&self, items: &[T]) {
        self.queue.lock().expect("queue lock").extend(items.iter().copied());
        self.ready.notify_one();
    }

    fn pop(&self) -> Option<T> {
        self.queue.lock().expect("queue lock").pop_front()
    }

    /// Sleeps until something is queued (or 1 ms passes, so a finished run is noticed).
    fn wait(&self) {
        let queue = self.queue.lock().expect("queue lock");
        if queue.is_empty() {
            let _ = self
                .ready
                .wait_timeout(queue, Duration::from_millis(1))
                .expect("queue lock");
        }
    }
}

struct MutexOrderTx(Arc<LockedQueue<OrderMsg>>);

impl OrderTx for MutexOrderTx {
    fn try_send(&mut self, order: &OrderMsg) -> bool {
        self.0.push_all(std::slice::from_ref(order));
        true
    }
}

struct MutexOrderRx {
    queue: Arc<LockedQueue<OrderMsg>>,
    next: u64,
}

impl OrderRx for MutexOrderRx {
    fn try_recv(&mut self) -> Option<(u64, OrderMsg)> {
        let order = self.queue.pop()?;
        self.next += 1;
        Some((self.next - 1, order))
    }

    fn idle(&mut self) {
        self.queue.wait();
    }
}

struct MutexEventTx(Vec<Arc<LockedQueue<EventMsg>>>);

impl EventTx for MutexEventTx {
    fn try_send(&mut self, events: &[EventMsg]) -> usize {
        for queue in &self.0 {
            queue.push_all(events);
        }
        events.len()
    }
}

/// How the engine tells an in-process subscriber it has finished, and how many events.
#[derive(Default)]
struct DoneFlag {
    done: AtomicBool,
    events: AtomicU64,
}

impl DoneFlag {
    fn set(&self, events: u64) {
        self.events.store(events, Ordering::Relaxed);
        self.done.store(true, Ordering::Release);
    }

    fn get(&self) -> Option<u64> {
        self.done
            .load(Ordering::Acquire)
            .then(|| self.events.load(Ordering::Relaxed))
    }
}

struct MutexEventRx {
    queue: Arc<LockedQueue<EventMsg>>,
    done: Arc<DoneFlag>,
    batch: Vec<EventMsg>,
}

impl EventRx for MutexEventRx {
    fn poll(&mut self, mut handle: impl FnMut(&EventMsg)) -> usize {
        // Take everything queued under one lock, then handle it outside the lock.
        self.batch.clear();
        self.batch
            .extend(self.queue.queue.lock().expect("queue lock").drain(..));
        for event in &self.batch {
            handle(event);
        }
        self.batch.len()
    }

    fn idle(&mut self) {
        self.queue.wait();
    }

    fn engine_done(&mut self) -> Option<u64> {
        self.done.get()
    }
}

/// Lock-free: one `rtrb` SPSC ring per gateway into the engine, which takes from them in
/// turn (so the merged order is the engine's, not a global sequence), and one ring per
/// subscriber out of it.
struct RingOrderTx(rtrb::Producer<OrderMsg>);

impl OrderTx for RingOrderTx {
    fn try_send(&mut self, order: &OrderMsg) -> bool {
        self.0.push(*order).is_ok()
    }
}

struct RingOrderRx {
    rings: Vec<rtrb::Consumer<OrderMsg>>,
    turn: usize,
    next: u64,
}

impl OrderRx for RingOrderRx {
    fn try_recv(&mut self) -> Option<(u64, OrderMsg)> {
        for _ in 0..self.rings.len() {
            let ring = self.turn;
            self.turn = (self.turn + 1) % self.rings.len();
            if let Ok(order) = self.rings[ring].pop() {
                self.next += 1;
                return Some((self.next - 1, order));
            }
        }
        None
    }

    fn idle(&mut self) {
        std::hint::spin_loop();
    }
}

/// Lets a lock-free subscriber sleep when idle instead of holding the core it shares:
/// it raises `sleeping`, checks its ring once more and parks; the engine, after pushing,
/// unparks it if the flag is up. The `SeqCst` fences on both sides make sure that either
/// the subscriber sees the new event or the engine sees the flag.
#[derive(Default)]
struct Sleeper {
    sleeping: AtomicBool,
    thread: std::sync::OnceLock<std::thread::Thread>,
}

impl Sleeper {
    fn wake(&self) {
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed)
            && let Some(thread) = self.thread.get()
        {
            thread.unpark();
        }
    }
}

struct RingEventTx(Vec<(rtrb::Producer<EventMsg>, Arc<Sleeper>)>);

impl EventTx for RingEventTx {
    fn try_send(&mut self, events: &[EventMsg]) -> usize {
        // All-or-nothing per batch, so every subscriber gets the same events.
        if self.0.iter().any(|(ring, _)| ring.slots() < events.len()) {
            return 0;
        }
        for (ring, sleeper) in &mut self.0 {
            for event in events {
                let _ = ring.push(*event);
            }
            sleeper.wake();
        }
        events.len()
    }
}

struct RingEventRx {
    ring: rtrb::Consumer<EventMsg>,
    nap: bool,
    sleeper: Arc<Sleeper>,
    done: Arc<DoneFlag>,
    idle_polls: u32,
}

impl EventRx for RingEventRx {
    fn poll(&mut self, mut handle: impl FnMut(&EventMsg)) -> usize {
        let mut count = 0;
        while let Ok(event) = self.ring.pop() {
            handle(&event);
            count += 1;
        }
        if count > 0 {
            self.idle_polls = 0;
        }
        count
    }

    /// Like the salias subscriber's strategy: a few yields, then sleep until woken (or nap).
    fn idle(&mut self) {
        self.idle_polls += 1;
        if self.idle_polls < IDLE_YIELDS {
            std::thread::yield_now();
            return;
        }
        if self.nap {
            std::thread::sleep(NAP);
            return;
        }
        self.idle_polls = 0;
        self.sleeper.thread.get_or_init(std::thread::current);
        self.sleeper.sleeping.store(true, Ordering::Relaxed);
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.ring.is_empty() {
            std::thread::park_timeout(Duration::from_millis(1));
        }
        self.sleeper.sleeping.store(false, Ordering::Relaxed);
    }

    fn engine_done(&mut self) -> Option<u64> {
        self.done.get()
    }
}

/// Runs the roles as pinned threads over the given transports.
fn run_threads<OT, OR, ET, ER>(
    p: &Params,
    order_txs: Vec<OT>,
    mut order_rx: OR,
    mut event_tx: ET,
    event_rxs: Vec<ER>,
    done: Arc<DoneFlag>,
) -> RunResult
where
    OT: OrderTx + Send + 'static,
    OR: OrderRx + Send + 'static,
    ET: EventTx + Send + 'static,
    ER: EventRx + Send + 'static,
{
    let parties = p.gateways as usize + 1 + p.subscribers as usize + 1;
    let ready = Arc::new(std::sync::Barrier::new(parties));
    let start = Arc::new(std::sync::Barrier::new(parties));
    let t0_cell = Arc::new(AtomicU64::new(0));
    let take_t0 = {
        let (ready, start, t0_cell) = (ready.clone(), start.clone(), t0_cell.clone());
        move || {
            ready.wait();
            start.wait();
            t0_cell.load(Ordering::Acquire)
        }
    };
    let gateways: Vec<_> = order_txs
        .into_iter()
        .enumerate()
        .map(|(g, mut tx)| {
            let (p, take_t0) = (p.clone(), take_t0.clone());
            std::thread::spawn(move || {
                place_role(&p, p.gateway_core(g as u32));
                precise_sleep();
                let requests = gateway_requests(p.seed, g as u32, p.per_gateway());
                let t0 = take_t0();
                run_gateway(&mut tx, g as u32, &p, &requests, t0)
            })
        })
        .collect();
    let engine = {
        let (p, take_t0, done) = (p.clone(), take_t0.clone(), done.clone());
        std::thread::spawn(move || {
            place_role(&p, p.engine_core);
            let engine = fresh_engine();
            let t0 = take_t0();
            let report = run_engine(engine, &mut order_rx, &mut event_tx, &p, t0, None);
            done.set(report.events);
            report
        })
    };
    let subscribers: Vec<_> = event_rxs
        .into_iter()
        .enumerate()
        .map(|(s, mut rx)| {
            let (p, take_t0) = (p.clone(), take_t0.clone());
            std::thread::spawn(move || {
                place_role(&p, p.subscriber_core(s as u32));
                precise_sleep();
                let t0 = take_t0();
                run_subscriber(&mut rx, &p, t0, None)
            })
        })
        .collect();
    ready.wait();
    let t0 = now_ns() + 2_000_000;
    t0_cell.store(t0, Ordering::Release);
    start.wait();
    RunResult {
        t0,
        gateways: gateways
            .into_iter()
            .map(|h| h.join().expect("gateway thread"))
            .collect(),
        engine: engine.join().expect("engine thread"),
        subscribers: subscribers
            .into_iter()
            .map(|h| h.join().expect("subscriber thread"))
            .collect(),
    }
}

fn run_mutex(p: &Params) -> RunResult {
    let orders = LockedQueue::new(p.total() as usize);
    let done = Arc::new(DoneFlag::default());
    let event_queues: Vec<_> = (0..p.subscribers).map(|_| LockedQueue::new(1 << 16)).collect();
    run_threads(
        p,
        (0..p.gateways).map(|_| MutexOrderTx(orders.clone())).collect(),
        MutexOrderRx { queue: orders, next: 0 },
        MutexEventTx(event_queues.clone()),
        event_queues
            .into_iter()
            .map(|queue| MutexEventRx {
                queue,
                done: done.clone(),
                batch: Vec::with_capacity(1 << 16),
            })
            .collect(),
        done,
    )
}

fn run_lockfree(p: &Params) -> RunResult {
    // The same room as the salias rings: 4 MiB of requests per gateway, 16 MiB of events.
    let (order_txs, order_rxs): (Vec<_>, Vec<_>) = (0..p.gateways)
        .map(|_| rtrb::RingBuffer::<OrderMsg>::new((4 << 20) / 64))
        .unzip();
    let (event_txs, event_rxs): (Vec<_>, Vec<_>) = (0..p.subscribers)
        .map(|_| {
            let (tx, rx) = rtrb::RingBuffer::<EventMsg>::new((16 << 20) / 64);
            let sleeper = Arc::new(Sleeper::default());
            ((tx, sleeper.clone()), (rx, sleeper))
        })
        .unzip();
    let done = Arc::new(DoneFlag::default());
    run_threads(
        p,
        order_txs.into_iter().map(RingOrderTx).collect(),
        RingOrderRx {
            rings: order_rxs,
            turn: 0,
            next: 0,
        },
        RingEventTx(event_txs),
        event_rxs
            .into_iter()
            .map(|(ring, sleeper)| RingEventRx {
                ring,
                nap: p.subscriber_wait == "nap",
                sleeper,
                done: done.clone(),
                idle_polls: 0,
            })
            .collect(),
        done,
    )
}

// ---------------------------------------------------------------------------------------
// Checking and reporting a run

struct Summary {
    offered: f64,
    achieved: f64,
    requests: u64,
    events: u64,
    refused_gateway: u64,
    refused_engine: u64,
    queueing: Histogram<u64>,
    service: Histogram<u64>,
    total: Histogram<u64>,
    processing: Histogram<u64>,
    inbound: Histogram<u64>,
}

/// Checks counts and hashes across every role; Err says what disagreed.
fn verify(p: &Params, r: &RunResult) -> Result<Summary, String> {
    let total = p.total();
    let sent: u64 = r.gateways.iter().map(|g| g.sent).sum();
    let e = &r.engine;
    let mut problems = Vec::new();
    if sent != total {
        problems.push(format!("gateways sent {sent} of {total} requests"));
    }
    if e.received != total || e.input.count != total {
        problems.push(format!("engine received {} of {total} requests", e.received));
    }
    if e.gaps != 0 || e.out_of_order != 0 {
        problems.push(format!("engine saw {} gaps, {} out of order", e.gaps, e.out_of_order));
    }
    if e.output.count != e.events || e.events < total {
        problems.push(format!("engine published {} events for {total} requests", e.events));
    }
    for (s, sub) in r.subscribers.iter().enumerate() {
        if sub.requests != total || sub.out_of_order != 0 || sub.undecodable != 0 {
            problems.push(format!(
                "subscriber {s}: {} requests, {} out of order, {} undecodable",
                sub.requests, sub.out_of_order, sub.undecodable
            ));
        }
        if sub.output != e.output {
            problems.push(format!(
                "subscriber {s} received {} events hashing to {:#x}; the engine published {} hashing to {:#x}",
                sub.output.count, sub.output.hash, e.output.count, e.output.hash
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let mut queueing = histogram();
    for g in &r.gateways {
        queueing
            .add(g.queueing.as_ref().expect("histogram"))
            .expect("same bounds");
    }
    let (mut service, mut all) = (histogram(), histogram());
    for s in &r.subscribers {
        service.add(&s.service).expect("same bounds");
        all.add(&s.total).expect("same bounds");
    }
    // Achieved: requests answered (first event at subscriber 0) per second from t0.
    let last = r.subscribers[0].last_arrival_ns;
    Ok(Summary {
        offered: p.rate,
        achieved: total as f64 / ((last - r.t0) as f64 / 1e9),
        requests: total,
        events: e.events,
        refused_gateway: r.gateways.iter().map(|g| g.refused).sum(),
        refused_engine: e.refused,
        queueing,
        service,
        total: all,
        processing: e.processing.clone(),
        inbound: e.inbound.clone(),
    })
}

fn run_system(system: &str, p: &Params, run: usize) -> RunResult {
    match system {
        "mutex" => run_mutex(p),
        "lockfree" => run_lockfree(p),
        _ => run_salias(p, run),
    }
}

fn machine() -> (String, usize, String) {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown cpu".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cpu, cores, kernel.trim().to_owned())
}

/// Busy (non-idle) share of all cores over `window`, from /proc/stat: how much else was
/// running just before a run, recorded with the run (this machine is shared).
fn cpu_busy(window: Duration) -> f64 {
    let sample = || -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let fields: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        let idle = fields.get(3)? + fields.get(4).unwrap_or(&0);
        Some((fields.iter().sum(), idle))
    };
    let (Some((total_a, idle_a)), Some((total_b, idle_b))) = (sample(), {
        std::thread::sleep(window);
        sample()
    }) else {
        return f64::NAN;
    };
    let total = (total_b - total_a).max(1) as f64;
    1.0 - (idle_b - idle_a) as f64 / total
}

/// Waits (up to `patience`) until the machine is nearly idle; returns the last reading.
fn wait_for_quiet(patience: Duration) -> f64 {
    let deadline = Instant::now() + patience;
    loop {
        let busy = cpu_busy(Duration::from_millis(100));
        if busy < 0.10 || Instant::now() >= deadline {
            return busy;
        }
    }
}

/// The machine's floor between two cores (BENCHMARKING.md rule 7): a bare cache-line
/// ping-pong between two threads pinned to them; one way = round trip / 2. Both sides are
/// spawned threads so that the main thread's affinity, which children inherit, stays as
/// it was.
fn cache_line_floor(a: usize, b: usize) -> Histogram<u64> {
    const PINGS: u64 = 100_000;
    let line = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let pong = {
        let line = line.clone();
        std::thread::spawn(move || {
            pin(b);
            for i in 1..=PINGS {
                while line[0].load(Ordering::Acquire) != i {
                    std::hint::spin_loop();
                }
                line[1].store(i, Ordering::Release);
            }
        })
    };
    let ping = std::thread::spawn(move || {
        pin(a);
        let mut one_way = histogram();
        for i in 1..=PINGS {
            let sent = now_ns();
            line[0].store(i, Ordering::Release);
            while line[1].load(Ordering::Acquire) != i {
                std::hint::spin_loop();
            }
            one_way.saturating_record((now_ns() - sent) / 2);
        }
        one_way
    });
    pong.join().expect("pong thread");
    ping.join().expect("ping thread")
}

/// The machine's floor for gateway pacing: `waiters` threads pinned to `core` wait with
/// the gateways' `wait_until` (`how`: yield or sleep) for planned times that together come
/// `rate` times a second, for 200 ms. Returns how late they were.
fn pacing_floor(core: usize, waiters: u64, rate: f64, how: &'static str) -> Histogram<u64> {
    let interval = 1e9 / rate;
    let per_waiter = (rate * 0.2) as u64 / waiters;
    let t0 = now_ns() + 10_000_000;
    let threads: Vec<_> = (0..waiters)
        .map(|w| {
            std::thread::spawn(move || {
                pin(core);
                precise_sleep();
                let mut late = histogram();
                for i in 0..per_waiter {
                    let planned = t0 + ((i * waiters + w) as f64 * interval) as u64;
                    wait_until(planned, how);
                    late.saturating_record(now_ns() - planned);
                }
                late
            })
        })
        .collect();
    let mut late = histogram();
    for thread in threads {
        late.add(thread.join().expect("pacing thread"))
            .expect("same histogram bounds");
    }
    late
}

fn json_string(s: &str) -> String {
    format!("{s:?}")
}

fn print_summary(system: &str, p: &Params, s: &Summary) {
    println!(
        "{system}: offered {:.0} req/s, achieved {:.0} req/s; {} requests, {} events; refused offers: gateways {}, engine {}",
        s.offered, s.achieved, s.requests, s.events, s.refused_gateway, s.refused_engine
    );
    println!("  queueing   (send - planned)     {}", percentiles_line(&s.queueing));
    println!("  service    (arrival - send)     {}", percentiles_line(&s.service));
    println!("  total      (arrival - planned)  {}", percentiles_line(&s.total));
    println!("  to engine  (received - send)    {}", percentiles_line(&s.inbound));
    println!("  engine     (per request)        {}", percentiles_line(&s.processing));
    println!("  placement: {}", p.placement());
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let options = match parse(&args[1..]) {
        Ok(options) => options,
        Err(problem) => {
            eprintln!("pipeline: {problem}");
            return ExitCode::FAILURE;
        }
    };
    let p = options.params.clone();
    if let Some((role, base, index)) = &options.role {
        run_role(role, base, *index, &p);
        return ExitCode::SUCCESS;
    }
    if let Some(priority) = p.realtime {
        // Find out now, on a throwaway thread, rather than in the middle of a run.
        let probe = std::thread::spawn(move || round_robin(priority)).join();
        if let Ok(Err(problem)) = probe {
            eprintln!("pipeline: --realtime: {problem}");
            return ExitCode::FAILURE;
        }
    }
    if let Some(dir) = &p.record {
        std::fs::create_dir_all(dir).expect("create record directory");
    }
    let systems: Vec<&str> = match options.system.as_str() {
        "all" => vec!["mutex", "lockfree", "salias"],
        one => vec![one],
    };
    let (cpu, cores, kernel) = machine();
    // Recorded as the command that reproduces the run from the repository.
    let command = format!(
        "cargo run --release -p matching-engine --bin pipeline -- {}",
        args[1..].join(" ")
    );

    if !options.sweep {
        println!(
            "matching-engine pipeline on {cpu}, {cores} cores, Linux {kernel}: {} gateway(s), 1 engine, {} subscriber(s); {:.0} ms at {:.0} requests/s offered, first {} ms not measured",
            p.gateways, p.subscribers, p.duration_ms as f64, p.rate, p.warmup_ms
        );
        let mut failed = false;
        for (run, system) in systems.iter().enumerate() {
            let result = run_system(system, &p, run);
            match verify(&p, &result) {
                Ok(summary) => {
                    print_summary(system, &p, &summary);
                    println!(
                        "  verified: {} requests in, input hash {:#018x}; {} events out, every subscriber's hash {:#018x} matches the engine's",
                        result.engine.input.count,
                        result.engine.input.hash,
                        result.engine.output.count,
                        result.engine.output.hash
                    );
                    if *system == "salias" {
                        println!(
                            "RESULT input_count {} input_hash {} output_count {} output_hash {}",
                            result.engine.input.count,
                            result.engine.input.hash,
                            result.engine.output.count,
                            result.engine.output.hash
                        );
                    }
                }
                Err(problem) => {
                    eprintln!("{system}: VERIFICATION FAILED: {problem}");
                    failed = true;
                }
            }
        }
        return if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS };
    }

    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    std::fs::create_dir_all(&out_dir).expect("results directory");
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    let out_path = out_dir.join(format!("pipeline-{stamp}.jsonl"));
    let mut out = std::fs::File::create(&out_path).expect("results file");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    writeln!(
        out,
        "{{\"type\":\"machine\",\"cpu\":{},\"nproc\":{cores},\"kernel\":{},\"loadavg_before\":{},\"command\":{},\"placement\":{},\"gateways\":{},\"subscribers\":{},\"duration_ms\":{},\"warmup_ms\":{},\"rounds\":{},\"quiet_wait_s\":{},\"seed\":{},\"realtime\":{}}}",
        json_string(&cpu),
        json_string(&kernel),
        json_string(load.trim()),
        json_string(&command),
        json_string(&p.placement()),
        p.gateways,
        p.subscribers,
        p.duration_ms,
        p.warmup_ms,
        options.rounds,
        options.quiet_wait_s,
        p.seed,
        p.realtime.map_or("null".to_owned(), |priority| priority.to_string())
    )
    .expect("write results");
    println!(
        "sweep on {cpu}, {cores} cores, Linux {kernel}; placement {}; rates {:?}; {} rounds of {} ms each, systems alternating; raw data {}",
        p.placement(),
        options.rates,
        options.rounds,
        p.duration_ms,
        out_path.display()
    );
    let floor_cores = (p.gateway_core(0), p.engine_core);
    let write_floor = |out: &mut std::fs::File, when: &str| {
        let floor = cache_line_floor(floor_cores.0, floor_cores.1);
        println!(
            "cache-line floor between cores {} and {} ({when}), one way: {}",
            floor_cores.0,
            floor_cores.1,
            percentiles_line(&floor)
        );
        writeln!(
            out,
            "{{\"type\":\"floor\",\"when\":{},\"cores\":[{},{}],\"one_way_ns\":{}}}",
            json_string(when),
            floor_cores.0,
            floor_cores.1,
            percentiles_json(&floor)
        )
        .expect("write results");
    };
    write_floor(&mut out, "before");
    for (waiters, how) in [(1, "sleep"), (2, "sleep"), (2, "yield")] {
        const RATE: f64 = 100_000.0;
        let core = p.gateway_core(0);
        let late = pacing_floor(core, waiters, RATE, how);
        println!(
            "pacing floor, {waiters} thread(s) on core {core} waiting by {how} for {RATE} planned times/s in total, lateness: {}",
            percentiles_line(&late)
        );
        writeln!(
            out,
            "{{\"type\":\"pacing_floor\",\"core\":{core},\"threads\":{waiters},\"wait\":{},\"rate_per_s\":{RATE},\"late_ns\":{}}}",
            json_string(how),
            percentiles_json(&late)
        )
        .expect("write results");
    }
    let started = Instant::now();
    let mut run = 0;
    let mut failed = false;
    for round in 0..options.rounds {
        for &rate in &options.rates {
            for system in &systems {
                let params = Params { rate, ..p.clone() };
                let busy_before = wait_for_quiet(Duration::from_secs(options.quiet_wait_s));
                let result = run_system(system, &params, run);
                run += 1;
                let summary = match verify(&params, &result) {
                    Ok(summary) => summary,
                    Err(problem) => {
                        eprintln!("{system} at {rate} req/s, round {round}: VERIFICATION FAILED: {problem}");
                        failed = true;
                        continue;
                    }
                };
                writeln!(
                    out,
                    "{{\"type\":\"run\",\"system\":{},\"round\":{round},\"cpu_busy_before\":{busy_before:.3},\"offered_per_s\":{rate},\"achieved_per_s\":{:.0},\"requests\":{},\"events\":{},\"refused_gateway\":{},\"refused_engine\":{},\"verified\":true,\"input_hash\":{},\"output_hash\":{},\"queueing_ns\":{},\"service_ns\":{},\"total_ns\":{},\"engine_ns\":{},\"inbound_ns\":{}}}",
                    json_string(system),
                    summary.achieved,
                    summary.requests,
                    summary.events,
                    summary.refused_gateway,
                    summary.refused_engine,
                    json_string(&format!("{:#018x}", result.engine.input.hash)),
                    json_string(&format!("{:#018x}", result.engine.output.hash)),
                    percentiles_json(&summary.queueing),
                    percentiles_json(&summary.service),
                    percentiles_json(&summary.total),
                    percentiles_json(&summary.processing),
                    percentiles_json(&summary.inbound)
                )
                .expect("write results");
                println!(
                    "round {round} {system:>8} offered {:>9.0}/s achieved {:>9.0}/s  total p50 {:>8.2} µs p99 {:>9.2} µs  service p50 {:>7.2} µs  engine p50 {:>5} ns",
                    rate,
                    summary.achieved,
                    summary.total.value_at_quantile(0.5) as f64 / 1000.0,
                    summary.total.value_at_quantile(0.99) as f64 / 1000.0,
                    summary.service.value_at_quantile(0.5) as f64 / 1000.0,
                    summary.processing.value_at_quantile(0.5)
                );
            }
        }
        eprintln!(
            "round {}/{} done after {:.1?}",
            round + 1,
            options.rounds,
            started.elapsed()
        );
    }
    write_floor(&mut out, "after");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    writeln!(
        out,
        "{{\"type\":\"end\",\"loadavg_after\":{},\"seconds\":{:.1},\"failed\":{failed}}}",
        json_string(load.trim()),
        started.elapsed().as_secs_f64()
    )
    .expect("write results");
    println!("raw data: {}", out_path.display());
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
