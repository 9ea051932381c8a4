//! What the bridge tests share: bridge processes (killed when dropped), their output
//! read line by line, the test's message type, and local publishing and checking.

#![allow(dead_code)] // each test file uses its own part

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use salias::{Config, FifoMpsc, OrderedMpsc, Publisher, SaliasMessage, Subscriber};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// The test message: which publisher sent it, its number in that publisher's stream,
/// and a check word derived from both.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Tick {
    pub publisher: u64,
    pub seq: u64,
    pub check: u64,
}

impl Tick {
    pub fn new(publisher: u64, seq: u64) -> Tick {
        Tick {
            publisher,
            seq,
            check: seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ publisher,
        }
    }
    pub fn is_intact(&self) -> bool {
        *self == Tick::new(self.publisher, self.seq)
    }
}

/// Another type, of the same size, for mismatches.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Other {
    pub a: u64,
    pub b: u64,
    pub c: u64,
}

/// Longest any one step may take; every wait is bounded by it.
pub const STEP: Duration = Duration::from_secs(30);

pub fn unique(what: &str) -> String {
    format!("bridge-{what}-{}", std::process::id())
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind a port on 127.0.0.1")
        .local_addr()
        .expect("its address")
        .port()
}

/// A running `salias-bridge` process and its stdout, line by line.
pub struct Bridge {
    child: Child,
    lines: Receiver<String>,
    pub seen: Vec<String>,
    what: String,
}

impl Bridge {
    /// Runs `salias-bridge ARGS`, inside `prefix` (e.g. `ip netns exec NS`) if given.
    pub fn spawn(prefix: &[&str], args: &[&str]) -> Bridge {
        let binary = env!("CARGO_BIN_EXE_salias-bridge");
        let mut command = match prefix.split_first() {
            Some((first, rest)) => {
                let mut command = Command::new(first);
                command.args(rest).arg(binary);
                command
            }
            None => Command::new(binary),
        };
        // Every `in` keeps its state record in the test's own directory, not /dev/shm.
        let state = std::env::temp_dir().join(format!("bridge-tests-{}", std::process::id()));
        let state = state.to_str().expect("UTF-8").to_owned();
        if args.first() == Some(&"in") && !args.contains(&"--state-dir") {
            command.args(["in", "--state-dir", &state]);
            std::fs::create_dir_all(&state).expect("create the tests' state directory");
        } else {
            command.args(args.first());
        }
        let mut child = command
            .args(args.iter().skip(1))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting salias-bridge {args:?}: {e}"));
        let (sender, lines) = channel();
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        forward(stdout, sender.clone());
        forward(stderr, sender);
        Bridge {
            child,
            lines,
            seen: Vec::new(),
            what: args.iter().take(1).map(|s| s.to_string()).collect(),
        }
    }

    /// Waits (at most `STEP`) for a line containing `text`, and returns it.
    pub fn wait_for(&mut self, text: &str) -> String {
        if let Some(line) = self.try_wait_for(text, STEP) {
            return line;
        }
        match self.child.try_wait().ok().flatten() {
            Some(status) => panic!(
                "bridge {} exited ({status:?}) without printing {text:?}; it printed {:?}",
                self.what, self.seen
            ),
            None => panic!(
                "bridge {} printed no {text:?} within {STEP:?}; it printed {:?}",
                self.what, self.seen
            ),
        }
    }

    /// Waits at most `within` for a line containing `text`, and returns it if one came.
    pub fn try_wait_for(&mut self, text: &str, within: Duration) -> Option<String> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return Some(line);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Waits (at most `STEP`) for the process to exit, and returns its status and the
    /// lines it printed.
    pub fn wait_exit(&mut self) -> (std::process::ExitStatus, Vec<String>) {
        let deadline = Instant::now() + STEP;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the bridge") {
                while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
                    self.seen.push(line);
                }
                return (status, self.seen.clone());
            }
            assert!(
                Instant::now() < deadline,
                "bridge {} still runs after {STEP:?}",
                self.what
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends each line `from` prints (stdout or stderr: both are reports) to `to`.
fn forward(from: impl std::io::Read + Send + 'static, to: std::sync::mpsc::Sender<String>) {
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if to.send(line).is_err() {
                break;
            }
        }
    });
}

