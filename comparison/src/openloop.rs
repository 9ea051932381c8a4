//! Open-loop latency (BENCHMARKING.md rule 5): the publisher sends message i at its planned
//! time t0 + i·Δ, never skipping or rebasing the plan when it falls behind, and stamps the
//! planned and the actual send time into the message (words[0], words[1]); the subscriber
//! stamps the receive time. All stamps are CLOCK_MONOTONIC ns, one clock for every process
//! on the machine. Queueing = sent − planned, service = received − sent, total = received −
//! planned, each in an HdrHistogram (1 ns resolution, 3 significant digits). The first
//! `warmup` messages follow the same plan but are not recorded.

use std::io::BufRead;

use crate::message::{Msg64, stamped};
use crate::platform::{interrupted, latency_cores, now_ns};
use crate::roles::ChildArgs;
use crate::roles::spawn_role;
use crate::shm::Barrier;
use crate::throughput::{Api, Ctx, Setup, create_resources, unique_name};
use crate::verification::Verifier;

/// Planned send time of message `i`: Δ is given in picoseconds so that rates like
/// 3 M msg/s (333.3 ns) keep their exact mean.
#[inline(always)]
pub fn planned_ns(t0: u64, i: u64, interval_ps: u64) -> u64 {
    t0 + ((i as u128 * interval_ps as u128) / 1000) as u64
}

/// Runs the plan: for each message, busy-waits until its planned time (if already late,
/// sends at once), then calls `try_send(message)` until it is accepted, restamping the send
/// time on each retry. Reports attempts, refusals and how long the plan took.
pub fn openloop_publish(a: &ChildArgs, barrier: &Barrier, mut try_send: impl FnMut(&Msg64) -> bool) {
    let interval_ps: u64 = a.rest[0].parse().unwrap();
    let (mut attempts, mut refused, mut late) = (0u64, 0u64, 0u64);
    barrier.arrive_and_wait();
    let t0 = now_ns();
    let mut last_sent = t0;
    for seq in 0..a.messages {
        let planned = planned_ns(t0, seq, interval_ps);
        let mut now = now_ns();
        if now > planned {
            late += 1;
        }
        while now < planned {
            std::hint::spin_loop();
            now = now_ns();
        }
        // The first attempt goes out stamped with the clock read that ended the wait (one
        // clock read per message at high rates); a retry after a refusal is restamped.
        let mut sent = now;
        loop {
            attempts += 1;
            if try_send(&stamped(a.index, seq, planned, sent)) {
                last_sent = sent;
                break;
            }
            refused += 1;
            std::hint::spin_loop();
            sent = now_ns();
        }
    }
    let planned_span = planned_ns(t0, a.messages - 1, interval_ps) - t0;
    println!(
        "RESULT olpublisher {} span_ns {} planned_span_ns {planned_span} attempts {attempts} refused {refused} late {late}",
        a.index,
        last_sent - t0
    );
    barrier.wait_subscribers_done(1);
}

/// The three histograms of the subscriber.
pub struct OpenLoopRecorder {
    pub queueing: hdrhistogram::Histogram<u64>,
    pub service: hdrhistogram::Histogram<u64>,
    pub total: hdrhistogram::Histogram<u64>,
    pub warmup: u64,
    pub verifier: Verifier,
}

impl OpenLoopRecorder {
    pub fn new(warmup: u64) -> Self {
        // 1 ns .. 1000 s, 3 significant digits; larger values saturate at the top.
        let h = || hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1_000_000_000_000, 3).unwrap();
        OpenLoopRecorder {
            queueing: h(),
            service: h(),
            total: h(),
            warmup,
            verifier: Verifier::new(1),
        }
    }

    #[inline(always)]
    pub fn receive(&mut self, m: &Msg64) {
        let received = now_ns();
        self.verifier.check(m);
        if m.seq >= self.warmup {
            let (planned, sent) = (m.words[0], m.words[1]);
            self.queueing.saturating_record(sent.saturating_sub(planned));
            self.service.saturating_record(received.saturating_sub(sent));
            self.total.saturating_record(received.saturating_sub(planned));
        }
    }

    pub fn report(&self, messages: u64) {
        self.verifier.finish(1, messages);
        for (what, h) in [
            ("queueing", &self.queueing),
            ("service", &self.service),
            ("total", &self.total),
        ] {
            println!(
                "RESULT olhist {what} {} {} {} {} {} {} {}",
                h.value_at_quantile(0.5),
                h.value_at_quantile(0.9),
                h.value_at_quantile(0.99),
                h.value_at_quantile(0.999),
                h.value_at_quantile(0.9999),
                h.max(),
                h.len()
            );
        }
    }
}

