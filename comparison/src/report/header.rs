//! The raw data's first line: machine, command, rounds, the versions of everything
//! measured, and the settings of every system.

use std::process::Command;

use serde_json::{Value, json};
use support::records::Header;

use crate::pingpong::PING_WARMUP;
use crate::plan::Plan;
use crate::setup::BATCH;
use crate::transport::POLL_LIMIT;
use crate::transports::aeron::{AERON_TERM_BYTES, publication_uri};

/// The header of this invocation; `aeron_c` is the C library's version when Aeron runs.
pub fn header(plan: &Plan, command: &str, aeron_c: Option<&str>) -> Header {
    let mut header = Header::new(command, plan.rounds);
    header.versions = Some(versions(aeron_c));
    header.config = Some(config(plan));
    header
}

fn versions(aeron_c: Option<&str>) -> Value {
    json!({
        "salias": salias_revision(),
        "rusteron-client": lock_version("rusteron-client"),
        "rusteron-media-driver": lock_version("rusteron-media-driver"),
        "aeron-c": aeron_c.unwrap_or("not run"),
        "iceoryx2": lock_version("iceoryx2"),
        "rustc": env!("CMP_RUSTC_VERSION"),
    })
}

fn config(plan: &Plan) -> Value {
    let (ring, ice_buffer) = (plan.salias_ring, plan.ice_buffer);
    json!({
        "messages_per_publisher": plan.messages,
        "pings": plan.pings,
        "ping_warmup": PING_WARMUP,
        "poll_limit": POLL_LIMIT,
        "subscriber_pauses": format!(
            "{}: pauses every throughput subscriber spins after a poll that came back short (some \
             messages, fewer than poll_limit)",
            plan.subscriber_pauses
        ),
        "batch": BATCH,
        "salias_ring_bytes": ring,
        "aeron_uri": publication_uri(plan.aeron_term),
        "aeron_term": format!(
            "throughput and open loop: the setup's term (records' ring_bytes; {} B unless --headline or \
             --aeron-term); ping-pong: {AERON_TERM_BYTES} B",
            plan.aeron_term
        ),
        "headline": plan.headline.then(|| format!(
            "2P1S and 2P2S x 1, 4, 64 MiB: salias FIFO offer (ring = size; FifoMpsc / FifoFanout) vs Aeron \
             try_claim (term = size), alternating; every record marked oversubscribed: {}",
            plan.marked_oversubscribed
        )),
        "aeron_driver": "embedded C driver in the parent process, threading SHARED, backoff idle, unpinned; \
            non-sparse log files, clients pre-touch mapped memory, publication linger 200 ms",
        "iceoryx2_throughput": format!(
            "ipc::Service, subscriber_max_buffer_size {ice_buffer}, safe overflow off, history 0, \
             DiscardData + application retry"
        ),
        "iceoryx2_latency": "buffer 1, safe overflow on, history 0",
        "openloop": {
            "loads_m_per_s": plan.loads,
            "duration_s": plan.ol_duration,
            "warmup_s": plan.ol_warmup,
            "systems": format!(
                "salias FifoMpsc 1P1S offer (ring {ring} B); aeron exclusive publication try_claim; \
                 iceoryx2 throughput service (buffer {ice_buffer}) loan_uninit, refused = reached no subscriber"
            ),
            "stamps": "latency clock ns (header latency_clock: the counter on the parent's calibration, or CLOCK_MONOTONIC); words[0] planned, words[1] sent (the clock read that ended the wait; \
                restamped on a retry); receive stamped per message in the poll callback",
            "histogram": "hdrhistogram 7, 1 ns .. 1000 s, 3 significant digits",
            "saturated": "plan ended > 10% late or queueing p50 > 100 us",
            "realtime": plan.realtime,
        },
        "wake": {
            "messages_per_run": plan.wake_plan.messages,
            "idle_ms": plan.wake_plan.idle_ms,
            "gap_us": support::wake::GAP_US,
            "systems": "salias FifoMpsc 1P1S send / recv (Adaptive), and try_recv with the Subscriber's fd in \
                epoll; iceoryx2 latency service send + \
                event service notify / blocking_wait then receive",
            "stamps": "CLOCK_MONOTONIC ns; words[0] read just before the commit; the receiver's clock read \
                as its wait returned",
        },
    })
}

/// A package's version, read from this crate's Cargo.lock at build time.
fn lock_version(package: &str) -> String {
    let lock = include_str!("../../Cargo.lock");
    let needle = format!("name = \"{package}\"\nversion = \"");
    lock.find(&needle)
        .and_then(|at| {
            let rest = &lock[at + needle.len()..];
            rest.find('"').map(|end| rest[..end].to_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// The salias commit measured, `+dirty` when its sources differ from it.
fn salias_revision() -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let run = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let head = run(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = run(&["status", "--porcelain", "--", "src", "Cargo.toml"]).is_some_and(|s| !s.is_empty());
    format!("{head}{}", if dirty { "+dirty" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peers_versions_come_from_the_lock_file() {
        assert_eq!(lock_version("iceoryx2"), "0.10.0");
        assert_eq!(lock_version("rusteron-client"), "0.2.16");
        assert_eq!(lock_version("no-such-package"), "unknown");
    }
}
