//! Helpers shared by the integration tests (the library's, and the tool's in cli/tests): unique
//! channel names, and running a test's roles as separate processes by re-executing the test binary.
#![allow(dead_code)] // each test binary uses its own subset

// The hooks the tests use exist only in a build with `--cfg salias_testing`.
#[cfg(not(salias_testing))]
compile_error!(
    "salias's tests use its test hooks, built with `--cfg salias_testing`: .cargo/config.toml sets it, but a RUSTFLAGS variable replaces that setting; add `--cfg salias_testing` to RUSTFLAGS"
);

use std::process::{Command, Output, Stdio};

use std::time::{Duration, Instant};

use salias::{Config, SaliasMessage};
pub use support::role::KillOnDrop;
use support::role::{Children, Role};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Environment variable that tells a re-executed test binary which role to play.
pub const ROLE_VAR: &str = "SALIAS_TEST_ROLE";

const ROLE: Role = Role::new(ROLE_VAR);

/// A channel name unique to this process and `tag`.
pub fn unique_name(tag: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "t-{tag}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The role this process was started with, if it is a child.
pub fn role() -> Option<String> {
    ROLE.current()
}

/// A value passed to a child through the environment.
pub fn arg<T: std::str::FromStr>(key: &str) -> T {
    let value = std::env::var(format!("SALIAS_TEST_{key}")).unwrap_or_else(|_| panic!("child argument {key} missing"));
    value
        .parse()
        .unwrap_or_else(|_| panic!("child argument {key}={value} does not parse"))
}

/// Starts this test binary again running only `test` as `role`, with `args` in its
/// environment. Its stdout is piped so the parent can read what it reports.
pub fn spawn(test: &str, role: &str, args: &[(&str, String)]) -> KillOnDrop {
    let command = Command::new(std::env::current_exe().expect("test binary path"));
    KillOnDrop(
        as_role(command, test, role, args)
            .spawn()
            .expect("spawn child test process"),
    )
}

/// `command`, which runs this test binary, made to run only `test` as `role` with `args`.
fn as_role(mut command: Command, test: &str, role: &str, args: &[(&str, String)]) -> Command {
    ROLE.make(&mut command, role)
        .args([test, "--exact", "--nocapture", "--test-threads=1", "-q"]);
    for (key, value) in args {
        command.env(format!("SALIAS_TEST_{key}"), value);
    }
    command
}

/// Waits for every child; a watchdog kills them all and fails the test if they are not
/// done within `limit` (a hang is a failure, never a slow pass), or as soon as one fails.
/// Returns each child's `REPORT` lines.
pub fn wait_all(children: Vec<(&str, KillOnDrop)>, limit: Duration) -> Vec<Vec<String>> {
    let mut all = Children::new();
    for (name, child) in children {
        all.push(name, child);
    }
    // Children that fail or hang are killed on the way out, panicking or not.
    all.wait_all(limit)
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|output| output.reports().map(str::to_owned).collect())
        .collect()
}

/// The role in which a re-executed test binary runs the `salias` tool (`salias_tool`).
pub const TOOL_ROLE: &str = "salias-tool";

/// Runs the `salias` tool on `args` as a peer process and returns what it printed and how
/// it ended. The peer is this test binary re-executed as `test` in `TOOL_ROLE`, where that
/// test calls `run_tool` first: it runs `salias_cli::run`, which is the whole tool (its
/// binary only hands it the command line), built from the same sources as the library under
/// test. The binary itself cannot be reached soundly from the library's tests: Cargo names
/// a package's binaries only to that package's tests, and one found in the target directory
/// may predate the library being tested, as `cargo test -p salias` does not rebuild it.
/// The tool's own tests (cli/tests) run the binary.
pub fn salias_tool(test: &str, args: &[&str]) -> Output {
    assert!(
        args.iter().all(|a| !a.contains('\n')),
        "tool arguments are passed one a line"
    );
    let command = Command::new(std::env::current_exe().expect("test binary path"));
    as_role(command, test, TOOL_ROLE, &[("TOOL_ARGS", args.join("\n"))])
        .stderr(Stdio::piped())
        .output()
        .expect("run the salias tool")
}

