//! C and C++ processes on the same channels as Rust ones. The C and C++ programs in
//! `tests/cpp` and `examples` are built once per run with CMake against the `libsalias_c.a`
//! cargo built for this test, with AddressSanitizer and UndefinedBehaviorSanitizer, then:
//!
//! - `abi_test` checks the C ABI and the C++ wrapper in one process (bad handles, states,
//!   each kind);
//! - `peer` publishes to and subscribes from Rust processes, every message checked on the
//!   receiving side, for all four kinds, typed and raw; is killed mid-stream; and meets a
//!   Rust type of another layout.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use salias::kind::{Fanout, Fifo, Mode, Mpsc, Ordered, Topology};
use salias::receive::MessageInfo;
use salias::{Bytes, Channel, Config, Error, PublishError, ReceiveError, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// The C++ side's `Quote` (tests/cpp/messages.hpp), derived.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
#[salias(version = 3)]
struct Quote {
    instrument: u64,
    bid: f64,
    ask: f64,
    venue: [u8; 4],
    size: u32,
}

/// `quote_for` of messages.hpp.
fn quote_for(publisher: u32, index: u64) -> Quote {
    let bid = index as f64 * 0.25;
    Quote {
        instrument: (u64::from(publisher) << 32) | index,
        bid,
        ask: bid + 0.5,
        venue: [b'X', b'0' + (publisher % 10) as u8, (index % 251) as u8, 0],
        size: (index * 7 % 1000) as u32,
    }
}

/// `raw_message` of peer.cpp: the index, the slot, and 0 to 99 pattern bytes.
fn raw_message(slot: u32, index: u64) -> Vec<u8> {
    let mut bytes = vec![0u8; 12 + (index % 100) as usize];
    bytes[..8].copy_from_slice(&index.to_le_bytes());
    bytes[8..12].copy_from_slice(&slot.to_le_bytes());
    for (i, byte) in bytes.iter_mut().enumerate().skip(12) {
        *byte = ((u64::from(slot) * 31 + index + i as u64) & 0xff) as u8;
    }
    bytes
}

fn unique_name(tag: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "ffi-{tag}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The directory holding the built programs, built on first use.
fn programs() -> Option<&'static Path> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BUILT.get_or_init(build) {
        Ok(dir) => Some(dir),
        Err(reason) => {
            // CI installs CMake and a C++ compiler: there a missing one is a failure.
            assert!(
                std::env::var_os("CI").is_none(),
                "the C/C++ tests cannot run under CI: {reason}"
            );
            let _ = writeln!(std::io::stderr(), "SKIPPED C/C++ tests: {reason}");
            None
        }
    }
}