/// zenoh arguments of the two sides: `in` listens on `address:port`, `out` connects to
/// it, no multicast scouting.
pub fn endpoints(address: &str, port: u16) -> (Vec<String>, Vec<String>) {
    let endpoint = format!("tcp/{address}:{port}");
    (
        vec!["--listen".into(), endpoint.clone(), "--no-scouting".into()],
        vec!["--connect".into(), endpoint, "--no-scouting".into()],
    )
}

pub fn args<'a>(fixed: &[&'a str], more: &'a [String]) -> Vec<&'a str> {
    fixed.iter().copied().chain(more.iter().map(String::as_str)).collect()
}

/// Two publisher threads send `per_publisher` ticks each into `source`; every one must
/// come out of `target` intact and in its publisher's order.
pub fn two_publishers_arrive_in_order(source: &FifoMpsc<Tick>, target: &FifoMpsc<Tick>, per_publisher: u64) {
    let publishers: Vec<_> = (0..2u64)
        .map(|p| {
            let mut publisher = source.publisher().unwrap();
            std::thread::spawn(move || {
                for seq in 0..per_publisher {
                    publisher.send_timeout(&Tick::new(p, seq), STEP).unwrap();
                }
            })
        })
        .collect();
    let mut subscriber = target.subscriber().unwrap();
    let mut next = [0u64; 2];
    for _ in 0..2 * per_publisher {
        let tick = *subscriber.recv_timeout(STEP).unwrap();
        assert!(tick.is_intact(), "damaged: {tick:?}");
        assert_eq!(
            tick.seq, next[tick.publisher as usize],
            "publisher {}'s order",
            tick.publisher
        );
        next[tick.publisher as usize] += 1;
    }
    assert_eq!(next, [per_publisher; 2]);
    for publisher in publishers {
        publisher.join().unwrap();
    }
    assert!(
        subscriber.recv_timeout(Duration::from_millis(200)).is_err(),
        "nothing more arrives"
    );
}

/// The missing range in an `in` bridge's "gap in stream ID: sequence numbers A..B
/// missing (N)" line.
pub fn gap_of(line: &str) -> std::ops::Range<u64> {
    let range = line.split("sequence numbers ").nth(1).and_then(|r| r.split(' ').next());
    let (start, end) = range
        .and_then(|r| r.split_once(".."))
        .unwrap_or_else(|| panic!("no A..B in {line:?}"));
    start.parse().unwrap()..end.parse().unwrap()
}

/// Everything in `0..total` but `missing` comes out of `target`, intact and in order, and
/// nothing more; its subscriber reports `missing` as the one gap, exactly.
pub fn all_but(target: &OrderedMpsc<Tick>, total: u64, missing: std::ops::Range<u64>) {
    let mut subscriber = target.subscriber().unwrap();
    let expected: Vec<u64> = (0..total).filter(|seq| !missing.contains(seq)).collect();
    let mut received = Vec::new();
    while received.len() < expected.len() {
        let tick = subscriber.recv_timeout(STEP).unwrap();
        assert!(tick.is_intact());
        // The bridge declared the lost numbers in this channel: its numbers are the far
        // ones, and the message after the gap reports it.
        let gap_before = if tick.seq == missing.end {
            missing.end - missing.start
        } else {
            0
        };
        assert_eq!((tick.sequence(), tick.gap_before()), (tick.seq, gap_before));
        received.push(tick.seq);
    }
    assert_eq!(received, expected, "everything but the lost batch, in order");
    let gaps = salias::receive::Gaps {
        events: 1,
        missing: missing.end - missing.start,
        last: Some(missing),
    };
    assert_eq!(subscriber.gaps(), &gaps, "the near subscriber reports the exact gap");
    assert!(
        subscriber.recv_timeout(Duration::from_millis(200)).is_err(),
        "nothing more arrives"
    );
}

/// A source and a target FIFO channel for test `what`: their names and the channels.
pub fn fifo_channels(what: &str) -> (String, String, FifoMpsc<Tick>, FifoMpsc<Tick>) {
    let (from, to) = (unique(&format!("{what}-a")), unique(&format!("{what}-b")));
    let source = FifoMpsc::<Tick>::create(&Config::new(&from).capacity(4 << 20)).unwrap();
    let target = FifoMpsc::<Tick>::create(&Config::new(&to).capacity(4 << 20)).unwrap();
    (from, to, source, target)
}

