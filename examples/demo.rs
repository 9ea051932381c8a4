//! salias end to end: a publisher process and a subscriber process on one channel.
//!
//! Run: `cargo run --release --example demo`
//!
//! The demo starts itself twice more, as a subscriber and as a publisher, pinned to
//! different cores when the machine has them. It measures throughput (a flood of 64-byte
//! messages, every one checked) and then one-way latency (messages sent at planned times,
//! stamped with the planned time so queueing is counted, not hidden).

use std::process::{Command, Stdio};
use std::time::Duration;

use salias::{Config, Error, FifoMpsc, PublishError, SaliasMessage, wait::BusySpin};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// 64 bytes: one cache line.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Stamp {
    seq: u64,
    /// CLOCK_MONOTONIC nanoseconds: the planned send time in the latency phase.
    planned_ns: u64,
    words: [u64; 6],
}

const FLOOD: u64 = 20_000_000;
const PACED: u64 = 200_000;
const PACE: Duration = Duration::from_micros(10);
/// Marks the latency phase in `seq`.
const PACED_FLAG: u64 = 1 << 63;

fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn words(seq: u64) -> [u64; 6] {
    std::array::from_fn(|i| seq.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(i as u32 * 7))
}

#[cfg(not(target_os = "linux"))]
fn pin_to(_core: Option<usize>) -> String {
    "unpinned (this system offers no core pinning to salias)".into()
}

#[cfg(target_os = "linux")]
fn pin_to(core: Option<usize>) -> String {
    let Some(core) = core else {
        return "unpinned".into();
    };
    let mut set = rustix::thread::CpuSet::new();
    set.set(core);
    match rustix::thread::sched_setaffinity(None, &set) {
        Ok(()) => format!("core {core}"),
        Err(e) => format!("unpinned ({e})"),
    }
}

fn publisher(name: &str, core: Option<usize>) -> Result<(), Error> {
    let placement = pin_to(core);
    let channel = FifoMpsc::<Stamp>::connect(name)?;
    let mut publisher = channel.publisher()?;
    println!("publisher  pid {} on {placement}", std::process::id());

    let mut offers = 0u64;
    for seq in 0..FLOOD {
        let stamp = Stamp {
            seq,
            planned_ns: 0,
            words: words(seq),
        };
        loop {
            offers += 1;
            match publisher.offer(&stamp) {
                Ok(()) => break,
                Err(PublishError::Backpressured) => std::hint::spin_loop(),
                Err(e) => return Err(e.into()),
            }
        }
    }
    println!(
        "publisher  {FLOOD} offers accepted, {:.3} % of {offers} attempts backpressured",
        100.0 * (offers - FLOOD) as f64 / offers as f64
    );

    // Let the subscriber drain the flood so the latency phase starts from an empty ring.
    std::thread::sleep(Duration::from_millis(200));
    let start = now_ns() + 1_000_000;
    for i in 0..PACED {
        let planned = start + i * PACE.as_nanos() as u64;
        while now_ns() < planned {
            std::hint::spin_loop();
        }
        publisher.send(&Stamp {
            seq: PACED_FLAG | i,
            planned_ns: planned,
            words: words(i),
        })?;
    }
    Ok(())
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn subscriber(name: &str, core: Option<usize>) -> Result<(), Error> {
    let placement = pin_to(core);
    let channel = FifoMpsc::<Stamp>::connect(name)?;
    let mut subscriber = channel.subscriber()?;
    subscriber.set_wait_strategy(BusySpin);
    println!("subscriber pid {} on {placement}", std::process::id());
    println!("ready");

    let mut expected = 0u64;
    let mut checksum_errors = 0u64;
    let mut first_ns = 0;
    while expected < FLOOD {
        let message = subscriber.recv()?;
        if expected == 0 {
            first_ns = now_ns();
        }
        assert_eq!(message.seq, expected, "message lost or out of order");
        checksum_errors += (message.words != words(message.seq)) as u64;
        expected += 1;
    }
    let elapsed = (now_ns() - first_ns) as f64 / 1e9;
    assert_eq!(checksum_errors, 0, "corrupted messages");
    println!(
        "throughput {FLOOD} messages of 64 B in {elapsed:.3} s = {:.1} M msg/s ({:.2} GB/s), every one checked",
        FLOOD as f64 / elapsed / 1e6,
        FLOOD as f64 * 64.0 / elapsed / 1e9
    );

    let mut latencies = Vec::with_capacity(PACED as usize);
    for i in 0..PACED {
        let message = subscriber.recv()?;
        let received = now_ns();
        assert_eq!(message.seq, PACED_FLAG | i, "message lost or out of order");
        latencies.push(received.saturating_sub(message.planned_ns));
    }
    latencies.sort_unstable();
    let p = |q| percentile(&latencies, q);
    println!(
        "latency    one-way, {PACED} messages at {} k msg/s, planned send time to receipt: p50 {} ns, p90 {} ns, p99 {} ns, p99.9 {} ns, p99.99 {} ns, max {} ns",
        1_000_000 / PACE.as_micros() as u64 / 1000,
        p(0.5),
        p(0.9),
        p(0.99),
        p(0.999),
        p(0.9999),
        latencies[latencies.len() - 1]
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let core = |s: &str| s.parse::<usize>().ok();
    if args.len() == 5 && args[1] == "--role" {
        let (name, pinned) = (&args[3], core(&args[4]));
        match args[2].as_str() {
            "publisher" => publisher(name, pinned)?,
            _ => subscriber(name, pinned)?,
        }
        return Ok(());
    }

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (publisher_core, subscriber_core) = if cores >= 2 { ("0", "1") } else { ("-", "-") };
    let name = format!("salias-demo-{}", std::process::id());
    let channel = FifoMpsc::<Stamp>::create(&Config::new(&name).capacity(1 << 20))?;
    println!(
        "salias demo: channel {:?}, FifoMpsc<Stamp> (64-byte messages), {} KiB ring, {cores} cores",
        channel.name(),
        channel.capacity() / 1024
    );

    let exe = std::env::current_exe()?;
    let mut subscriber = Command::new(&exe)
        .args(["--role", "subscriber", &name, subscriber_core])
        .stdout(Stdio::piped())
        .spawn()?;
    // Start the publisher only once the subscriber is attached and spinning.
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(subscriber.stdout.take().unwrap()));
    for line in lines.by_ref() {
        let line = line?;
        if line == "ready" {
            break;
        }
        println!("{line}");
    }
    let mut publisher = Command::new(&exe)
        .args(["--role", "publisher", &name, publisher_core])
        .spawn()?;
    for line in lines {
        println!("{}", line?);
    }
    let (sub_status, pub_status) = (subscriber.wait()?, publisher.wait()?);
    if !sub_status.success() || !pub_status.success() {
        return Err(format!("a child failed: subscriber {sub_status}, publisher {pub_status}").into());
    }
    Ok(())
}