fn build() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/deps/cpp-<hash>: `cargo test` builds the static library of this run
    // beside it in deps/ (only `cargo build` copies it up to target/<profile>, maybe stale).
    let deps_dir = exe
        .parent()
        .ok_or("the test binary is not in a cargo target directory")?;
    let profile_dir = deps_dir
        .parent()
        .ok_or("the test binary is not in a cargo target directory")?;
    let library = deps_dir.join("libsalias_c.a");
    if !library.exists() {
        return Err(format!("{} was not built", library.display()));
    }
    let build_dir = profile_dir.join("cpp-tests");
    let source = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |command: &mut Command| -> Result<(), String> {
        let output = command
            .output()
            .map_err(|e| format!("cannot run {command:?}: {e} (install cmake and g++)"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{command:?} failed:\n{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    };
    run(Command::new("cmake")
        .arg("-S")
        .arg(source)
        .arg("-B")
        .arg(&build_dir)
        .arg("-DSALIAS_BUILD_TESTS=ON")
        .arg(format!("-DSALIAS_LIBRARY={}", library.display())))?;
    run(Command::new("cmake").arg("--build").arg(&build_dir).arg("-j2"))?;
    Ok(build_dir.join("tests/cpp"))
}

/// A child that is killed if the test ends before it does.
struct Peer {
    child: Child,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    fn spawn(args: &[&str]) -> Option<Peer> {
        let mut child = Command::new(programs()?.join("peer"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the peer starts");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Some(Peer { child, stdout })
    }

    /// The next line it prints.
    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("the peer's stdout reads");
        line.trim_end().to_owned()
    }

    /// Fails the test if it has exited unsuccessfully (its stderr is the test's).
    fn still_fine(&mut self) {
        if let Some(status) = self.child.try_wait().expect("waitpid") {
            assert!(status.success(), "the peer failed ({status})");
        }
    }

    /// Waits for it to exit successfully, at most `limit`; its remaining output.
    fn succeeds(mut self, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("waitpid") {
                let mut rest = String::new();
                let _ = std::io::Read::read_to_string(&mut self.stdout, &mut rest);
                assert!(status.success(), "the peer failed ({status}); its output: {rest}");
                return rest;
            }
            assert!(start.elapsed() < limit, "the peer did not finish within {limit:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What an Ordered message carries; nothing for FIFO.
trait Numbers: Mode + Sized {
    fn numbers(info: MessageInfo<Self>) -> Option<(u64, u64)>;
}

impl Numbers for Fifo {
    fn numbers(_: MessageInfo<Self>) -> Option<(u64, u64)> {
        None
    }
}

impl Numbers for Ordered {
    fn numbers(info: MessageInfo<Self>) -> Option<(u64, u64)> {
        Some((info.sequence(), info.gap_before()))
    }
}

/// Checks messages as peer.cpp's `Checker` does: per publisher, indexes 0, 1, 2, ... with
/// the content they imply; Ordered, sequence numbers one after another (past any gap).
#[derive(Default)]
struct Checker {
    next_index: std::collections::HashMap<u32, u64>,
    next_sequence: Option<u64>,
    gaps: u64,
}

impl Checker {
    fn check(&mut self, slot: u32, bytes: &[u8], numbers: Option<(u64, u64)>, typed: bool) {
        let index = if typed {
            let quote = Quote::read_from_bytes(bytes).expect("a quote's size");
            assert_eq!(quote.instrument >> 32, u64::from(slot), "a quote names another slot");
            let index = quote.instrument & 0xffff_ffff;
            assert_eq!(quote, quote_for(slot, index), "quote {index} of slot {slot}");
            index
        } else {
            let index = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
            assert_eq!(bytes, raw_message(slot, index), "raw message {index} of slot {slot}");
            index
        };
        let next = self.next_index.entry(slot).or_default();
        assert_eq!(index, *next, "slot {slot}'s messages out of order");
        *next += 1;
        if let Some((sequence, gap)) = numbers {
            if let Some(expected) = self.next_sequence {
                assert_eq!(sequence, expected + gap, "sequence numbers out of order");
            }
            self.gaps += gap;
            self.next_sequence = Some(sequence + 1);
        }
    }
}

const KINDS: [&str; 4] = ["FifoMpsc", "FifoFanout", "OrderedMpsc", "OrderedFanout"];
const COUNT: u64 = 5_000;

/// Runs `$f::<Mode, Topology>($args)` for the kind named `$kind`.
macro_rules! by_kind {
    ($kind:expr, $f:ident($($arg:expr),*)) => {
        match $kind {
            "FifoMpsc" => $f::<Fifo, Mpsc>($($arg),*),
            "FifoFanout" => $f::<Fifo, Fanout>($($arg),*),
            "OrderedMpsc" => $f::<Ordered, Mpsc>($($arg),*),
            "OrderedFanout" => $f::<Ordered, Fanout>($($arg),*),
            other => unreachable!("{other}"),
        }
    };
}

#[test]
fn the_abi_test_passes_under_the_sanitizers() {
    let Some(dir) = programs() else { return };
    let output = Command::new(dir.join("abi_test")).output().expect("abi_test runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "abi_test failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("checks passed"), "{stdout}");
}

/// The README's C++ example, as written there (its channel renamed so that runs never
/// meet), compiles against the header and runs.
#[test]
fn the_readmes_cpp_example_compiles_and_runs() {
    let Some(dir) = programs() else { return };
    let readme = include_str!("../../README.md");
    let section = &readme[readme.find("## From C and C++").expect("the README's C++ section")..];
    let start = section.find("```cpp\n").expect("a cpp block") + "```cpp\n".len();
    let code = &section[start..start + section[start..].find("```").expect("its end")];
    let name = unique_name("readme");
    let code = code.replace("\"quotes\"", &format!("\"{name}\""));
    let source = dir.join("readme_example.cpp");
    std::fs::write(&source, code).unwrap();
    let binary = dir.join("readme_example");
    let library = dir.join("../../../deps/libsalias_c.a");
    let compiled = Command::new("g++")
        .args([
            "-std=c++20",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsanitize=address,undefined",
        ])
        .arg(format!("-I{}/include", env!("CARGO_MANIFEST_DIR")))
        .arg(&source)
        .arg(&library)
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil", "-o"])
        .arg(&binary)
        .output()
        .expect("g++ runs");
    assert!(
        compiled.status.success(),
        "the README's C++ example does not compile:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let ran = Command::new(&binary).output().expect("it runs");
    assert!(ran.status.success(), "the README's C++ example failed: {ran:?}");
}

/// A C program describes the quote with `SALIAS_FIELD`s and publishes to a Rust
/// subscriber on every kind; a description with one field's type wrong is refused.
#[test]
fn a_c_program_publishes_typed_quotes_to_rust() {
    let Some(dir) = programs() else { return };
    for (number, kind) in KINDS.iter().enumerate() {
        let name = unique_name("typed-c");
        by_kind!(*kind, c_publishes_to_rust(dir, number, &name));
        let name = unique_name("typed-c-wrong");
        let _channel = by_kind!(*kind, create_quote_channel(&name));
        let refused = Command::new(dir.join("typed_c"))
            .args([&number.to_string(), &name, "0", "wrong"])
            .output()
            .expect("typed_c runs");
        assert!(refused.status.success(), "{kind}: {refused:?}");
        assert!(String::from_utf8_lossy(&refused.stdout).contains("refused: "));
    }
}

fn c_publishes_to_rust<M: Numbers, K: Topology>(dir: &Path, number: usize, name: &str) {
    let channel = Channel::<Quote, M, K>::create(&Config::new(name).capacity(16 << 10)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut c = Command::new(dir.join("typed_c"))
        .args([&number.to_string(), name, "3000"])
        .spawn()
        .expect("typed_c runs");
    let mut checker = Checker::default();
    let mut received = 0;
    let start = Instant::now();
    while received < 3000 {
        received += subscriber
            .drain(64, |info, quote| {
                checker.check(info.publisher_slot() as u32, quote.as_bytes(), M::numbers(info), true)
            })
            .unwrap();
        assert!(start.elapsed() < Duration::from_secs(60), "{received} of 3000 in 60 s");
    }
    assert!(c.wait().unwrap().success());
}

/// The C++ instruction-count workload (benches/cpp/instructions.cpp): typed `offer`s and
/// `offer_batch`es of 16 (the packed path) through the header, each round drained and the
/// sequence numbers summed and checked against what was sent.
#[test]
fn the_cpp_instruction_workloads_deliver_every_message() {
    let Some(dir) = programs() else { return };
    for workload in ["single", "batch"] {
        // 3000 rounds of 16: 48 000 messages, several laps of the default ring.
        let output = Command::new(dir.join("cpp_instructions"))
            .args(["3000", workload])
            .output()
            .expect("cpp_instructions runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{workload}: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let messages: u64 = 3000 * 16;
        assert!(
            stdout.contains(&format!("checksum {}", messages * (messages - 1) / 2)),
            "{stdout}"
        );
    }
}

#[test]
fn the_minimal_c_example_runs() {
    let Some(dir) = programs() else { return };
    let output = Command::new(dir.join("minimal_c")).output().expect("minimal_c runs");
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("hello from C"));
}

/// Publishes message `index` of slot `slot`.
type PublishOne = Box<dyn FnMut(u32, u64) + Send>;
/// Receives what is there, checking each message.
type DrainSome = Box<dyn FnMut(&mut Checker) -> Result<usize, ReceiveError>>;

/// A C++ publisher and a Rust publisher, one Rust subscriber checking every message.
fn cpp_and_rust_publish_to_rust<M: Numbers, K: Topology>(kind: &str, typed: bool) {
    let name = unique_name("to-rust");
    let config = Config::new(&name).capacity(64 << 10).publishers(2);
    let (mut rust_publish, mut subscriber_drain): (PublishOne, DrainSome);
    let mut peer;
    if typed {
        let channel = Channel::<Quote, M, K>::create(&config).unwrap();
        let mut subscriber = channel.subscriber().unwrap();
        let mut publisher = channel.publisher().unwrap();
        rust_publish = Box::new(move |slot, index| publisher.send(&quote_for(slot, index)).unwrap());
        peer = Peer::spawn(&["publish", kind, "typed", &name, &COUNT.to_string()]);
        subscriber_drain = Box::new(move |checker| {
            let _keep = &channel;
            subscriber.drain(64, |info, quote| {
                checker.check(info.publisher_slot() as u32, quote.as_bytes(), M::numbers(info), true)
            })
        });
    } else {
        let channel = Channel::<Bytes, M, K>::create(&config.max_message_size(256)).unwrap();
        let mut subscriber = channel.subscriber().unwrap();
        let mut publisher = channel.publisher().unwrap();
        rust_publish = Box::new(move |slot, index| publisher.send(&raw_message(slot, index)).unwrap());
        peer = Peer::spawn(&["publish", kind, "raw", &name, &COUNT.to_string()]);
        subscriber_drain = Box::new(move |checker| {
            let _keep = &channel;
            subscriber.drain(64, |info, bytes| {
                checker.check(info.publisher_slot() as u32, bytes, M::numbers(info), false)
            })
        });
    }
    let Some(mut peer) = peer.take() else { return };
    // The Rust publisher holds slot 0 (claimed first); the C++ one takes slot 1. It lives
    // until everything is received: were both gone, the subscriber would be told so.
    let rust = std::thread::spawn(move || {
        for index in 0..COUNT {
            rust_publish(0, index);
        }
        rust_publish
    });
    let mut checker = Checker::default();
    let mut received = 0;
    let start = Instant::now();
    while received < 2 * COUNT as usize {
        received += subscriber_drain(&mut checker).unwrap();
        peer.still_fine();
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{kind}: {received} received in 60 s"
        );
    }
    drop(rust.join().unwrap());
    assert_eq!(
        checker.next_index.get(&1),
        Some(&COUNT),
        "{kind}: the C++ publisher's messages"
    );
    assert_eq!(checker.gaps, 0);
    let rest = peer.succeeds(Duration::from_secs(30));
    assert!(rest.contains(&format!("published {COUNT}")), "{rest}");
}

#[test]
fn cpp_publishers_reach_rust_subscribers_of_every_kind_typed_and_raw() {
    if programs().is_none() {
        return;
    }
    for kind in KINDS {
        for typed in [true, false] {
            by_kind!(kind, cpp_and_rust_publish_to_rust(kind, typed));
        }
    }
}

fn rust_publishes_to_cpp<M: Numbers, K: Topology>(kind: &str, typed: bool) {
    let name = unique_name("to-cpp");
    let config = Config::new(&name).capacity(64 << 10);
    if typed {
        let channel = Channel::<Quote, M, K>::create(&config).unwrap();
        let Some(mut peer) = Peer::spawn(&["subscribe", kind, "typed", &name, &COUNT.to_string(), "1"]) else {
            return;
        };
        assert_eq!(peer.line(), "ready");
        let mut publisher = channel.publisher().unwrap();
        let mut index = 0;
        while index < COUNT {
            // Batches of up to 8, as many as fit.
            let batch: Vec<Quote> = (index..COUNT.min(index + 8)).map(|i| quote_for(0, i)).collect();
            match publisher.offer_batch(&batch) {
                Ok(sent) => index += sent as u64,
                Err(PublishError::Backpressured) => std::thread::yield_now(),
                Err(other) => panic!("{kind}: {other}"),
            }
        }
        let rest = peer.succeeds(Duration::from_secs(60));
        assert!(rest.contains(&format!("received {COUNT}")), "{rest}");
    } else {
        let channel = Channel::<Bytes, M, K>::create(&config.max_message_size(256)).unwrap();
        let Some(mut peer) = Peer::spawn(&["subscribe", kind, "raw", &name, &COUNT.to_string(), "1"]) else {
            return;
        };
        assert_eq!(peer.line(), "ready");
        let mut publisher = channel.publisher().unwrap();
        for index in 0..COUNT {
            publisher.send(&raw_message(0, index)).unwrap();
        }
        let rest = peer.succeeds(Duration::from_secs(60));
        assert!(rest.contains(&format!("received {COUNT}")), "{rest}");
    }
}

#[test]
fn rust_publishers_reach_cpp_subscribers_of_every_kind_typed_and_raw() {
    if programs().is_none() {
        return;
    }
    for kind in KINDS {
        for typed in [true, false] {
            by_kind!(kind, rust_publishes_to_cpp(kind, typed));
        }
    }
}

fn killed_cpp_publisher<M: Numbers, K: Topology>(kind: &str) {
    let name = unique_name("killed");
    // One publisher slot: a later publisher gets it only if the dead one's was reaped.
    let channel = Channel::<Quote, M, K>::create(&Config::new(&name).capacity(64 << 10)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let Some(mut peer) = Peer::spawn(&["publish-forever", kind, "typed", &name]) else {
        return;
    };
    assert_eq!(peer.line(), "ready");
    let mut checker = Checker::default();
    let mut received = 0;
    while received < 2_000 {
        received += subscriber
            .drain(64, |info, quote| {
                checker.check(info.publisher_slot() as u32, quote.as_bytes(), M::numbers(info), true)
            })
            .unwrap();
    }
    peer.child.kill().expect("SIGKILL");
    peer.child.wait().expect("reaped by the test");
    // Everything it committed arrives, in order, then the departure, as for a Rust peer.
    let start = Instant::now();
    let ended = loop {
        match subscriber.drain(64, |info, quote| {
            checker.check(info.publisher_slot() as u32, quote.as_bytes(), M::numbers(info), true)
        }) {
            Ok(_) => assert!(start.elapsed() < Duration::from_secs(30), "{kind}: no departure seen"),
            Err(error) => break error,
        }
    };
    assert_eq!(ended, ReceiveError::Disconnected, "{kind}");
    assert!(checker.next_index[&0] >= 2_000);
    // Its slot is free again.
    let mut next = channel.publisher().expect("the dead publisher's slot is free");
    next.offer(&quote_for(0, checker.next_index[&0])).unwrap();
    let after = subscriber.try_recv().unwrap().expect("the next publisher's message");
    assert_eq!(*after, quote_for(0, checker.next_index[&0]));
}

#[test]
fn a_killed_cpp_publisher_is_reaped_and_reported_as_a_rust_one() {
    if programs().is_none() {
        return;
    }
    for kind in KINDS {
        by_kind!(kind, killed_cpp_publisher(kind));
    }
}

#[test]
fn a_cpp_type_of_another_layout_is_refused_on_both_sides() {
    if programs().is_none() {
        return;
    }
    for kind in KINDS {
        let name = unique_name("mismatch");
        let _rust = by_kind!(kind, create_quote_channel(&name));
        let peer = Peer::spawn(&["mismatch", kind, &name]).expect("built");
        let rest = peer.succeeds(Duration::from_secs(30));
        assert!(rest.contains("refused: "), "{rest}");

        let name = unique_name("mismatch-back");
        let mut peer = Peer::spawn(&["create-swapped", kind, &name]).expect("built");
        assert_eq!(peer.line(), "ready");
        let refused = by_kind!(kind, connect_quote_channel(&name)).unwrap_err();
        assert!(matches!(refused, Error::TypeMismatch { .. }), "{kind}: {refused:?}");
        drop(peer.child.stdin.take());
        peer.succeeds(Duration::from_secs(30));
    }
}

fn create_quote_channel<M: Mode, K: Topology>(name: &str) -> Box<dyn std::any::Any> {
    Box::new(Channel::<Quote, M, K>::create(&Config::new(name)).unwrap())
}

fn connect_quote_channel<M: Mode, K: Topology>(name: &str) -> Result<(), Error> {
    Channel::<Quote, M, K>::connect(name).map(drop)
}
