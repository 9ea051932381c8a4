//! The hot paths make no system call: the test runs itself under strace and checks that
//! nothing but its own markers happens between the start and end markers of a busy
//! publish/receive loop. Skipped, with a printed reason, where strace is not installed.

mod support;

use salias::{Config, FifoMpsc, OrderedFanout, RawFifoMpsc, SaliasMessage};
use support::{role, strace_marker, unique_name};

#[derive(SaliasMessage, Clone, Copy)]
#[repr(C)]
struct Tick {
    seq: u64,
    words: [u64; 7],
}

fn hot_loop() {
    let name = unique_name("syscall");
    let channel = FifoMpsc::<Tick>::create(&Config::new(&name).capacity(64 * 1024)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let raw = RawFifoMpsc::create(&Config::new(format!("{name}-raw")).capacity(64 * 1024)).unwrap();
    let mut raw_publisher = raw.publisher().unwrap();
    let mut raw_subscriber = raw.subscriber().unwrap();
    let ordered = OrderedFanout::<Tick>::create(&Config::new(format!("{name}-ordered")).capacity(64 * 1024)).unwrap();
    let mut ordered_subscriber = ordered.subscriber().unwrap();
    let mut ordered_publisher = ordered.publisher().unwrap();
    let batch = [Tick { seq: 1, words: [0; 7] }; 8];
    let mut sum = 0u64;
    strace_marker("salias-hot-start");
    for seq in 0..50_000u64 {
        publisher.offer(&Tick { seq, words: [0; 7] }).unwrap();
        let mut claim = publisher.claim().unwrap();
        claim.seq = seq;
        claim.commit();
        publisher.offer_batch(&batch).unwrap();
        sum += subscriber.try_recv().unwrap().unwrap().seq;
        sum += subscriber.recv().unwrap().seq;
        subscriber.poll(8, |_, t| sum += t.seq).unwrap();
        raw_publisher.offer(&[1u8; 100]).unwrap();
        sum += raw_subscriber.try_recv().unwrap().unwrap().len() as u64;
        ordered_publisher.offer_batch(&batch[..2]).unwrap();
        ordered_subscriber
            .poll(2, |info, t| sum += t.seq + info.sequence() % 2)
            .unwrap();
    }
    strace_marker("salias-hot-end");
    assert_eq!(sum, 2 * (50_000 * 49_999 / 2) + 50_000 * (8 + 100 + 2 + 1));
}

#[test]
fn hot_paths_make_no_system_call() {
    if role().as_deref() == Some("traced") {
        hot_loop();
        return;
    }
    let Some(calls) = support::traced_section("hot_paths_make_no_system_call", "salias-hot") else {
        return;
    };
    assert!(calls.is_empty(), "system calls on the hot path:\n{}", calls.join("\n"));
}
