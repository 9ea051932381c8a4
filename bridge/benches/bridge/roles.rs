//! The benchmark's processes: a source and a sink on salias channels (with the bridges
//! between them), and a source and a sink on zenoh alone. Each is this executable
//! re-run with a role; it reports one JSON line on stdout.

use std::io::BufRead;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hdrhistogram::Histogram;
use salias::{Config, FifoMpsc, SaliasMessage};
use serde_json::{Value, json};
use zenoh::Wait;
use zenoh::qos::CongestionControl;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// 64 bytes, as in the library's own benchmarks.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Msg {
    pub seq: u64,
    /// When it was meant to be sent (open loop), CLOCK_MONOTONIC ns.
    pub planned_ns: u64,
    /// When it was sent.
    pub sent_ns: u64,
    /// 0: warm-up, 1: measured.
    pub phase: u64,
    pub check: [u64; 4],
}

const WARM: u64 = 0;
const DATA: u64 = 1;
/// Warm-up messages before the barrier: they set up every hop (and zenoh's routes).
pub const WARMUP: u64 = 100;

impl Msg {
    fn new(seq: u64, planned_ns: u64, phase: u64) -> Msg {
        let c = seq.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Msg {
            seq,
            planned_ns,
            sent_ns: now_ns(),
            phase,
            check: [c, c ^ 1, c ^ 2, c ^ 3],
        }
    }
    fn intact(&self) -> bool {
        let c = self.seq.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.check == [c, c ^ 1, c ^ 2, c ^ 3]
    }
}

pub use support::clock::now_ns;

/// Pins this process (and what it starts) to `core`.
pub fn pin(core: usize) {
    support::cores::pin(core).unwrap_or_else(|e| panic!("{e}"));
}

/// What a source sends: `count` messages, flooded (`rate` 0) or at planned times.
#[derive(Clone, Copy)]
pub struct Plan {
    pub count: u64,
    pub rate: u64,
}