/// Sends ticks `seqs` and receives every one, intact and in order, on the far channel.
pub fn pass_through(publisher: &mut Publisher<Tick>, subscriber: &mut Subscriber<Tick>, seqs: std::ops::Range<u64>) {
    for seq in seqs.clone() {
        publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap();
    }
    for seq in seqs {
        let tick = *subscriber.recv_timeout(STEP).unwrap();
        assert!(tick.is_intact() && tick.seq == seq, "expected {seq}, got {tick:?}");
    }
}

/// A directory for one test's `in` state records, removed when dropped.
pub struct StateDir(pub std::path::PathBuf);

impl StateDir {
    pub fn new(what: &str) -> StateDir {
        let dir = std::env::temp_dir().join(unique(&format!("state-{what}")));
        std::fs::create_dir_all(&dir).expect("create the state directory");
        StateDir(dir)
    }
    pub fn arg(&self) -> String {
        self.0.to_str().expect("UTF-8").to_owned()
    }
}

impl Drop for StateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The message range in a restarted `in`'s "undelivered in stream ID: messages A..B (N)
/// were not delivered …" line.
pub fn undelivered_of(line: &str) -> std::ops::Range<u64> {
    let range = line.split(": messages ").nth(1).and_then(|r| r.split(' ').next());
    let (start, end) = range
        .and_then(|r| r.split_once(".."))
        .unwrap_or_else(|| panic!("no A..B in {line:?}"));
    start.parse().unwrap()..end.parse().unwrap()
}

/// A count in an `in` or `out` "… stats: name=N …" line.
pub fn stat(line: &str, name: &str) -> u64 {
    line.split(&format!(" {name}="))
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line:?}"))
}

/// `in` is SIGKILLed while it holds messages it could not deliver yet (the near channel
/// is full and nobody reads it), and restarted with the same state record: the restart
/// must report exactly the messages that never reached the near channel, and every other
/// message of the stream must arrive, intact and in order. `in` listens on
/// `address:port` inside `in_prefix`, `out` connects from inside `out_prefix`.
pub fn a_killed_in_reports_what_it_never_delivered(
    ordered: bool,
    in_prefix: &[&str],
    out_prefix: &[&str],
    address: &str,
) {
    // Sent before the kill; the near ring holds about 128 of them.
    const BEFORE: u64 = 3_000;
    // Sent after the restart, a round at a time, until the restarted `in` sees the
    // stream again: until `out` sees the killed `in` gone, what it sends goes to nobody
    // (and is then part of what the restart reports).
    const ROUND: u64 = 100;
    const ROUNDS: u64 = 30;
    let what = if ordered { "killed-in-ordered" } else { "killed-in-fifo" };
    let (from, to) = (unique(&format!("{what}-a")), unique(&format!("{what}-b")));
    let state = StateDir::new(what);
    let (listen, connect) = endpoints(address, free_port());
    let key = unique(what);
    let dir = state.arg();
    let in_args = [
        args(&["in", "--key", &key, "--channel", &to], &listen),
        vec!["--state-dir", &dir],
    ]
    .concat();
    let far = Config::new(&from).capacity(4 << 20);
    let near = Config::new(&to).capacity(4096);
    // Either kind, as the same calls: publishers of Tick with the sequence = tick.seq.
    let (fifo, ordered_channels) = if ordered {
        (
            None,
            Some((
                OrderedMpsc::<Tick>::create(&far).unwrap(),
                OrderedMpsc::<Tick>::create(&near).unwrap(),
            )),
        )
    } else {
        (
            Some((
                FifoMpsc::<Tick>::create(&far).unwrap(),
                FifoMpsc::<Tick>::create(&near).unwrap(),
            )),
            None,
        )
    };
    let mut publish: Box<dyn FnMut(u64)> = match (&fifo, &ordered_channels) {
        (Some((source, _)), _) => {
            let mut publisher = source.publisher().unwrap();
            Box::new(move |seq| publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap())
        }
        (_, Some((source, _))) => {
            let mut publisher = source.publisher().unwrap();
            Box::new(move |seq| publisher.send_timeout(&Tick::new(0, seq), STEP).unwrap())
        }
        _ => unreachable!("one kind or the other"),
    };
    let mut send = |seqs: std::ops::Range<u64>| seqs.for_each(&mut publish);
    let mut first = Bridge::spawn(in_prefix, &in_args);
    first.wait_for("in: ");
    let mut outbound = Bridge::spawn(
        out_prefix,
        &[
            args(&["out", "--channel", &from, "--key", &key], &connect),
            vec!["--stats-every", "20"],
        ]
        .concat(),
    );
    send(0..BEFORE);
    // `out` has sent them all; `in` delivered what the near ring takes and holds the rest.
    outbound.wait_for(&format!("messages={BEFORE} "));
    first.wait_for("from channel");
    std::thread::sleep(Duration::from_millis(200));
    first.kill();
    let mut second = Bridge::spawn(in_prefix, &in_args);
    second.wait_for("in: ");
    let mut total = BEFORE;
    let line = loop {
        assert!(
            total < BEFORE + ROUND * ROUNDS,
            "the restarted in never reported what it missed"
        );
        send(total..total + ROUND);
        total += ROUND;
        if let Some(line) = second.try_wait_for("undelivered in stream", Duration::from_secs(1)) {
            break line;
        }
    };
    let missing = undelivered_of(&line);
    assert!(!line.contains("in doubt"), "a kill while blocked is exact: {line}");
    assert!(
        !missing.is_empty() && missing.start < BEFORE && missing.end < total,
        "the killed in held messages it never delivered: {line}"
    );
    if let Some((_, target)) = &ordered_channels {
        assert!(
            line.contains(&format!("sequence numbers {}..{}", missing.start, missing.end)),
            "{line}"
        );
        all_but(target, total, missing);
    } else if let Some((_, target)) = &fifo {
        let mut subscriber = target.subscriber().unwrap();
        let expected: Vec<u64> = (0..total).filter(|seq| !missing.contains(seq)).collect();
        let mut received = Vec::new();
        while received.len() < expected.len() {
            let tick = *subscriber.recv_timeout(STEP).unwrap();
            assert!(tick.is_intact(), "damaged: {tick:?}");
            received.push(tick.seq);
        }
        assert_eq!(received, expected, "everything but what was reported, in order");
        assert!(
            subscriber.recv_timeout(Duration::from_millis(200)).is_err(),
            "nothing more arrives"
        );
    }
}

