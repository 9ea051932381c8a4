//! Subscribers awaited in tokio (`recv_async`), fed by publisher processes: each test
//! re-executes this binary once per role. Run only these with
//! `cargo test -p salias --features tokio --test async_receive`.
#![cfg(feature = "tokio")]

mod async_support;
mod support;

use std::task::{Context, Poll, Waker};
use std::time::Duration;

use async_support::{On, WATCHDOG, burst_args, publish_bursts, reported, run, subscriber_and_publisher, watched};
use salias::{Config, FifoFanout, FifoMpsc, ReceiveError};
use support::{Checker, Sample, cpu_time, report, role, spawn, unique_name, wait_all};

#[test]
fn async_subscriber_receives_bursts_from_two_publisher_processes() {
    const TEST: &str = "async_subscriber_receives_bursts_from_two_publisher_processes";
    const BURSTS: u64 = 4;
    const PER_BURST: u64 = 500;
    if role().is_some() {
        return publish_bursts();
    }
    let name = unique_name("async-bursts");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name).publishers(2)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let idle = Duration::from_millis(150);
    let children = vec![
        (
            "publisher 0",
            spawn(
                TEST,
                "publisher",
                &burst_args(On::Mpsc, &name, 0, BURSTS, PER_BURST, idle),
            ),
        ),
        (
            "publisher 1",
            spawn(
                TEST,
                "publisher",
                &burst_args(On::Mpsc, &name, 1, BURSTS, PER_BURST, idle),
            ),
        ),
    ];
    run(async {
        let mut checker = Checker::new(2);
        for _ in 0..2 * BURSTS * PER_BURST {
            let sample = subscriber.recv_async().await.unwrap();
            checker.check(sample.publisher_slot(), &sample);
        }
        assert_eq!(checker.next, vec![BURSTS * PER_BURST; 2]);
    });
    wait_all(children, WATCHDOG);
}

#[test]
fn async_select_over_two_channels_and_a_timer() {
    const TEST: &str = "async_select_over_two_channels_and_a_timer";
    const BURSTS: u64 = 3;
    const PER_BURST: u64 = 200;
    const IDLE: Duration = Duration::from_millis(300);
    // Fires only after this long without a message: while both channels are idle.
    const QUIET: Duration = Duration::from_millis(50);
    if role().is_some() {
        return publish_bursts();
    }
    let (name_a, name_b) = (unique_name("async-select-a"), unique_name("async-select-b"));
    let channel_a = FifoMpsc::<Sample>::create(&Config::new(&name_a)).unwrap();
    let channel_b = FifoMpsc::<Sample>::create(&Config::new(&name_b)).unwrap();
    let (mut a, mut b) = (channel_a.subscriber().unwrap(), channel_b.subscriber().unwrap());
    let children = vec![
        (
            "publisher a",
            spawn(
                TEST,
                "publisher",
                &burst_args(On::Mpsc, &name_a, 0, BURSTS, PER_BURST, IDLE),
            ),
        ),
        (
            "publisher b",
            spawn(
                TEST,
                "publisher",
                &burst_args(On::Mpsc, &name_b, 1, BURSTS, PER_BURST, IDLE),
            ),
        ),
    ];
    let quiet_fires = run(async {
        let (mut from_a, mut from_b) = (Checker::new(1), Checker::new(2));
        let mut quiet_fires = 0;
        while from_a.next[0] + from_b.next[1] < 2 * BURSTS * PER_BURST {
            tokio::select! {
                // One channel's publisher may finish first: said once, and the loop goes on.
                sample = a.recv_async() => match sample {
                    Ok(sample) => from_a.check(sample.publisher_slot(), &sample),
                    Err(ReceiveError::Disconnected) => {}
                    Err(e) => panic!("{e}"),
                },
                sample = b.recv_async() => match sample {
                    Ok(sample) => from_b.check(sample.publisher_slot(), &sample),
                    Err(ReceiveError::Disconnected) => {}
                    Err(e) => panic!("{e}"),
                },
                () = tokio::time::sleep(QUIET) => quiet_fires += 1,
            }
        }
        assert_eq!(
            (from_a.next[0], from_b.next[1]),
            (BURSTS * PER_BURST, BURSTS * PER_BURST)
        );
        quiet_fires
    });
    wait_all(children, WATCHDOG);
    // Each idle gap before a burst is six quiet periods long; the timer fired in them.
    assert!(
        quiet_fires >= BURSTS,
        "the timer fired {quiet_fires} times over {BURSTS} idle gaps"
    );
}