pub fn openloop_subscribe(a: &ChildArgs, barrier: &Barrier, mut poll: impl FnMut(&mut OpenLoopRecorder)) {
    let warmup: u64 = a.rest[1].parse().unwrap();
    let mut recorder = OpenLoopRecorder::new(warmup);
    barrier.arrive_and_wait();
    while recorder.verifier.received < a.messages {
        poll(&mut recorder);
    }
    recorder.report(a.messages);
    barrier.subscriber_done();
}

/// One open-loop run's result, as the parent collects it.
pub struct OpenLoop {
    pub achieved_per_s: f64,
    /// How much longer the plan took than planned (1.0 = on time).
    pub stretch: f64,
    pub refused: f64,
    pub late_fraction: f64,
    /// queueing, service, total: p50 p90 p99 p99.9 p99.99 max count
    pub hist: [[u64; 7]; 3],
    pub placement: String,
}

impl OpenLoop {
    /// Saturated: the publisher could not keep to the plan (it ended > 10 % late) or the
    /// median message waited more than 100 µs to be sent.
    pub fn saturated(&self) -> bool {
        self.stretch > 1.1 || self.hist[0][0] > 100_000
    }
}

pub fn openloop_run(
    system: &'static str,
    param: u64,
    rate: f64,
    plan: (f64, f64),
    round: usize,
    ctx: &mut Ctx,
) -> OpenLoop {
    let (duration_s, warmup_s) = plan;
    let warmup = (rate * warmup_s).round().max(1.0) as u64;
    let messages = warmup + (rate * duration_s).round().max(2.0) as u64;
    let interval_ps = (1e12 / rate).round() as u64;
    let api = match system {
        "aeron" => Api::TryClaim,
        "iceoryx2" => Api::LoanUninit,
        _ => Api::Offer,
    };
    let setup = Setup::new(system, api, 1, messages, param);
    let name = unique_name(&format!("ol-{system}"), round);
    let stream = ctx.stream();
    let resources = create_resources(&setup, &name);
    let barrier = Barrier::create(&name);
    let [pub_core, sub_core] = latency_cores();
    let mut child_args = setup.child_args(0, &ctx.aeron_dir, stream);
    child_args.rest = vec![interval_ps.to_string(), warmup.to_string()];
    let args = child_args.to_args();
    let mut children = vec![
        spawn_role("ol-subscriber", &name, sub_core, &args),
        spawn_role("ol-publisher", &name, pub_core, &args),
    ];
    barrier.release_when(2, &mut children);
    let mut hist = [[0u64; 7]; 3];
    let (mut span, mut planned_span, mut attempts, mut refused, mut late) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for mut child in children {
        let stdout = child.stdout.take().unwrap();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let w: Vec<&str> = line.split_whitespace().collect();
            match (w.first(), w.get(1)) {
                (Some(&"RESULT"), Some(&"olpublisher")) => {
                    span = w[4].parse().unwrap();
                    planned_span = w[6].parse().unwrap();
                    attempts = w[8].parse().unwrap();
                    refused = w[10].parse().unwrap();
                    late = w[12].parse().unwrap();
                }
                (Some(&"RESULT"), Some(&"olhist")) => {
                    let k = ["queueing", "service", "total"]
                        .iter()
                        .position(|x| *x == w[2])
                        .unwrap();
                    for (j, v) in w[3..10].iter().enumerate() {
                        hist[k][j] = v.parse().unwrap();
                    }
                }
                _ => {}
            }
        }
        assert!(
            child.wait().unwrap().success(),
            "an open-loop process failed{}: {system} at {rate} msg/s",
            interrupted()
        );
    }
    drop(barrier);
    drop(resources);
    assert_eq!(hist[2][6], messages - warmup, "open-loop sample count");
    OpenLoop {
        achieved_per_s: (messages - 1) as f64 / (span.max(1) as f64 / 1e9),
        stretch: span as f64 / planned_span.max(1) as f64,
        refused: refused as f64 / attempts.max(1) as f64,
        late_fraction: late as f64 / messages as f64,
        hist,
        placement: format!("P0@{pub_core} S0@{sub_core}"),
    }
}

pub fn hist_json(h: &[u64; 7]) -> String {
    format!(
        "{{\"p50\":{},\"p90\":{},\"p99\":{},\"p99.9\":{},\"p99.99\":{},\"max\":{},\"count\":{}}}",
        h[0], h[1], h[2], h[3], h[4], h[5], h[6]
    )
}