/// In `TOOL_ROLE`: runs the tool on the arguments `salias_tool` passed and exits with its
/// exit code, as the binary would.
pub fn run_tool() -> ! {
    use std::io::Write;
    let args: String = arg("TOOL_ARGS");
    let code = salias_cli::run(std::iter::once("salias").chain(args.split('\n').filter(|a| !a.is_empty())));
    std::io::stdout().flush().expect("flush the tool's output");
    std::process::exit(code.into())
}

/// A 64-byte message whose every field is derived from (producer, seq), so the subscriber
/// can check each one independently.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Sample {
    pub producer: u64,
    pub seq: u64,
    pub words: [u64; 6],
}

impl Sample {
    pub fn new(producer: u64, seq: u64) -> Self {
        let mut mix = SplitMix(producer << 40 ^ seq);
        Sample {
            producer,
            seq,
            words: std::array::from_fn(|_| mix.next()),
        }
    }
}

/// Per-producer order and content checker.
pub struct Checker {
    pub next: Vec<u64>,
    pub slot_of: Vec<Option<usize>>,
}

impl Checker {
    pub fn new(producers: usize) -> Self {
        Checker {
            next: vec![0; producers],
            slot_of: vec![None; producers],
        }
    }

    pub fn check(&mut self, slot: usize, sample: &Sample) {
        let producer = sample.producer as usize;
        assert!(producer < self.next.len(), "unknown producer {producer}");
        assert_eq!(
            sample.seq, self.next[producer],
            "producer {producer}: message out of order or lost"
        );
        assert_eq!(
            *sample,
            Sample::new(sample.producer, sample.seq),
            "message content corrupted"
        );
        let known = self.slot_of[producer].get_or_insert(slot);
        assert_eq!(*known, slot, "producer {producer} appeared on two rings");
        self.next[producer] += 1;
    }
}

/// Publishes every message of `batch` with `offer_batch`, retrying while backpressured.
pub fn send_batch<M: salias::kind::Mode, K: salias::kind::Topology>(
    publisher: &mut salias::Publisher<Sample, M, K>,
    batch: &[Sample],
) {
    let mut sent = 0;
    while sent < batch.len() {
        match publisher.offer_batch(&batch[sent..]) {
            Ok(n) => sent += n,
            // A subscriber handing over to its successor (Mpsc) is reported once; the
            // successor resumes with everything.
            Err(salias::PublishError::Backpressured | salias::PublishError::NoSubscriber) => std::thread::yield_now(),
            Err(e) => panic!("{e}"),
        }
    }
}

/// Bursts of messages separated by idle gaps, between a publisher and a subscriber
/// process on a `FifoMpsc<Sample>` channel: the publisher sleeps `idle` before each of
/// `bursts` bursts of `per_burst` messages. A test runs `run` in the parent, and `publish`
/// and `receive` in the roles "publisher" and "subscriber".
pub struct IdleBursts {
    pub bursts: u64,
    pub per_burst: u64,
    pub idle: Duration,
}

impl IdleBursts {
    /// Five bursts of ten messages, each after 400 ms of idleness.
    pub const FIVE_GAPS: IdleBursts = IdleBursts {
        bursts: 5,
        per_burst: 10,
        idle: Duration::from_millis(400),
    };

    pub fn messages(&self) -> u64 {
        self.bursts * self.per_burst
    }

    /// The idle time the publisher spends, in µs: what a spinning subscriber burns.
    pub fn idle_micros(&self) -> u128 {
        self.idle.as_micros() * u128::from(self.bursts)
    }

    pub fn publish(&self) {
        let channel = salias::FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
        let mut publisher = channel.publisher().unwrap();
        for burst in 0..self.bursts {
            std::thread::sleep(self.idle);
            for i in 0..self.per_burst {
                publisher.send(&Sample::new(0, burst * self.per_burst + i)).unwrap();
            }
        }
    }

    /// Receives and checks every message with `strategy`, waiting without a deadline, and
    /// reports `cpu_micros`: the CPU this process used meanwhile.
    pub fn receive(&self, strategy: impl salias::wait::WaitStrategy + 'static) {
        let channel = salias::FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
        let mut subscriber = channel.subscriber().unwrap();
        subscriber.set_wait_strategy(strategy);
        let mut checker = Checker::new(1);
        let before = cpu_time();
        for _ in 0..self.messages() {
            let message = subscriber.recv().unwrap();
            checker.check(message.publisher_slot(), &message);
        }
        report(format!("cpu_micros {}", (cpu_time() - before).as_micros()));
    }

