//! Latency: ping-pong round trip / 2, the children's loop and the parent's run.

use std::io::BufRead;

use salias::{Channel, Config, Fifo, Mpsc};

use crate::message::Msg64;
use crate::platform::{interrupted, latency_cores, now_ns};
use crate::roles::{ChildArgs, spawn_role};
use crate::shm::Barrier;
use crate::throughput::{Ctx, Resources, unique_name};
use crate::transports::iceoryx2 as ice;

pub const PING_WARMUP: u64 = 10_000;

/// Runs PING_WARMUP unrecorded then `pings` recorded round trips; `round_trip(seq)` sends
/// message `seq` and returns the echo.
pub fn ping_loop(pings: u64, mut round_trip: impl FnMut(u64) -> Msg64) -> Vec<u64> {
    let mut samples = Vec::with_capacity(pings as usize);
    for seq in 0..PING_WARMUP + pings {
        let sent = now_ns();
        let back = round_trip(seq);
        let rtt = now_ns() - sent;
        assert_eq!(back.seq, seq, "ping-pong out of step");
        assert_eq!(back.words[5], seq, "ping-pong corrupted");
        if seq >= PING_WARMUP {
            samples.push(rtt);
        }
    }
    samples.sort_unstable();
    samples
}

pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Prints round-trip percentiles (ns): p50 p90 p99 p99.9 p99.99 max count.
pub fn report_pings(sorted: &[u64]) {
    println!(
        "RESULT pings {} {} {} {} {} {} {}",
        percentile(sorted, 0.5),
        percentile(sorted, 0.9),
        percentile(sorted, 0.99),
        percentile(sorted, 0.999),
        percentile(sorted, 0.9999),
        sorted[sorted.len() - 1],
        sorted.len()
    );
}

/// Round-trip percentiles (ns) of one ping-pong run.
pub struct Pings {
    pub rtt: [u64; 6],
    pub count: u64,
}

pub fn pingpong_run(system: &'static str, pings: u64, round: usize, ctx: &mut Ctx) -> (Pings, [usize; 2]) {
    let name = unique_name(system, round);
    let stream = ctx.stream();
    let resources = match system {
        "salias" => {
            let ping = Channel::<Msg64, Fifo, Mpsc>::create(&Config::new(format!("{name}-ping"))).unwrap();
            let pong = Channel::<Msg64, Fifo, Mpsc>::create(&Config::new(format!("{name}-pong"))).unwrap();
            Resources::Salias(vec![Box::new(ping), Box::new(pong)])
        }
        "iceoryx2" => {
            ice::quiet();
            let node = ice::node();
            let ping = ice::latency_service(&node, &format!("{name}/ping"), true);
            let pong = ice::latency_service(&node, &format!("{name}/pong"), true);
            Resources::Ice(vec![ping, pong], node)
        }
        _ => Resources::None,
    };

    let barrier = Barrier::create(&name);
    let cores = latency_cores();
    let args = ChildArgs {
        system: system.into(),
        variant: "pingpong".into(),
        publishers: 1,
        messages: pings,
        param: 0,
        index: 0,
        extra: ctx.aeron_dir.clone(),
        stream,
        rest: Vec::new(),
    }
    .to_args();
    let mut children = vec![
        spawn_role("pong", &name, cores[1], &args),
        spawn_role("ping", &name, cores[0], &args),
    ];
    barrier.release_when(2, &mut children);
    let mut result = None;
    for mut child in children {
        let stdout = child.stdout.take().unwrap();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.first() == Some(&"RESULT") && words[1] == "pings" {
                let v: Vec<u64> = words[2..9].iter().map(|w| w.parse().unwrap()).collect();
                result = Some(Pings {
                    rtt: [v[0], v[1], v[2], v[3], v[4], v[5]],
                    count: v[6],
                });
            }
        }
        assert!(
            child.wait().unwrap().success(),
            "a ping-pong process failed{}: {system}",
            interrupted()
        );
    }
    drop(barrier);
    drop(resources);
    (result.expect("pinger reported nothing"), cores)
}