/// A new FifoMpsc channel, its subscriber, and a publisher process sending `bursts` bursts
/// of `per_burst` messages 5 ms apart. With receives cancelled after 1 ms, most gaps
/// cancel one mid-wait, and the next burst must arrive whole and in order all the same.
fn bursts_from_a_process(
    test: &str,
    prefix: &str,
    bursts: u64,
    per_burst: u64,
) -> (
    FifoMpsc<Sample>,
    salias::Subscriber<Sample>,
    Vec<(&'static str, support::KillOnDrop)>,
) {
    let name = unique_name(prefix);
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let subscriber = channel.subscriber().unwrap();
    let args = burst_args(On::Mpsc, &name, 0, bursts, per_burst, Duration::from_millis(5));
    let children = vec![("publisher", spawn(test, "publisher", &args))];
    (channel, subscriber, children)
}

#[test]
fn async_cancelled_receives_lose_nothing() {
    const TEST: &str = "async_cancelled_receives_lose_nothing";
    const BURSTS: u64 = 40;
    const PER_BURST: u64 = 50;
    if role().is_some() {
        return publish_bursts();
    }
    let (_channel, mut subscriber, children) = bursts_from_a_process(TEST, "async-cancel", BURSTS, PER_BURST);
    let cancelled = run(async {
        let mut checker = Checker::new(1);
        let mut cancelled = 0u64;
        while checker.next[0] < BURSTS * PER_BURST {
            let patience = Duration::from_millis(1);
            match tokio::time::timeout(patience, subscriber.recv_async()).await {
                Ok(sample) => {
                    let sample = sample.unwrap();
                    checker.check(sample.publisher_slot(), &sample);
                }
                Err(_) => cancelled += 1,
            }
        }
        cancelled
    });
    wait_all(children, WATCHDOG);
    assert!(
        cancelled > 0,
        "no receive was cancelled mid-wait, so the test proved nothing"
    );
    eprintln!("{cancelled} receives cancelled mid-wait");
}

/// What `StreamExt::next` does, without a dependency for it.
async fn next<S: futures_core::Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx)).await
}

/// A subscriber as a `Stream`: every message of a publisher process arrives in order
/// through `next` calls cancelled mid-wait, then the publisher's departure is an item,
/// and the stream goes on to a next publisher.
#[test]
fn async_subscriber_stream_loses_nothing_and_yields_the_departure() {
    const TEST: &str = "async_subscriber_stream_loses_nothing_and_yields_the_departure";
    const BURSTS: u64 = 20;
    const PER_BURST: u64 = 50;
    if role().is_some() {
        return publish_bursts();
    }
    let (channel, mut subscriber, children) = bursts_from_a_process(TEST, "async-stream", BURSTS, PER_BURST);
    let cancelled = run(async {
        let mut checker = Checker::new(1);
        let mut cancelled = 0u64;
        while checker.next[0] < BURSTS * PER_BURST {
            match tokio::time::timeout(Duration::from_millis(1), next(&mut subscriber)).await {
                // A stream item is a copy: the ring slot is gone, and this channel has one.
                Ok(item) => checker.check(0, &item.expect("the stream never ends").unwrap()),
                Err(_) => cancelled += 1,
            }
        }
        // Everything received: the publisher's exit is the next item.
        assert_eq!(next(&mut subscriber).await, Some(Err(ReceiveError::Disconnected)));
        cancelled
    });
    wait_all(children, WATCHDOG);
    assert!(
        cancelled > 0,
        "no `next` was cancelled mid-wait, so the test proved nothing"
    );
    // The stream goes on: a next publisher's message is the next item.
    let mut publisher = channel.publisher().unwrap();
    publisher.offer(&Sample::new(0, 7)).unwrap();
    let item = run(async { next(&mut subscriber).await });
    assert_eq!(item.map(|sample| sample.map(|s| s.seq)), Some(Ok(7)));
}