    /// Creates the channel, runs `test`'s two roles under the watchdog `limit`, and
    /// returns what the subscriber reported.
    pub fn run(&self, test: &str, limit: Duration) -> Vec<String> {
        let name = unique_name("idle");
        let _channel = salias::FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
        let args = vec![("NAME", name.clone())];
        let children = vec![
            ("subscriber", spawn(test, "subscriber", &args)),
            ("publisher", spawn(test, "publisher", &args)),
        ];
        wait_all(children, limit).swap_remove(0)
    }
}

/// The number a child reported as `KEY N`.
pub fn reported(reports: &[String], key: &str) -> u128 {
    let value = reports
        .iter()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {key} in {reports:?}"));
    value
        .parse()
        .unwrap_or_else(|_| panic!("{key} {value} is not a number"))
}

/// The CPU time (user and system) this process has used so far.
pub fn cpu_time() -> Duration {
    rusage_cpu(libc::RUSAGE_SELF)
}

/// The CPU time (user and system) the calling thread has used so far: unlike
/// `cpu_time`, not counting other tests running in parallel threads.
pub fn thread_cpu_time() -> Duration {
    #[cfg(target_os = "linux")]
    return rusage_cpu(libc::RUSAGE_THREAD);
    // No per-thread usage there: the process's, an upper bound.
    #[cfg(not(target_os = "linux"))]
    return rusage_cpu(libc::RUSAGE_SELF);
}

fn rusage_cpu(who: libc::c_int) -> Duration {
    // SAFETY: `usage` is a writable rusage; getrusage fills it.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        assert_eq!(libc::getrusage(who, &mut usage), 0);
        usage
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

/// Prints a line the parent collects with `wait_all`.
pub fn report(line: impl std::fmt::Display) {
    println!("REPORT {line}");
}

/// A tiny deterministic generator, so every process derives the same test data.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A system call strace shows recognisably: a write of `text` to an invalid descriptor.
pub fn strace_marker(text: &str) {
    // SAFETY: writing to fd -1 fails with EBADF and touches no memory but `text`.
    unsafe { libc::write(-1, text.as_ptr().cast(), text.len()) };
}

/// Runs `test` again, as role "traced", under `strace -f` and returns the traced lines
/// between its `strace_marker("{tag}-start")` and `strace_marker("{tag}-end")` (marker
/// lines excluded). `None` where `traced_run` skips.
pub fn traced_section(test: &str, tag: &str) -> Option<Vec<String>> {
    traced_run(test).map(|trace| section(&trace, tag))
}

/// Runs `test` again, as role "traced", under `strace -f` and returns the whole trace.
/// `None`, with a printed SKIPPED line, where a sanitizer runtime would add system calls
/// of its own, or where strace is missing outside CI; in CI (`CI` set) a missing strace
/// fails the test, so the check cannot go quietly unrun.
pub fn traced_run(test: &str) -> Option<String> {
    if let Ok(sanitizer) = std::env::var("SALIAS_SANITIZER") {
        skipped(
            test,
            &format!("the {sanitizer} sanitizer's runtime makes system calls of its own"),
        );
        return None;
    }
    if Command::new("strace").arg("-V").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{test}: strace is not installed, and CI must not skip this test (apt-get install strace)"
        );
        skipped(test, "strace is not installed (apt-get install strace)");
        return None;
    }
    let log = std::env::temp_dir().join(format!("salias-strace-{}-{test}.log", std::process::id()));
    let status = Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1", "-q"])
        .env(ROLE_VAR, "traced")
        .status()
        .expect("run strace");
    assert!(status.success(), "the traced run of {test} failed");
    let trace = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    Some(trace)
}

/// The lines of `trace` between the `{tag}-start` and `{tag}-end` markers, markers excluded.
pub fn section(trace: &str, tag: &str) -> Vec<String> {
    let start = trace.find(&format!("{tag}-start")).expect("start marker traced");
    let end = trace.find(&format!("{tag}-end")).expect("end marker traced");
    trace[start..end]
        .lines()
        .skip(1)
        .filter(|line| !line.contains("write(-1"))
        .map(str::to_owned)
        .collect()
}

