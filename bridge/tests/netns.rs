//! The bridge across a real network path: two network namespaces joined by a veth pair
//! (10.213.0.1/30 and 10.213.0.2/30, made for the test and removed after it), an `out`
//! process in one and an `in` process in the other. Needs root and `ip`; without them it
//! prints SKIPPED, and under CI (`CI` set) it fails instead.

mod common;

use std::process::Command;

use common::{Bridge, STEP, Tick, all_but, args, endpoints, free_port, gap_of, two_publishers_arrive_in_order, unique};
use salias::{Config, FifoMpsc, OrderedMpsc};

const A: &str = "10.213.0.1";
const B: &str = "10.213.0.2";

fn ip(args: &[&str]) -> Result<(), String> {
    let output = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// Two namespaces and the veth pair between them; removed on drop, whatever happened.
struct Namespaces {
    a: String,
    b: String,
}

impl Namespaces {
    fn new() -> Result<Namespaces, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("creating network namespaces needs root".into());
        }
        // One pair per test: the tests of this file run at the same time.
        static PAIRS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let pair = PAIRS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = std::process::id() % 100_000;
        let namespaces = Namespaces {
            a: format!("slbr-a-{id}-{pair}"),
            b: format!("slbr-b-{id}-{pair}"),
        };
        ip(&["netns", "add", &namespaces.a])?;
        ip(&["netns", "add", &namespaces.b])?;
        // Interface names are at most 15 bytes; they live in the namespaces, so they
        // cannot clash with another run's.
        ip(&[
            "-n",
            &namespaces.a,
            "link",
            "add",
            "veth-a",
            "type",
            "veth",
            "peer",
            "name",
            "veth-b",
            "netns",
            &namespaces.b,
        ])?;
        for (ns, dev, address) in [(&namespaces.a, "veth-a", A), (&namespaces.b, "veth-b", B)] {
            ip(&["-n", ns, "addr", "add", &format!("{address}/30"), "dev", dev])?;
            ip(&["-n", ns, "link", "set", dev, "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(namespaces)
    }

    /// Bytes namespace `ns`'s end of the veth pair has sent.
    fn tx_bytes(ns: &str, dev: &str) -> u64 {
        let output = Command::new("ip")
            .args([
                "netns",
                "exec",
                ns,
                "cat",
                &format!("/sys/class/net/{dev}/statistics/tx_bytes"),
            ])
            .output()
            .expect("read the veth's counters");
        String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .expect("a byte count")
    }

    /// The command prefixes that run a bridge in namespace `b` (the `in` side) and in
    /// namespace `a` (the `out` side).
    fn prefixes(&self) -> ([&str; 4], [&str; 4]) {
        (["ip", "netns", "exec", &self.b], ["ip", "netns", "exec", &self.a])
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth, and so the pair.
        let _ = ip(&["netns", "del", &self.a]);
        let _ = ip(&["netns", "del", &self.b]);
    }
}

fn namespaces_or_skip(test: &str) -> Option<Namespaces> {
    match Namespaces::new() {
        Ok(namespaces) => Some(namespaces),
        Err(reason) if std::env::var_os("CI").is_some() => {
            panic!("{test} must run under CI, and could not set up two network namespaces: {reason}")
        }
        Err(reason) => {
            // Straight to stderr, which the harness does not capture, so a passing run
            // still shows what it left out.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
            None
        }
    }
}

#[test]
fn the_bridge_crosses_a_veth_pair_between_two_network_namespaces() {
    const TEST: &str = "the_bridge_crosses_a_veth_pair_between_two_network_namespaces";
    const PER_PUBLISHER: u64 = 20_000;
    let Some(namespaces) = namespaces_or_skip(TEST) else {
        return;
    };
    // Shared memory is not namespaced by `ip netns exec`: the test's channels are the
    // bridges' local channels, on either end of the network path.
    let (listen, connect) = endpoints(B, free_port());
    let (in_prefix, out_prefix) = namespaces.prefixes();

    // FIFO: every message, intact and in each publisher's order; then a killed `out`.
    let (from, to) = (unique("netns-fifo-a"), unique("netns-fifo-b"));
    let source = FifoMpsc::<Tick>::create(&Config::new(&from).publishers(2)).unwrap();
    let target = FifoMpsc::<Tick>::create(&Config::new(&to)).unwrap();
    let key = unique("netns-fifo");
    let mut inbound = Bridge::spawn(&in_prefix, &args(&["in", "--key", &key, "--channel", &to], &listen));
    inbound.wait_for("in: ");
    let mut outbound = Bridge::spawn(
        &out_prefix,
        &args(&["out", "--channel", &from, "--key", &key], &connect),
    );
    two_publishers_arrive_in_order(&source, &target, PER_PUBLISHER);
    // The messages crossed the veth pair (Tick is 24 bytes; batching adds headers).
    let sent = Namespaces::tx_bytes(&namespaces.a, "veth-a");
    assert!(sent > 2 * PER_PUBLISHER * 24, "veth-a sent {sent} bytes");
    outbound.wait_for("out: channel");
    outbound.kill();
    let line = inbound.wait_for("out lost");
    assert!(line.contains(&format!(" messages={} ", 2 * PER_PUBLISHER)), "{line}");
    drop(inbound);

    // Ordered, with a sample lost on the way: the gap is reported and nothing else missing.
    let (from, to) = (unique("netns-ordered-a"), unique("netns-ordered-b"));
    let source = OrderedMpsc::<Tick>::create(&Config::new(&from)).unwrap();
    let target = OrderedMpsc::<Tick>::create(&Config::new(&to)).unwrap();
    let key = unique("netns-ordered");
    let mut inbound = Bridge::spawn(&in_prefix, &args(&["in", "--key", &key, "--channel", &to], &listen));
    inbound.wait_for("in: ");
    let _outbound = Bridge::spawn(
        &out_prefix,
        &[
            args(&["out", "--channel", &from, "--key", &key], &connect),
            vec!["--batch", "10", "--drop-batch", "2"],
        ]
        .concat(),
    );
    let mut publisher = source.publisher().unwrap();
    for seq in 0..100 {
        publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap();
    }
    let missing = gap_of(&inbound.wait_for("gap in stream"));
    all_but(&target, 100, missing);
}

#[test]
fn a_killed_in_across_the_veth_pair_reports_exactly_what_it_never_delivered() {
    const TEST: &str = "a_killed_in_across_the_veth_pair_reports_exactly_what_it_never_delivered";
    let Some(namespaces) = namespaces_or_skip(TEST) else {
        return;
    };
    let (in_prefix, out_prefix) = namespaces.prefixes();
    for ordered in [false, true] {
        common::a_killed_in_reports_what_it_never_delivered(ordered, &in_prefix, &out_prefix, B);
    }
}

#[test]
fn a_far_channel_replaced_under_its_name_is_followed_across_the_veth_pair() {
    const TEST: &str = "a_far_channel_replaced_under_its_name_is_followed_across_the_veth_pair";
    let Some(namespaces) = namespaces_or_skip(TEST) else {
        return;
    };
    let (in_prefix, out_prefix) = namespaces.prefixes();
    common::a_replaced_far_channel_is_followed(&in_prefix, &out_prefix, B);
}