/// The far channel's owner removes it while `out` reads it, and a new channel is created
/// under the same name: `out` says so, reattaches, and every message published to the new
/// channel arrives at the near side, intact and in order, as a new stream.
pub fn a_replaced_far_channel_is_followed(in_prefix: &[&str], out_prefix: &[&str], address: &str) {
    const NEW: u64 = 30;
    let (from, to) = (unique("replaced-a"), unique("replaced-b"));
    let source = FifoMpsc::<Tick>::create(&Config::new(&from)).unwrap();
    let target = FifoMpsc::<Tick>::create(&Config::new(&to)).unwrap();
    let (listen, connect) = endpoints(address, free_port());
    let key = unique("replaced");
    let mut inbound = Bridge::spawn(in_prefix, &args(&["in", "--key", &key, "--channel", &to], &listen));
    inbound.wait_for("in: ");
    let mut outbound = Bridge::spawn(out_prefix, &args(&["out", "--channel", &from, "--key", &key], &connect));
    let mut subscriber = target.subscriber().unwrap();
    let mut publisher = source.publisher().unwrap();
    pass_through(&mut publisher, &mut subscriber, 0..100);
    let first = outbound.wait_for("out: channel");
    // The owner leaves (its drop removes the name) and another channel takes the name.
    drop((publisher, source));
    outbound.wait_for("every publisher of channel");
    let replacement = FifoMpsc::<Tick>::create(&Config::new(&from)).unwrap();
    let mut publisher = replacement.publisher().unwrap();
    for seq in 0..NEW {
        publisher.send_timeout(&Tick::new(1, seq), STEP).unwrap();
    }
    let line = outbound.wait_for("was replaced by a new one");
    let new_stream = line.rsplit("now stream ").next().unwrap().to_owned();
    assert!(!first.contains(&new_stream), "a new stream: {first} / {line}");
    for seq in 0..NEW {
        let tick = *subscriber.recv_timeout(STEP).unwrap();
        assert!(tick.is_intact(), "damaged: {tick:?}");
        assert_eq!(
            (tick.publisher, tick.seq),
            (1, seq),
            "the new channel's messages, in order"
        );
    }
    inbound.wait_for(&format!("stream {new_stream}: FifoMpsc"));
    assert!(
        subscriber.recv_timeout(Duration::from_millis(200)).is_err(),
        "nothing more arrives"
    );
}