/// The number a traced run reported with `strace_marker(&format!("{key}={n}"))`.
pub fn traced_count(trace: &str, key: &str) -> u64 {
    let at = trace
        .find(&format!("\"{key}="))
        .unwrap_or_else(|| panic!("no {key} marker traced"));
    let digits: String = trace[at + key.len() + 2..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("{key} marker without a number"))
}

/// A traced line as (system call name, its arguments and result). `None` for lines that
/// report no system call: a signal delivered (`--- SIGSTOP ...`) or a process exiting.
/// strace -f prefixes each line with the pid, which is dropped.
pub fn syscall(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start();
    if line.starts_with("---") || line.starts_with("+++") {
        return None;
    }
    Some(line.split_once('(').unwrap_or((line, "")))
}

/// Role of a child that takes an ordered channel's next number and holds it.
pub const HOLDER_ROLE: &str = "holder";

/// The holder child: takes the next number of the `OrderedMpsc<Sample>` channel named by
/// its NAME argument and stops itself (SIGSTOP), alive and never committing it.
pub fn hold_next_number() -> ! {
    let channel = salias::OrderedMpsc::<Sample>::connect(&arg::<String>("NAME")).unwrap();
    let mut publisher = channel.publisher().unwrap();
    publisher.__take_sequence_then_stop()
}

/// An ordered channel whose subscriber waits on a held number: a child process took
/// number 0 and stopped holding it (alive, so no gap may be declared), and a publisher
/// here committed numbers 1 to 3 after it.
pub struct HeldNumber {
    pub subscriber: salias::Subscriber<Sample, salias::Ordered, salias::Mpsc>,
    holder: KillOnDrop,
    _publisher: salias::Publisher<Sample, salias::Ordered, salias::Mpsc>,
    _channel: salias::OrderedMpsc<Sample>,
}

impl HeldNumber {
    /// Sets it up; the holder is `test` started again as `HOLDER_ROLE`.
    pub fn new(test: &str) -> HeldNumber {
        let name = unique_name("held");
        let channel = salias::OrderedMpsc::<Sample>::create(&Config::new(&name).publishers(2)).unwrap();
        let subscriber = channel.subscriber().unwrap();
        let holder = spawn(test, HOLDER_ROLE, &[("NAME", name.clone())]);
        wait_until_stopped(&holder, Duration::from_secs(60));
        let status = salias::status::channel_status(&name).unwrap();
        assert!(
            status.publishers.iter().any(|p| p.pending == Some(0)),
            "the stopped holder holds no number: {status:?}"
        );
        let mut publisher = channel.publisher().unwrap();
        for seq in 1..=3 {
            publisher.offer(&Sample::new(1, seq)).unwrap();
        }
        HeldNumber {
            subscriber,
            holder,
            _publisher: publisher,
            _channel: channel,
        }
    }

    /// Kills the holder: the subscriber must now report number 0 lost and deliver 1 to 3,
    /// which shows it was the live holder, not a broken setup, that kept it waiting.
    pub fn kill_holder_then_expect_gap(mut self) {
        self.holder.0.kill().unwrap();
        self.holder.0.wait().unwrap();
        for sequence in 1..=3 {
            let message = self.subscriber.recv_timeout(Duration::from_secs(60)).unwrap();
            assert_eq!(message.sequence(), sequence);
            assert_eq!(message.gap_before(), u64::from(sequence == 1));
        }
        assert_eq!(self.subscriber.gaps().missing, 1);
    }
}