/// A raw subscriber's stream yields each message's bytes.
#[test]
fn async_raw_subscriber_stream_yields_bytes() {
    let name = unique_name("async-raw-stream");
    let channel = salias::RawFifoMpsc::create(&Config::new(&name)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    for len in [0usize, 1, 7, 300] {
        publisher.offer(&vec![len as u8; len]).unwrap();
    }
    run(async {
        for len in [0usize, 1, 7, 300] {
            assert_eq!(next(&mut subscriber).await, Some(Ok(vec![len as u8; len])));
        }
    });
}

#[test]
fn async_sixty_four_subscribers_await_in_one_runtime() {
    const TEST: &str = "async_sixty_four_subscribers_await_in_one_runtime";
    const SUBSCRIBERS: u32 = 64;
    const BURSTS: u64 = 3;
    const PER_BURST: u64 = 100;
    if role().is_some() {
        return publish_bursts();
    }
    let name = unique_name("async-64");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).subscribers(SUBSCRIBERS)).unwrap();
    // All join before anything is published, so each must see every message.
    let subscribers: Vec<_> = (0..SUBSCRIBERS).map(|_| channel.subscriber().unwrap()).collect();
    let args = burst_args(On::Fanout, &name, 0, BURSTS, PER_BURST, Duration::from_millis(100));
    let children = vec![("publisher", spawn(TEST, "publisher", &args))];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let received = runtime.block_on(watched(async {
        let tasks: Vec<_> = subscribers
            .into_iter()
            .map(|mut subscriber| {
                tokio::spawn(async move {
                    let mut checker = Checker::new(1);
                    while checker.next[0] < BURSTS * PER_BURST {
                        let sample = subscriber.recv_async().await.unwrap();
                        checker.check(sample.publisher_slot(), &sample);
                    }
                    checker.next[0]
                })
            })
            .collect();
        let mut received = Vec::new();
        for task in tasks {
            received.push(task.await.unwrap());
        }
        received
    }));
    wait_all(children, WATCHDOG);
    assert_eq!(received, vec![BURSTS * PER_BURST; SUBSCRIBERS as usize]);
}

#[test]
fn async_idle_awaiting_subscriber_uses_no_cpu() {
    const TEST: &str = "async_idle_awaiting_subscriber_uses_no_cpu";
    const BURSTS: u64 = 4;
    const PER_BURST: u64 = 10;
    const IDLE: Duration = Duration::from_millis(300);
    match role().as_deref() {
        Some("publisher") => publish_bursts(),
        Some("subscriber") => {
            let channel = FifoMpsc::<Sample>::connect(&support::arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            let spent = run(async {
                let before = cpu_time();
                let mut checker = Checker::new(1);
                for _ in 0..BURSTS * PER_BURST {
                    let sample = subscriber.recv_async().await.unwrap();
                    checker.check(sample.publisher_slot(), &sample);
                }
                cpu_time() - before
            });
            report(format!("cpu_micros {}", spent.as_micros()));
        }
        _ => {
            let name = unique_name("async-idle");
            let _channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
            let reports = subscriber_and_publisher(TEST, &burst_args(On::Mpsc, &name, 0, BURSTS, PER_BURST, IDLE));
            let cpu: u128 = reported(&reports[0][0], "cpu_micros ");
            // Four idle gaps of 300 ms: a spinning subscriber would burn over a second of
            // CPU. An awaiting one sleeps in epoll through every gap.
            let idle_total = IDLE.as_micros() * BURSTS as u128;
            eprintln!("idle awaiting subscriber: {cpu} µs CPU over {idle_total} µs idle");
            assert!(
                cpu * 10 < idle_total,
                "the idle awaiting subscriber used {cpu} µs of CPU over {idle_total} µs of idleness"
            );
        }
    }
}

/// One subscriber awaited in one runtime after another (each dropped while the subscriber
/// was registered with it): each wait moves the registration to the runtime it runs in,
/// and is woken there. Polled outside any runtime it says so instead of panicking.
#[test]
fn async_receive_follows_the_subscriber_to_another_runtime() {
    let name = unique_name("async-runtimes");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut publisher = Some(channel.publisher().unwrap());
    let mut cx = Context::from_waker(Waker::noop());
    assert!(matches!(
        subscriber.poll_recv(&mut cx),
        Poll::Ready(Err(ReceiveError::NoRuntime))
    ));
    let mut checker = Checker::new(1);
    for seq in 0..3 {
        let mut sending = publisher.take().unwrap();
        publisher = Some(run(async {
            // Nothing yet: this wait registers with the new runtime, then is cancelled.
            let early = tokio::time::timeout(Duration::from_millis(5), subscriber.recv_async()).await;
            assert!(early.is_err(), "a message arrived before any was sent");
            drop(early);
            // The sender publishes while the next wait sleeps: only this runtime's
            // reactor can wake it.
            let sender = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                sending.offer(&Sample::new(0, seq)).unwrap();
                sending
            });
            let sample = subscriber.recv_async().await.unwrap();
            checker.check(sample.publisher_slot(), &sample);
            sender.join().unwrap()
        }));
    }
    assert!(matches!(
        subscriber.poll_recv(&mut cx),
        Poll::Ready(Err(ReceiveError::NoRuntime))
    ));
}

