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

use std::time::Duration;

use iceoryx2::prelude::*;
use support::barrier::Barrier;
use support::clock::now_ns;
use support::cpu::IdleCpu;
use support::epoll::Readable;
use support::hist::Quantiles;
use support::records::{System, Wake, WakeMechanism};
use support::role::Children;
use support::wake::{Acks, GAP_US, Gaps, STOP};

use crate::error::RunError;
use crate::message::Msg64;
use crate::platform::latency_cores;
use crate::resources::{Resources, unique_name};
use crate::roles::{self, Params, Report, system_name};
use crate::transports::iceoryx2 as ice;

/// What is compared, in the order they alternate.
pub const VARIANTS: [Variant; 3] = [
    (System::Salias, WakeMechanism::RecvAdaptive),
    (System::Salias, WakeMechanism::FdEpoll),
    (System::Iceoryx2, WakeMechanism::EventListener),
];

/// A system and how its receiver waits.
pub type Variant = (System, WakeMechanism);

/// How much one run measures.
#[derive(Clone, Copy, Debug)]
pub struct WakePlan {
    pub messages: u64,
    pub idle_ms: u64,
}

pub fn label((system, mechanism): Variant) -> &'static str {
    match (system, mechanism) {
        (System::Iceoryx2, _) => "iceoryx2 event listener blocking_wait",
        (_, WakeMechanism::FdEpoll) => "salias Subscriber fd in epoll",
        _ => "salias futex recv (Adaptive)",
    }
}

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
    };
    let mut children = Children::new();
    roles::spawn(&mut children, system, receiver_role(variant), &params(cores[1]))?;
    roles::spawn(&mut children, system, "wake-sender", &params(cores[0]))?;
    // A minute to start and end, and 10 ms per message (twice the longest gap, and more).
    let limit = Duration::from_secs(60) + Duration::from_millis(10 * plan.messages + plan.idle_ms);
    let reports = roles::collect(&name, &barrier, children, limit)?;
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
        label: label(variant).into(),
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

/// The sender's schedule; `send` commits a message and wakes the receiver.
fn send_loop(a: &Params, barrier: &Barrier, mut send: impl FnMut(Msg64)) {
    let acks = Acks::open(&a.name).unwrap_or_else(|e| panic!("{e}"));
    let limit = Duration::from_secs(60);
    let ok = || Ok::<(), String>(());
    barrier.arrive_and_wait();
    let mut gaps = Gaps::new(now_ns() ^ a.core as u64);
    for seq in 0..a.messages {
        acks.wait_ack(seq, limit, ok).unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(gaps.next_gap());
        send(stamped(seq));
    }
    acks.wait_ack(a.messages, limit, ok).unwrap_or_else(|e| panic!("{e}"));
    // From the receiver's return to waiting: a spinning strategy's spin counts.
    let idle = IdleCpu::measure(acks.pid(), Duration::from_millis(a.param)).unwrap_or_else(|e| panic!("{e}"));
    send(stamped(STOP));
    Report::WakeSender { idle }.send();
}

/// The receiver's loop; `wait` returns the next message and the clock as its wait ended,
/// or none if it found the message before sleeping (then it is counted, not timed).
fn receive_loop(a: &Params, barrier: &Barrier, mut wait: impl FnMut() -> (Msg64, Option<u64>)) {
    let acks = Acks::open(&a.name).unwrap_or_else(|e| panic!("{e}"));
    acks.set_pid(std::process::id());
    let mut samples = Vec::with_capacity(a.messages as usize);
    let (mut expected, mut not_slept) = (0, 0);
    barrier.arrive_and_wait();
    loop {
        let (message, woke) = wait();
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

pub fn salias_sender(a: &Params, barrier: &Barrier) {
    let channel = salias::FifoMpsc::<Msg64>::connect(&a.name).unwrap_or_else(|e| panic!("{e}"));
    let mut publisher = channel.publisher().expect("a publisher slot");
    send_loop(a, barrier, |m| publisher.send(&m).expect("salias send"));
}

pub fn salias_receiver(a: &Params, barrier: &Barrier) {
    let channel = salias::FifoMpsc::<Msg64>::connect(&a.name).unwrap_or_else(|e| panic!("{e}"));
    let mut subscriber = channel.subscriber().expect("a subscriber slot");
    receive_loop(a, barrier, || {
        let message = subscriber.recv().expect("salias recv");
        let woke = now_ns();
        (*message, Some(woke))
    });
}

/// The descriptor is the subscriber's own: its empty `try_recv` arms it, and receiving
/// drains it.
pub fn salias_fd_receiver(a: &Params, barrier: &Barrier) {
    let channel = salias::FifoMpsc::<Msg64>::connect(&a.name).unwrap_or_else(|e| panic!("{e}"));
    let mut subscriber = channel.subscriber().expect("a subscriber slot");
    let epoll = Readable::watching(&subscriber).expect("an epoll set");
    receive_loop(a, barrier, || {
        loop {
            if let Some(message) = take(&mut subscriber) {
                // Found before sleeping: not a wake-up.
                return (message, None);
            }
            epoll.wait().expect("epoll_wait");
            let woke = now_ns();
            if let Some(message) = take(&mut subscriber) {
                return (message, Some(woke));
            }
        }
    });
}

fn take(subscriber: &mut salias::Subscriber<Msg64>) -> Option<Msg64> {
    subscriber.try_recv().expect("salias try_recv").map(|m| *m)
}

/// The event service beside the data: one notifier, one listener, no events of its own
/// on a notifier's creation or end (they would wake the listener with no message).
pub fn event_service(node: &Node<ipc::Service>, name: &str, create: bool) -> ice::EventFactory {
    let builder = node
        .service_builder(&ServiceName::new(&format!("{name}/wake")).unwrap())
        .event()
        .max_notifiers(1)
        .max_listeners(1)
        .disable_notifier_created_event()
        .disable_notifier_dropped_event()
        .disable_notifier_dead_event();
    if create {
        builder.create().unwrap()
    } else {
        builder.open().unwrap()
    }
}

pub fn ice_sender(a: &Params, barrier: &Barrier) {
    let node = ice::node();
    let data = ice::latency_service(&node, &format!("{}/data", a.name), false);
    let publisher = ice::publisher_port(&data);
    let notifier = event_service(&node, &a.name, false)
        .notifier_builder()
        .create()
        .unwrap();
    send_loop(a, barrier, |m| {
        assert_eq!(
            ice::send(&publisher, m),
            1,
            "iceoryx2: the receiver did not get the sample"
        );
        notifier.notify().expect("iceoryx2 notify");
    });
}

pub fn ice_receiver(a: &Params, barrier: &Barrier) {
    let node = ice::node();
    let data = ice::latency_service(&node, &format!("{}/data", a.name), false);
    let subscriber = ice::subscriber_port(&data);
    let listener = event_service(&node, &a.name, false)
        .listener_builder()
        .create()
        .unwrap();
    receive_loop(a, barrier, || {
        loop {
            listener.blocking_wait(|_| {}).expect("iceoryx2 blocking_wait");
            let woke = now_ns();
            if let Some(sample) = subscriber.receive().expect("iceoryx2 receive") {
                return (*sample.payload(), Some(woke));
            }
        }
    });
}