/// Waits until `child` has stopped itself; a watchdog fails the test after `limit`.
pub fn wait_until_stopped(child: &KillOnDrop, limit: Duration) {
    let pid = child.0.id() as libc::pid_t;
    let deadline = Instant::now() + limit;
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid, writable int; waitpid touches nothing else.
        let got = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG | libc::WUNTRACED) };
        if got == pid {
            assert!(
                libc::WIFSTOPPED(status),
                "the child ended before it stopped (status {status:#x})"
            );
            return;
        }
        assert_eq!(got, 0, "waitpid failed: {}", std::io::Error::last_os_error());
        assert!(
            Instant::now() <= deadline,
            "watchdog: the child did not stop within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Says that `test` did not run, and why, on the terminal: straight to stderr, which the
/// test harness does not capture (it captures `println!`), so a passing run still shows
/// what it left out.
pub fn skipped(test: &str, reason: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
}

/// Whether this process can do what `test` needs root for (mount namespaces, acting as
/// another user). Where it cannot, prints SKIPPED with the reason; under CI, which runs
/// as root, a skip would hide a requirement, so it fails instead.
pub fn root_or_skip(test: &str, needs: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{test} needs root ({needs}) and CI runs as root"
    );
    skipped(test, &format!("needs root ({needs})"));
    false
}

/// Like `spawn`, but the child runs in a private mount namespace whose /dev/shm is a new
/// tmpfs of `size_mib` MiB: a container's /dev/shm (Docker's default is 64 MB), without
/// touching the machine's. Children the child spawns share its namespace. Needs root.
pub fn spawn_with_private_shm(test: &str, role: &str, size_mib: u32, args: &[(&str, String)]) -> KillOnDrop {
    let mut command = Command::new("unshare");
    command
        .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg(format!(
            "mount -t tmpfs -o size={size_mib}m,mode=1777 salias-test /dev/shm && exec \"$0\" \"$@\""
        ))
        .arg(std::env::current_exe().expect("test binary path"));
    KillOnDrop(as_role(command, test, role, args).spawn().expect("spawn unshare"))
}

/// Like `spawn`, but the child runs as user and group `uid` (root only), with its stdin
/// piped so the parent can tell it when to finish.
pub fn spawn_as_user(test: &str, role: &str, uid: u32, args: &[(&str, String)]) -> KillOnDrop {
    let (command, copy) = test_binary_as_user(uid);
    let mut command = as_role(command, test, role, args);
    let child = command
        .stdin(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn the test binary as user {uid}: {e}"));
    // `spawn` returns once the child has exec'd: a copy can go now.
    drop(copy);
    KillOnDrop(child)
}

/// The test binary as a command that runs as user and group `uid` (root only), from `/`.
/// A checkout under a directory other users cannot enter (`/root`, a 0700 home, `mktemp
/// -d`) holds a binary they cannot run: the command then runs a copy, in a directory of
/// its own under the temporary directory, which the returned guard removes when dropped
/// (once the child has started).
pub fn test_binary_as_user(uid: u32) -> (Command, Option<BinaryCopy>) {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().expect("test binary path");
    let copy = (!others_can_run(&exe)).then(|| BinaryCopy::of(&exe));
    let mut command = Command::new(copy.as_ref().map_or(exe.as_path(), |copy| copy.path.as_path()));
    // The checkout may be no place the other user can enter.
    command.uid(uid).gid(uid).current_dir("/");
    (command, copy)
}

/// Whether a user other than the owner can execute `path`: every directory above it
/// searchable, and the file executable, by others.
fn others_can_run(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let others_may = |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o001 != 0);
    others_may(path) && path.ancestors().skip(1).all(others_may)
}

/// A copy of the test binary that any user can run, in a directory of its own; removed
/// on drop.
pub struct BinaryCopy {
    dir: std::path::PathBuf,
    path: std::path::PathBuf,
}

impl BinaryCopy {
    fn of(exe: &std::path::Path) -> BinaryCopy {
        use std::os::unix::fs::PermissionsExt;
        static COPIES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("salias-test-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).expect("a directory for a copy of the test binary");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod 0755");
        let path = dir.join(exe.file_name().expect("the test binary's file name"));
        std::fs::copy(exe, &path).expect("copy the test binary where another user can run it");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod 0755");
        assert!(
            others_can_run(&path),
            "{} is not reachable by other users either: the temporary directory is not searchable by them; set TMPDIR to one that is",
            path.display()
        );
        BinaryCopy { dir, path }
    }
}

impl Drop for BinaryCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Which of channel `name`'s objects exist in /dev/shm.
pub fn shm_objects_of(name: &str) -> Vec<String> {
    let [control, rings] = salias::__private::shm_object_names(name);
    [control, rings]
        .into_iter()
        .filter(|object| std::path::Path::new(&format!("/dev/shm{object}")).exists())
        .collect()
}
