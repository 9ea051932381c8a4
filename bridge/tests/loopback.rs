//! Two bridge processes over 127.0.0.1, zenoh in peer mode with explicit endpoints and
//! no multicast scouting: what arrives, in what order, and what is reported when it does
//! not (a type or kind mismatch, a lost sample, a killed `out`).

mod common;

use std::time::{Duration, Instant};

use common::{
    Bridge, Other, STEP, Tick, all_but, args, endpoints, fifo_channels, free_port, gap_of, pass_through,
    two_publishers_arrive_in_order, unique,
};
use salias::{Config, FifoFanout, FifoMpsc, OrderedMpsc, RawFifoMpsc};

const PER_PUBLISHER: u64 = 20_000;

/// Starts `in` (listening) and `out` (connecting) between local channels `from` and `to`.
fn bridges(key: &str, from: &str, to: &str, in_extra: &[&str], out_extra: &[&str]) -> (Bridge, Bridge) {
    let (listen, connect) = endpoints("127.0.0.1", free_port());
    let mut inbound = Bridge::spawn(
        &[],
        &[args(&["in", "--key", key, "--channel", to], &listen), in_extra.to_vec()].concat(),
    );
    inbound.wait_for(if in_extra.contains(&"--json") {
        r#""event":"in""#
    } else {
        "in: "
    });
    let outbound = Bridge::spawn(
        &[],
        &[
            args(&["out", "--channel", from, "--key", key], &connect),
            out_extra.to_vec(),
        ]
        .concat(),
    );
    (inbound, outbound)
}

#[test]
fn fifo_messages_arrive_intact_and_in_publisher_order() {
    let (from, to) = (unique("fifo-a"), unique("fifo-b"));
    let source = FifoMpsc::<Tick>::create(&Config::new(&from).publishers(2)).unwrap();
    let target = FifoMpsc::<Tick>::create(&Config::new(&to)).unwrap();
    let (mut inbound, _outbound) = bridges(&unique("fifo"), &from, &to, &[], &["--batch", "32"]);
    two_publishers_arrive_in_order(&source, &target, PER_PUBLISHER);
    inbound.wait_for("stream ");
    assert!(
        !inbound.seen.iter().any(|l| l.contains("gap")),
        "no gap: {:?}",
        inbound.seen
    );
}

#[test]
fn a_mismatched_local_channel_is_refused_with_connects_error() {
    for case in ["type", "kind"] {
        let (from, to) = (unique(&format!("{case}-a")), unique(&format!("{case}-b")));
        let source = FifoMpsc::<Tick>::create(&Config::new(&from)).unwrap();
        // What a local connect of the stream's type and kind says about the far channel.
        let (_typed, _fanout, local_error) = if case == "type" {
            let target = FifoMpsc::<Other>::create(&Config::new(&to)).unwrap();
            (Some(target), None, FifoMpsc::<Tick>::connect(&to).unwrap_err())
        } else {
            let target = FifoFanout::<Tick>::create(&Config::new(&to)).unwrap();
            (None, Some(target), FifoMpsc::<Tick>::connect(&to).unwrap_err())
        };
        let (mut inbound, _outbound) = bridges(&unique(case), &from, &to, &[], &[]);
        source.publisher().unwrap().offer(&Tick::new(0, 0)).unwrap();
        let line = inbound.wait_for("refused stream");
        assert!(
            line.contains(&local_error.to_string()),
            "{case}: {line:?} gives {local_error}"
        );
        let (status, _) = inbound.wait_exit();
        assert!(!status.success(), "{case}: the in side exits with failure");
    }
}

#[test]
fn an_ordered_stream_reports_a_lost_sample_as_a_gap() {
    const MESSAGES: u64 = 200;
    let (from, to) = (unique("ordered-a"), unique("ordered-b"));
    let source = OrderedMpsc::<Tick>::create(&Config::new(&from)).unwrap();
    let target = OrderedMpsc::<Tick>::create(&Config::new(&to)).unwrap();
    // Batches of at most 10, so batch 3 exists and later ones show the gap.
    let (mut inbound, _outbound) = bridges(
        &unique("ordered"),
        &from,
        &to,
        &[],
        &["--batch", "10", "--drop-batch", "3"],
    );
    let mut publisher = source.publisher().unwrap();
    for seq in 0..MESSAGES {
        publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap();
    }
    let missing = gap_of(&inbound.wait_for("gap in stream"));
    assert!(
        missing.start >= 3 && !missing.is_empty() && missing.end - missing.start <= 10,
        "batch 3 of at most 10: {missing:?}"
    );
    all_but(&target, MESSAGES, missing);
}