/// A receive loop that always finds a message still lets the runtime's other tasks run
/// (it spends tokio's co-operative budget, as tokio's own channels do).
#[test]
fn async_busy_receive_loop_lets_other_tasks_run() {
    const MESSAGES: u64 = 5_000;
    let name = unique_name("async-budget");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name).capacity(1 << 20)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..MESSAGES {
        publisher.offer(&Sample::new(0, seq)).unwrap();
    }
    let others_ran = run(async {
        let ticks = std::rc::Rc::new(std::cell::Cell::new(0u64));
        let local = tokio::task::LocalSet::new();
        let counter = ticks.clone();
        local.spawn_local(async move {
            loop {
                counter.set(counter.get() + 1);
                tokio::task::yield_now().await;
            }
        });
        local
            .run_until(async {
                let mut checker = Checker::new(1);
                let mut others_ran = 0;
                while checker.next[0] < MESSAGES {
                    let sample = subscriber.recv_async().await.unwrap();
                    checker.check(sample.publisher_slot(), &sample);
                    others_ran = ticks.get();
                }
                others_ran
            })
            .await
    });
    assert!(
        others_ran > 0,
        "the other task never ran while {MESSAGES} messages were received"
    );
}

/// A child that publishes `COUNT` samples on a channel of kind `M`/`K` and dies by SIGKILL.
fn publish_then_die<M: salias::kind::Mode, K: salias::kind::Topology>() {
    let channel = salias::Channel::<Sample, M, K>::connect(&support::arg::<String>("NAME")).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..support::arg::<u64>("COUNT") {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    // SAFETY: raise has no memory-safety preconditions.
    unsafe { libc::raise(libc::SIGKILL) };
}

/// `recv_async` beside a heartbeat timer hears that its only publisher process was
/// killed, after receiving everything it committed; a next publisher is received as
/// usual, and its drop heard too.
fn async_subscriber_hears_its_publisher_killed<M: salias::kind::Mode, K: salias::kind::Topology>(test: &str) {
    const COUNT: u64 = 2_000;
    if role().is_some() {
        return publish_then_die::<M, K>();
    }
    let name = unique_name("async-gone");
    let channel = salias::Channel::<Sample, M, K>::create(&Config::new(&name)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let child = spawn(
        test,
        "publisher",
        &[("NAME", name.clone()), ("COUNT", COUNT.to_string())],
    );
    run(watched(async {
        // A timer in the same `select!`, as an application has one: the receive is one
        // branch among others, and cancelling it loses nothing (checked by the count).
        let mut heartbeat = tokio::time::interval(Duration::from_millis(10));
        let (mut checker, mut received) = (Checker::new(2), 0);
        loop {
            tokio::select! {
                sample = subscriber.recv_async() => match sample {
                    Ok(sample) => {
                        checker.check(sample.publisher_slot(), &sample);
                        received += 1;
                    }
                    Err(ReceiveError::Disconnected) => break,
                    Err(e) => panic!("{e}"),
                },
                _ = heartbeat.tick() => {}
            }
        }
        assert_eq!(received, COUNT, "every committed message before the departure");
        let mut publisher = channel.publisher().unwrap();
        publisher.offer(&Sample::new(1, 0)).unwrap();
        assert_eq!(subscriber.recv_async().await.map(|s| (s.producer, s.seq)), Ok((1, 0)));
        drop(publisher);
        assert_eq!(
            subscriber.recv_async().await.map(|s| s.seq),
            Err(ReceiveError::Disconnected)
        );
    }));
    drop(child);
}

#[test]
fn async_fifo_mpsc_subscriber_hears_its_publisher_killed() {
    async_subscriber_hears_its_publisher_killed::<salias::Fifo, salias::Mpsc>(
        "async_fifo_mpsc_subscriber_hears_its_publisher_killed",
    );
}

#[test]
fn async_fifo_fanout_subscriber_hears_its_publisher_killed() {
    async_subscriber_hears_its_publisher_killed::<salias::Fifo, salias::Fanout>(
        "async_fifo_fanout_subscriber_hears_its_publisher_killed",
    );
}

#[test]
fn async_ordered_mpsc_subscriber_hears_its_publisher_killed() {
    async_subscriber_hears_its_publisher_killed::<salias::Ordered, salias::Mpsc>(
        "async_ordered_mpsc_subscriber_hears_its_publisher_killed",
    );
}

#[test]
fn async_ordered_fanout_subscriber_hears_its_publisher_killed() {
    async_subscriber_hears_its_publisher_killed::<salias::Ordered, salias::Fanout>(
        "async_ordered_fanout_subscriber_hears_its_publisher_killed",
    );
}
