//! Wake-up latency, the same way as the root's `benches/wake`: a sender on core 0 waits
//! for the receiver's acknowledgement of the last message, lets a random 2–5 ms gap pass
//! so the receiver is asleep, and sends the next stamped with `CLOCK_MONOTONIC` read just
//! before its commit; the receiver reads the clock as its wait returns. Then the sender
//! reads the idle receiver's CPU time from /proc and sends a last message that stops it.
//!
//! salias: `Subscriber::recv` with its default `Adaptive` strategy, woken by `send`, and
//! the `Subscriber`'s readiness descriptor in a raw epoll loop.
//! iceoryx2: the data in a publish-subscribe service (its latency configuration), the
//! wake-up through an event service beside it, as iceoryx2's own examples pair them:
//! `Notifier::notify` after the send, `Listener::blocking_wait` before the receive.
//! Their ends are in `transports/`; the loops here are generic over them.

use std::time::Duration;

use support::barrier::Barrier;
use support::clock::now_ns;
use support::cpu::IdleCpu;
use support::hist::Quantiles;
use support::records::{Wake, WakeMechanism};
use support::role::Children;
use support::wake::{Acks, GAP_US, Gaps, STOP};

use crate::error::RunError;
use crate::message::Msg64;
use crate::parent;
use crate::platform::latency_cores;
use crate::resources::{Resources, unique_name};
use crate::roles::{Params, Report, system_name};
use crate::setup::{Variant, WakePlan, wake_label};
use crate::transport::{WakeReceiver, WakeSender};

/// The receiver's role of `variant`.
fn receiver_role((_, mechanism): Variant) -> &'static str {
    match mechanism {
        WakeMechanism::FdEpoll => "wake-receiver-fd",
        _ => "wake-receiver",
    }
}

/// One run of `variant`: its record.
pub fn wake_run(variant: Variant, plan: WakePlan, round: usize) -> Result<Wake, RunError> {
    let (system, mechanism) = variant;
    let name = unique_name(&format!("wake-{}", system_name(system)), round);
    let _resources = Resources::for_wake(system, &name)?;
    let barrier = Barrier::create(&name).map_err(RunError::shm(&name))?;
    let _acks = Acks::create(&name).map_err(RunError::shm(&name))?;
    let cores = latency_cores();
    let params = |core| Params {
        name: name.clone(),
        core,
        api: None,
        batch: 1,
        publishers: 1,
        subscribers: 1,
        messages: plan.messages,
        param: plan.idle_ms,
        index: 0,
        aeron_dir: String::new(),
        stream: 0,
        plan: None,
        subscriber_pauses: 0,
    };
    let mut children = Children::new();
    parent::spawn(&mut children, system, receiver_role(variant), &params(cores[1]))?;
    parent::spawn(&mut children, system, "wake-sender", &params(cores[0]))?;
    // A minute to start and end, and 10 ms per message (twice the longest gap, and more).
    let limit = Duration::from_secs(60) + Duration::from_millis(10 * plan.messages + plan.idle_ms);
    let reports = parent::collect(&name, &barrier, children, limit)?;
    let (mut wake_ns, mut idle, mut not_slept) = (None, None, 0);
    for report in reports {
        match report {
            Report::WakeReceiver {
                wake_ns: q,
                not_slept: n,
            } => {
                wake_ns = Some(q);
                not_slept = n;
            }
            Report::WakeSender { idle: i } => idle = Some(i),
            _ => {}
        }
    }
    let (Some(wake_ns), Some(idle)) = (wake_ns, idle) else {
        return Err(RunError::Missing {
            run: name,
            what: "the receiver's latencies and the sender's idle CPU",
        });
    };
    Ok(Wake {
        system,
        round,
        label: wake_label(variant).into(),
        mechanism,
        prototype: false,
        placement: format!("P0@{} S0@{}", cores[0], cores[1]),
        gap_ns: GAP_US.map(|us| us * 1_000),
        wake_ns,
        // `recv` and `blocking_wait` do not tell whether they slept.
        not_slept: (mechanism == WakeMechanism::FdEpoll).then_some(not_slept),
        publisher_wakes: None,
        idle_s: idle.idle_s,
        idle_cpu_s_per_s: idle.cpu_s_per_s,
        idle_tick_s: idle.tick_s,
        idle_runtime_s_per_s: idle.runtime_s_per_s,
    })
}

fn stamped(seq: u64) -> Msg64 {
    let mut message = Msg64::new(0, seq);
    message.words[0] = now_ns();
    message
}

/// The sender's schedule: after each acknowledgement a random gap, then the next message.
pub fn send(a: &Params, barrier: &Barrier, mut sender: impl WakeSender) {
    let acks = Acks::open(&a.name).unwrap_or_else(|e| panic!("{e}"));
    let limit = Duration::from_secs(60);
    let ok = || Ok::<(), String>(());
    barrier.arrive_and_wait();
    let mut gaps = Gaps::new(now_ns() ^ a.core as u64);
    for seq in 0..a.messages {
        acks.wait_ack(seq, limit, ok).unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(gaps.next_gap());
        sender.send(stamped(seq));
    }
    acks.wait_ack(a.messages, limit, ok).unwrap_or_else(|e| panic!("{e}"));
    // From the receiver's return to waiting: a spinning strategy's spin counts.
    let idle = IdleCpu::measure(acks.pid(), Duration::from_millis(a.param)).unwrap_or_else(|e| panic!("{e}"));
    sender.send(stamped(STOP));
    Report::WakeSender { idle }.send();
}

/// The receiver's loop: times each wake-up, acknowledges each message, until the last.
pub fn receive(a: &Params, barrier: &Barrier, mut receiver: impl WakeReceiver) {
    let acks = Acks::open(&a.name).unwrap_or_else(|e| panic!("{e}"));
    acks.set_pid(std::process::id());
    let mut samples = Vec::with_capacity(a.messages as usize);
    let (mut expected, mut not_slept) = (0, 0);
    barrier.arrive_and_wait();
    loop {
        let (message, woke) = receiver.wait();
        if message.seq == STOP {
            break;
        }
        assert_eq!(message.seq, expected, "wake-up messages out of order");
        match woke {
            Some(woke) => samples.push(woke.saturating_sub(message.words[0])),
            None => not_slept += 1,
        }
        expected += 1;
        acks.ack(expected);
    }
    samples.sort_unstable();
    Report::WakeReceiver {
        wake_ns: Quantiles::of_sorted(&samples),
        not_slept,
    }
    .send();
}