/// With `--json`, every line either side prints on stdout is one JSON object led by its
/// event's name, and the reports carry what the text lines do: the stream, a lost
/// sample's exact gap, the counts, and a killed `out` with what had arrived.
#[test]
fn json_lines_carry_the_stream_a_gap_the_counts_and_a_lost_out() {
    const MESSAGES: u64 = 200;
    let (from, to) = (unique("json-a"), unique("json-b"));
    let source = OrderedMpsc::<Tick>::create(&Config::new(&from)).unwrap();
    let target = OrderedMpsc::<Tick>::create(&Config::new(&to)).unwrap();
    let (mut inbound, mut outbound) = bridges(
        &unique("json"),
        &from,
        &to,
        &["--json", "--stats-every", "20", "--exit-after-lost-outs", "1"],
        &["--json", "--batch", "10", "--drop-batch", "3"],
    );
    let mut publisher = source.publisher().unwrap();
    for seq in 0..MESSAGES {
        publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap();
    }
    let json = |line: String| -> serde_json::Value {
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not one JSON object ({e}): {line}"))
    };
    let started = json(outbound.wait_for(r#""event":"out""#));
    assert_eq!(started["kind"], "OrderedMpsc", "{started}");
    assert_eq!(started["channel"], from.as_str(), "{started}");
    let stream = json(inbound.wait_for(r#""event":"stream""#));
    assert_eq!(stream["stream_id"], started["stream_id"], "{stream}");
    assert_eq!(
        stream["type"].as_str().map(|t| t.contains("Tick")),
        Some(true),
        "{stream}"
    );
    let gap = json(inbound.wait_for(r#""event":"gap""#));
    let (start, end) = (
        gap["missing"]["start"].as_u64().unwrap(),
        gap["missing"]["end"].as_u64().unwrap(),
    );
    assert!(
        start >= 3 && end > start && end - start <= 10,
        "batch 3 of at most 10: {gap}"
    );
    assert_eq!(
        (gap["count"].as_u64(), &gap["numbers"]),
        (Some(end - start), &serde_json::json!("sequence"))
    );
    all_but(&target, MESSAGES, start..end);
    // The counts, until they show every message that arrived delivered.
    let delivered = MESSAGES - (end - start);
    loop {
        let stats = json(inbound.wait_for(r#""event":"stats""#));
        assert_eq!(
            (&stats["side"], stats["missing"].as_u64()),
            (&serde_json::json!("in"), Some(end - start)),
            "{stats}"
        );
        assert!(stats["allocations"].is_u64(), "{stats}");
        if stats["delivered"].as_u64() == Some(delivered) {
            break;
        }
    }
    outbound.kill();
    let lost = json(inbound.wait_for(r#""event":"out_lost""#));
    assert_eq!(lost["stream_id"], started["stream_id"], "{lost}");
    assert_eq!(lost["stats"]["delivered"].as_u64(), Some(delivered), "{lost}");
    let (status, lines) = inbound.wait_exit();
    assert!(status.success());
    let last = json(lines.last().cloned().expect("a last line"));
    assert_eq!(
        (&last["event"], last["outs_lost"].as_u64()),
        (&serde_json::json!("stopped"), Some(1)),
        "{last}"
    );
    for line in lines.into_iter().chain(outbound.seen.clone()) {
        json(line);
    }
}

#[test]
fn a_killed_out_is_reported_and_a_raw_channel_is_created() {
    let (from, to) = (unique("raw-a"), unique("raw-b"));
    let source = RawFifoMpsc::create(&Config::new(&from).max_message_size(100)).unwrap();
    let (mut inbound, mut outbound) = bridges(&unique("raw"), &from, &to, &["--exit-after-lost-outs", "1"], &[]);
    let mut publisher = source.publisher().unwrap();
    for i in 0..100u8 {
        publisher.send_timeout(&vec![i; i as usize], STEP).unwrap();
    }
    inbound.wait_for("stream ");
    // The in side created the raw channel with the far one's largest message.
    let deadline = Instant::now() + STEP;
    let target = loop {
        match RawFifoMpsc::connect(&to) {
            Ok(channel) => break channel,
            Err(e) => assert!(Instant::now() < deadline, "{to} never appeared: {e}"),
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(target.max_message_size(), 100);
    let mut subscriber = target.subscriber().unwrap();
    for i in 0..100u8 {
        let message = subscriber.recv_timeout(STEP).unwrap();
        assert_eq!(&*message, &vec![i; i as usize][..]);
    }
    drop(subscriber);
    outbound.wait_for("out: channel");
    outbound.kill();
    let line = inbound.wait_for("out lost");
    assert!(
        line.contains(" messages=100 "),
        "the report counts what arrived: {line}"
    );
    let (status, _) = inbound.wait_exit();
    assert!(status.success());
}

#[test]
fn a_far_publisher_that_died_holding_a_number_is_a_gap_on_the_near_side() {
    const TEST: &str = "a_far_publisher_that_died_holding_a_number_is_a_gap_on_the_near_side";
    const ROLE: &str = "SALIAS_BRIDGE_TEST_DIE_HOLDING";
    if let Some(channel) = std::env::var_os(ROLE) {
        // The far publisher: sends number 50, takes number 51 and dies before committing it.
        let channel = OrderedMpsc::<Tick>::connect(channel.to_str().expect("UTF-8")).unwrap();
        let mut publisher = channel.publisher().unwrap();
        publisher.send_timeout(&Tick::new(1, 50), STEP).unwrap();
        publisher.__take_sequence_then_die();
    }
    let (from, to) = (unique("died-a"), unique("died-b"));
    let source = OrderedMpsc::<Tick>::create(&Config::new(&from).publishers(2)).unwrap();
    let target = OrderedMpsc::<Tick>::create(&Config::new(&to)).unwrap();
    let (mut inbound, _outbound) = bridges(&unique("died"), &from, &to, &[], &[]);
    let mut publisher = source.publisher().unwrap();
    for seq in 0..50 {
        publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap();
    }
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([TEST, "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env(ROLE, &from)
        .status()
        .unwrap();
    assert!(!status.success(), "the far publisher died");
    for seq in 52..100 {
        publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap();
    }
    // The far side's subscriber finds number 51 lost; the near side reports it.
    assert_eq!(gap_of(&inbound.wait_for("gap in stream")), 51..52);
    all_but(&target, 100, 51..52);
}

#[test]
fn messages_wait_in_the_channel_while_no_far_side_subscribes() {
    let (from, to, source, target) = fifo_channels("wait");
    let (listen, connect) = endpoints("127.0.0.1", free_port());
    let key = unique("wait");
    let start_in = || {
        let mut inbound = Bridge::spawn(&[], &args(&["in", "--key", &key, "--channel", &to], &listen));
        inbound.wait_for("in: ");
        inbound
    };
    let mut first = start_in();
    let _outbound = Bridge::spawn(&[], &args(&["out", "--channel", &from, "--key", &key], &connect));
    let mut publisher = source.publisher().unwrap();
    let mut subscriber = target.subscriber().unwrap();
    pass_through(&mut publisher, &mut subscriber, 0..100);
    first.kill();
    // Long enough for `out` to see its subscriber gone (its socket closed at once).
    std::thread::sleep(Duration::from_millis(300));
    for seq in 100..200 {
        publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap();
    }
    // A new far side (on the same endpoint, which `out` reconnects to) gets them all;
    // with `--no-wait-for-subscriber` they would have gone to nobody.
    let _second = start_in();
    // The killed `in` was the near channel's one publisher: its subscriber may hear that
    // every publisher went (once) before the next `in`'s publisher arrives.
    let mut departures = 0;
    for seq in 100..200 {
        let tick = loop {
            match subscriber.recv_timeout(STEP) {
                Err(salias::ReceiveError::Disconnected) if departures == 0 => departures += 1,
                other => break *other.unwrap(),
            }
        };
        assert_eq!(tick.seq, seq, "none went to nobody");
    }
}

/// zenoh's UDP link, when built in (`--features udp`): the same stream, over udp/127.0.0.1.
#[cfg(feature = "udp")]
#[test]
fn fifo_messages_cross_zenohs_udp_link() {
    let (from, to) = (unique("udp-a"), unique("udp-b"));
    let source = FifoMpsc::<Tick>::create(&Config::new(&from).publishers(2)).unwrap();
    let target = FifoMpsc::<Tick>::create(&Config::new(&to)).unwrap();
    let endpoint = format!("udp/127.0.0.1:{}", free_port());
    let key = unique("udp");
    let mut inbound = Bridge::spawn(
        &[],
        &[
            "in",
            "--key",
            &key,
            "--channel",
            &to,
            "--listen",
            &endpoint,
            "--no-scouting",
        ],
    );
    inbound.wait_for("in: ");
    let _outbound = Bridge::spawn(
        &[],
        &[
            "out",
            "--channel",
            &from,
            "--key",
            &key,
            "--connect",
            &endpoint,
            "--no-scouting",
        ],
    );
    two_publishers_arrive_in_order(&source, &target, 1_000);
}

#[test]
fn samples_that_are_not_a_bridges_are_counted_and_ignored() {
    use zenoh::Wait;
    let (from, to, source, target) = fifo_channels("garbage");
    let (listen, connect) = endpoints("127.0.0.1", free_port());
    let key = unique("garbage");
    let mut inbound = Bridge::spawn(&[], &args(&["in", "--key", &key, "--channel", &to], &listen));
    inbound.wait_for("in: ");
    // A stranger on the key: a sample without metadata, and one whose metadata is not a
    // bridge's (damaged batches of a real stream: the unit tests in src/wire.rs).
    let mut config = zenoh::Config::default();
    config.insert_json5("mode", "\"peer\"").unwrap();
    config
        .insert_json5("connect/endpoints", &format!("[\"{}\"]", connect[1]))
        .unwrap();
    config.insert_json5("scouting/multicast/enabled", "false").unwrap();
    let stranger = zenoh::open(config).wait().unwrap();
    let publisher = stranger.declare_publisher(key.clone()).wait().unwrap();
    let deadline = Instant::now() + STEP;
    while !publisher.matching_status().wait().unwrap().matching() {
        assert!(Instant::now() < deadline, "the in side never subscribed");
        std::thread::sleep(Duration::from_millis(10));
    }
    publisher.put(vec![1u8, 2, 3]).wait().unwrap();
    publisher.put(vec![4u8; 40]).attachment(vec![0xffu8; 9]).wait().unwrap();
    inbound.wait_for("has no stream metadata");
    inbound.wait_for("is not salias-bridge stream metadata");
    // The real stream still gets through, intact and in order.
    let _outbound = Bridge::spawn(&[], &args(&["out", "--channel", &from, "--key", &key], &connect));
    pass_through(
        &mut source.publisher().unwrap(),
        &mut target.subscriber().unwrap(),
        0..100,
    );
}

#[test]
fn drop_mode_counts_what_a_full_local_channel_refused() {
    const SENT: u64 = 2_000;
    let (from, to) = (unique("drop-a"), unique("drop-b"));
    let source = FifoMpsc::<Tick>::create(&Config::new(&from)).unwrap();
    // A small ring nobody reads yet: it fills after about a hundred messages.
    let target = FifoMpsc::<Tick>::create(&Config::new(&to).capacity(4096)).unwrap();
    let (mut inbound, _outbound) = bridges(
        &unique("drop"),
        &from,
        &to,
        &["--backpressure", "drop", "--stats-every", "20"],
        &[],
    );
    let mut publisher = source.publisher().unwrap();
    for seq in 0..SENT {
        publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap();
    }
    let line = inbound.wait_for(&format!(" messages={SENT} "));
    let count = |name: &str| -> u64 {
        let field = line
            .split(&format!(" {name}="))
            .nth(1)
            .and_then(|rest| rest.split(' ').next());
        field
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line:?}"))
    };
    let (delivered, dropped) = (count("delivered"), count("dropped"));
    assert!(dropped > 0, "a full channel drops: {line}");
    assert_eq!(
        delivered + dropped,
        SENT,
        "every message is delivered or counted: {line}"
    );
    // What was delivered is there, in order.
    let mut subscriber = target.subscriber().unwrap();
    let mut last = None;
    for _ in 0..delivered {
        let tick = *subscriber.recv_timeout(STEP).unwrap();
        assert!(
            tick.is_intact() && last.is_none_or(|last| tick.seq > last),
            "{tick:?} after {last:?}"
        );
        last = Some(tick.seq);
    }
    assert!(
        subscriber.recv_timeout(Duration::from_millis(200)).is_err(),
        "nothing more arrives"
    );
}

#[test]
fn a_killed_and_restarted_fifo_in_reports_exactly_what_it_never_delivered() {
    common::a_killed_in_reports_what_it_never_delivered(false, &[], &[], "127.0.0.1");
}

#[test]
fn a_killed_and_restarted_ordered_in_declares_what_it_never_delivered_as_a_gap() {
    common::a_killed_in_reports_what_it_never_delivered(true, &[], &[], "127.0.0.1");
}

#[test]
fn a_far_channel_replaced_under_its_name_is_followed() {
    common::a_replaced_far_channel_is_followed(&[], &[], "127.0.0.1");
}

#[test]
fn a_removed_far_channel_stops_out_with_exit_on_removal() {
    let (from, to, source, target) = fifo_channels("removed");
    let (mut inbound, mut outbound) = bridges(&unique("removed"), &from, &to, &[], &["--exit-on-removal"]);
    pass_through(
        &mut source.publisher().unwrap(),
        &mut target.subscriber().unwrap(),
        0..10,
    );
    inbound.wait_for("stream ");
    drop(source);
    let (status, lines) = outbound.wait_exit();
    assert!(!status.success(), "out exits with failure: {lines:?}");
    let removed = salias::status::NameState::Removed.to_string();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("salias-bridge: ") && l.contains(&removed)),
        "out says why, in salias's words ({removed:?}): {lines:?}"
    );
}

#[test]
fn a_near_channel_without_a_subscriber_holds_in_until_one_joins() {
    const FIRST: u64 = 10;
    const SENT: u64 = 1_000;
    let (from, to) = (unique("nosub-a"), unique("nosub-b"));
    let source = FifoMpsc::<Tick>::create(&Config::new(&from)).unwrap();
    // A ring of about 128 ticks.
    let target = FifoMpsc::<Tick>::create(&Config::new(&to).capacity(4096)).unwrap();
    let (mut inbound, _outbound) = bridges(&unique("nosub"), &from, &to, &["--stats-every", "20"], &[]);
    let mut publisher = source.publisher().unwrap();
    let mut subscriber = target.subscriber().unwrap();
    pass_through(&mut publisher, &mut subscriber, 0..FIRST);
    // The near subscriber leaves and the ring fills: the library refuses with
    // NoSubscriber, and block mode must wait for the next one, not fail or drop.
    drop(subscriber);
    for seq in FIRST..SENT {
        publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap();
    }
    // The ring fills within milliseconds; `in` then waits inside zenoh's callback.
    std::thread::sleep(Duration::from_millis(300));
    let mut subscriber = target.subscriber().unwrap();
    for seq in FIRST..SENT {
        let tick = *subscriber.recv_timeout(STEP).unwrap();
        assert!(tick.is_intact() && tick.seq == seq, "expected {seq}, got {tick:?}");
    }
    let line = inbound.wait_for(&format!(" delivered={SENT} "));
    assert!(common::stat(&line, "no_subscriber") > 0, "it met NoSubscriber: {line}");
    assert_eq!(common::stat(&line, "dropped"), 0, "and dropped nothing: {line}");
}

#[test]
fn a_raw_channel_a_killed_in_created_is_recovered_by_the_next_in() {
    let (from, to) = (unique("recover-a"), unique("recover-b"));
    let source = RawFifoMpsc::create(&Config::new(&from).max_message_size(16)).unwrap();
    let (listen, connect) = endpoints("127.0.0.1", free_port());
    let key = unique("recover");
    let in_args = args(&["in", "--key", &key, "--channel", &to], &listen);
    let mut first = Bridge::spawn(&[], &in_args);
    first.wait_for("in: ");
    let _outbound = Bridge::spawn(&[], &args(&["out", "--channel", &from, "--key", &key], &connect));
    let mut publisher = source.publisher().unwrap();
    publisher.send_timeout(&[1u8; 16][..], STEP).unwrap();
    first.wait_for("from channel");
    first.kill();
    // The killed `in` owned the near channel: it is stale now.
    let deadline = Instant::now() + STEP;
    while !salias::status::channel_status(&to).unwrap().is_stale() {
        assert!(Instant::now() < deadline, "{to} never became stale");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut second = Bridge::spawn(&[], &in_args);
    second.wait_for("in: ");
    // Until `out` sees the killed `in` gone, what it sends goes to nobody: send until
    // the next `in` has the stream.
    let mut sent = 2u8;
    loop {
        publisher.send_timeout(&[sent; 16][..], STEP).unwrap();
        if second.try_wait_for("from channel", Duration::from_secs(1)).is_some() {
            break;
        }
        assert!(sent < 30, "the next in never saw the stream");
        sent += 1;
    }
    let deadline = Instant::now() + STEP;
    let target = loop {
        match RawFifoMpsc::connect(&to) {
            Ok(channel) => break channel,
            Err(e) => assert!(Instant::now() < deadline, "{to} was never recovered: {e}"),
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut subscriber = target.subscriber().unwrap();
    let message = subscriber.recv_timeout(STEP).unwrap();
    assert!(
        (2..=sent).any(|value| *message == [value; 16][..]),
        "the next in delivers into the recovered channel: {:?}",
        &*message
    );
    assert!(!second.seen.iter().any(|l| l.contains("refused")), "{:?}", second.seen);
    // The `in` that created the near channel is killed, not stopped, so it leaves the
    // channel behind: remove it, or every run leaves a stale one in /dev/shm.
    drop(message);
    drop((subscriber, target));
    second.kill();
    salias::remove(&to).unwrap();
    assert!(salias::status::channel_status(&to).is_err(), "{to} is gone");
}
