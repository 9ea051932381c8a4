//! The hot paths make no system call: the test runs itself under strace and checks that
//! nothing but its own markers happens between the start and end markers of a busy
//! publish/receive loop. Skipped, with a printed reason, where strace is not installed.

mod support;

use std::process::Command;

use salias::{Config, FifoMpsc, OrderedFanout, RawFifoMpsc, SaliasMessage};
use support::{role, unique_name};

#[derive(SaliasMessage, Clone, Copy)]
#[repr(C)]
struct Tick {
    seq: u64,
    words: [u64; 7],
}

/// A system call strace shows recognisably: a write of `text` to an invalid descriptor.
fn marker(text: &str) {
    // SAFETY: writing to fd -1 fails with EBADF and touches no memory but `text`.
    unsafe { libc::write(-1, text.as_ptr().cast(), text.len()) };
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
    marker("salias-hot-start");
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
    marker("salias-hot-end");
    assert_eq!(sum, 2 * (50_000 * 49_999 / 2) + 50_000 * (8 + 100 + 2 + 1));
}

#[test]
fn hot_paths_make_no_system_call() {
    if role().as_deref() == Some("traced") {
        hot_loop();
        return;
    }
    if let Ok(sanitizer) = std::env::var("SALIAS_SANITIZER") {
        // The sanitizer runtimes map memory for their own bookkeeping mid-loop.
        println!(
            "SKIPPED hot_paths_make_no_system_call: the {sanitizer} sanitizer's runtime makes system calls of its own"
        );
        return;
    }
    if Command::new("strace").arg("-V").output().is_err() {
        println!("SKIPPED hot_paths_make_no_system_call: strace is not installed (apt-get install strace)");
        return;
    }
    let log = std::env::temp_dir().join(format!("salias-strace-{}.log", std::process::id()));
    let status = Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(std::env::current_exe().unwrap())
        .args(["hot_paths_make_no_system_call", "--exact", "--test-threads=1", "-q"])
        .env(support::ROLE_VAR, "traced")
        .status()
        .expect("run strace");
    assert!(status.success(), "the traced hot loop failed");
    let trace = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let start = trace.find("salias-hot-start").expect("start marker traced");
    let end = trace.find("salias-hot-end").expect("end marker traced");
    let between: Vec<&str> = trace[start..end].lines().skip(1).collect();
    // Only the end marker's own line may follow.
    let calls: Vec<&&str> = between.iter().filter(|l| !l.contains("write(-1")).collect();
    assert!(
        calls.is_empty(),
        "system calls on the hot path:\n{}",
        calls.iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n")
    );
}