/// Sends warm-up messages until the parent says go (a line on stdin), then the plan.
/// `offer` returns whether the message was taken (false: refused, try again).
fn run_source(plan: Plan, mut offer: impl FnMut(&Msg) -> bool) -> Value {
    // Warm-up: the sink reports "ready" to the parent when one arrives.
    let stdin = std::io::stdin();
    let go = std::thread::spawn(move || {
        let mut line = String::new();
        let _ = stdin.lock().read_line(&mut line);
    });
    let mut warm = 0;
    while !go.is_finished() {
        if warm < WARMUP {
            let _ = offer(&Msg::new(warm, 0, WARM));
            warm += 1;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let (mut refused, mut offers) = (0u64, 0u64);
    let interval = 1_000_000_000u64.checked_div(plan.rate).unwrap_or(0);
    let start = now_ns();
    for seq in 0..plan.count {
        let planned = start + seq * interval;
        // Sleep, then yield, until the planned time: the source shares its core with
        // `out` (or zenoh's threads), which a spinning source would starve.
        loop {
            let now = now_ns();
            if now >= planned {
                break;
            }
            if planned - now > 100_000 {
                std::thread::sleep(Duration::from_nanos(planned - now - 50_000));
            } else {
                std::thread::yield_now();
            }
        }
        loop {
            offers += 1;
            // A flood is not a latency run: no planned time.
            if offer(&Msg::new(seq, if interval > 0 { planned } else { 0 }, DATA)) {
                break;
            }
            refused += 1;
            std::thread::yield_now();
        }
    }
    json!({"role": "source", "offers": offers, "refused": refused, "start_ns": start})
}

/// Receives until `count` measured messages arrived; checks count, order and contents.
struct Tally {
    count: u64,
    next: u64,
    bad: u64,
    first_sent: u64,
    last_recv: u64,
    total: Histogram<u64>,
    queueing: Histogram<u64>,
    service: Histogram<u64>,
    ready: bool,
}

impl Tally {
    fn new() -> Tally {
        let h = support::hist::histogram;
        Tally {
            count: 0,
            next: 0,
            bad: 0,
            first_sent: 0,
            last_recv: 0,
            total: h(),
            queueing: h(),
            service: h(),
            ready: false,
        }
    }

    /// Returns true once the last measured message arrived.
    fn take(&mut self, m: &Msg, expected: u64) -> bool {
        let now = now_ns();
        if m.phase == WARM {
            if !self.ready {
                self.ready = true;
                println!("ready");
            }
            return false;
        }
        if m.seq != self.next || !m.intact() {
            self.bad += 1;
        }
        if self.count == 0 {
            self.first_sent = m.sent_ns;
        }
        self.next = m.seq + 1;
        self.count += 1;
        self.last_recv = now;
        if m.planned_ns > 0 {
            let _ = self.total.record(now.saturating_sub(m.planned_ns).max(1));
            let _ = self.queueing.record(m.sent_ns.saturating_sub(m.planned_ns).max(1));
            let _ = self.service.record(now.saturating_sub(m.sent_ns).max(1));
        }
        self.count >= expected
    }

    fn report(&self) -> Value {
        let pct =
            |h: &Histogram<u64>| serde_json::to_value(support::hist::Quantiles::of(h)).expect("quantiles serialise");
        json!({"role": "sink", "count": self.count, "bad": self.bad, "first_sent_ns": self.first_sent,
               "last_recv_ns": self.last_recv, "total_ns": pct(&self.total), "queueing_ns": pct(&self.queueing),
               "service_ns": pct(&self.service)})
    }
}

pub fn salias_source(channel: &str, plan: Plan) -> Value {
    let channel = FifoMpsc::<Msg>::connect(channel).expect("the source channel");
    let mut publisher = channel.publisher().expect("a publisher slot");
    run_source(plan, |m| match publisher.offer(m) {
        Ok(()) => true,
        Err(salias::PublishError::Backpressured) => false,
        Err(e) => panic!("{e}"),
    })
}

pub fn salias_sink(channel: &str, count: u64) -> Value {
    let channel = FifoMpsc::<Msg>::connect(channel).expect("the sink channel");
    let mut subscriber = channel.subscriber().expect("the subscriber slot");
    let mut tally = Tally::new();
    loop {
        let m = *subscriber
            .recv_timeout(Duration::from_secs(60))
            .expect("messages keep coming");
        if tally.take(&m, count) {
            return tally.report();
        }
    }
}

fn session(endpoint: &str, listen: bool) -> zenoh::Session {
    let mut config = zenoh::Config::default();
    let key = if listen {
        "listen/endpoints"
    } else {
        "connect/endpoints"
    };
    config.insert_json5("mode", "\"peer\"").expect("mode");
    config
        .insert_json5(key, &format!("[\"{endpoint}\"]"))
        .expect("endpoint");
    config
        .insert_json5("scouting/multicast/enabled", "false")
        .expect("scouting");
    zenoh::open(config).wait().expect("a zenoh session")
}

/// zenoh alone: one put per message, blocking congestion control, as a zenoh user would.
pub fn zenoh_source(endpoint: &str, key: &str, plan: Plan) -> Value {
    let session = session(endpoint, false);
    let publisher = session
        .declare_publisher(key.to_owned())
        .congestion_control(CongestionControl::Block)
        .wait()
        .expect("a zenoh publisher");
    run_source(plan, |m| {
        publisher.put(m.as_bytes()).wait().expect("put");
        true
    })
}

pub fn zenoh_sink(endpoint: &str, key: &str, count: u64) -> Value {
    let session = session(endpoint, true);
    let tally = Arc::new(Mutex::new(Tally::new()));
    let (done, finished) = std::sync::mpsc::channel();
    let in_callback = tally.clone();
    let _subscriber = session
        .declare_subscriber(key.to_owned())
        .callback(move |sample| {
            let bytes = sample.payload().to_bytes();
            let m = Msg::read_from_bytes(&bytes).expect("64-byte messages");
            if in_callback.lock().expect("tally").take(&m, count) {
                let _ = done.send(());
            }
        })
        .wait()
        .expect("a zenoh subscriber");
    println!("listening");
    finished
        .recv_timeout(Duration::from_secs(120))
        .expect("every message arrives");
    tally.lock().expect("tally").report()
}

/// The channels of one bridge run, made by the parent.
pub fn channels(from: &str, to: &str) -> (FifoMpsc<Msg>, FifoMpsc<Msg>) {
    let config = |name| Config::new(name).capacity(4 << 20);
    (
        FifoMpsc::<Msg>::create(&config(from)).expect("the source channel"),
        FifoMpsc::<Msg>::create(&config(to)).expect("the sink channel"),
    )
}
