//! What the async tests share: their runtimes and watchdog, and a publisher role that
//! sends bursts separated by idle gaps.
#![allow(dead_code)] // each test binary uses its own subset

use std::future::Future;
use std::time::Duration;

use salias::{FifoFanout, FifoMpsc, kind::Topology};

use crate::support::{Sample, arg, spawn, wait_all};

/// How long any one async test may take before it fails as hung.
pub const WATCHDOG: Duration = Duration::from_secs(120);

/// Runs `test` on a single-threaded runtime with IO and timers, failing it if it hangs.
pub fn run<F: Future>(test: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("build a tokio runtime");
    runtime.block_on(watched(test))
}

/// `test`, failed as hung past the watchdog.
pub async fn watched<F: Future>(test: F) -> F::Output {
    tokio::time::timeout(WATCHDOG, test)
        .await
        .unwrap_or_else(|_| panic!("the async test did not finish within {WATCHDOG:?}"))
}

/// In a publisher role: connects to channel `NAME` (Mpsc, or Fanout if `FANOUT` is set)
/// and sends `BURSTS` bursts of `PER_BURST` samples as producer `PRODUCER`, each after an
/// idle gap of `IDLE_MS`, with the blocking `send`.
pub fn publish_bursts() {
    let name: String = arg("NAME");
    if arg::<u8>("FANOUT") == 1 {
        bursts(FifoFanout::<Sample>::connect(&name).unwrap().publisher().unwrap());
    } else {
        bursts(FifoMpsc::<Sample>::connect(&name).unwrap().publisher().unwrap());
    }
}

fn bursts<K: Topology>(mut publisher: salias::Publisher<Sample, salias::Fifo, K>) {
    let (producer, bursts, per_burst): (u64, u64, u64) = (arg("PRODUCER"), arg("BURSTS"), arg("PER_BURST"));
    let idle = Duration::from_millis(arg("IDLE_MS"));
    for burst in 0..bursts {
        std::thread::sleep(idle);
        for i in 0..per_burst {
            publisher.send(&Sample::new(producer, burst * per_burst + i)).unwrap();
        }
    }
}

/// The kind of channel `publish_bursts` connects to.
#[derive(Clone, Copy)]
pub enum On {
    Mpsc,
    Fanout,
}

/// The environment `publish_bursts` reads.
pub fn burst_args(
    on: On,
    name: &str,
    producer: u64,
    bursts: u64,
    per_burst: u64,
    idle: Duration,
) -> Vec<(&'static str, String)> {
    vec![
        ("NAME", name.to_owned()),
        ("FANOUT", u8::from(matches!(on, On::Fanout)).to_string()),
        ("PRODUCER", producer.to_string()),
        ("BURSTS", bursts.to_string()),
        ("PER_BURST", per_burst.to_string()),
        ("IDLE_MS", idle.as_millis().to_string()),
    ]
}

/// Runs `test` again as a "subscriber" and a "publisher" process with `args`, and returns
/// what each reported (subscriber first).
pub fn subscriber_and_publisher(test: &str, args: &[(&str, String)]) -> Vec<Vec<String>> {
    let children = vec![
        ("subscriber", spawn(test, "subscriber", args)),
        ("publisher", spawn(test, "publisher", args)),
    ];
    wait_all(children, WATCHDOG)
}

/// The value a child reported in `line` after `key` (`"refused 12"`, key `"refused "`).
pub fn reported<T: std::str::FromStr>(line: &str, key: &str) -> T {
    let value = line
        .strip_prefix(key)
        .unwrap_or_else(|| panic!("the report {line:?} does not start with {key:?}"));
    value
        .parse()
        .unwrap_or_else(|_| panic!("the report {line:?} does not hold a number after {key:?}"))
}
