//! `salias-bridge`: carries a salias channel across hosts over zenoh.
//!
//! ```text
//! salias-bridge out --channel quotes --key desk/quotes --listen tcp/0.0.0.0:7447
//! salias-bridge in  --key desk/quotes --channel quotes --connect tcp/192.0.2.7:7447
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand, ValueEnum};
use salias_bridge::{Backpressure, Bridge, Congestion, InConfig, InEvent, OutConfig, ZenohConfig};

/// Counts heap allocations, so `--stats-every` can show what the hot path allocates (one
/// buffer per batch on `out`; zenoh's own per sample), measured rather than assumed.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed to the system allocator unchanged, with the caller's own
// guarantees; counting touches no memory of the allocation.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which is `System`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator, which is `System` underneath.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, which is `System` underneath.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

#[derive(Parser)]
#[command(
    name = "salias-bridge",
    version,
    about = "Carries a salias channel across hosts over zenoh"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Publish a local channel's messages on a zenoh key.
    Out(OutArgs),
    /// Publish what arrives on a zenoh key into a local channel of the same kind.
    In(InArgs),
}

#[derive(Args)]
struct ZenohArgs {
    /// zenoh endpoint to listen on (repeatable), e.g. tcp/0.0.0.0:7447
    #[arg(long, value_name = "ENDPOINT")]
    listen: Vec<String>,
    /// zenoh endpoint to connect to (repeatable), e.g. tcp/192.0.2.7:7447
    #[arg(long, value_name = "ENDPOINT")]
    connect: Vec<String>,
    /// Do not scout for peers by multicast: use only --listen and --connect
    #[arg(long)]
    no_scouting: bool,
    /// Join as a zenoh client (through a router) instead of a peer
    #[arg(long)]
    client: bool,
    /// A zenoh JSON5 configuration file, applied before the options above
    #[arg(long, value_name = "FILE")]
    zenoh_config: Option<PathBuf>,
}

#[derive(Args)]
struct ReportArgs {
    /// Print the bridge's counts (and the process's heap allocations) this often
    /// (milliseconds; 0: never): to stderr as name=value pairs, or to stdout with --json
    #[arg(long, default_value_t = 0, value_name = "MS")]
    stats_every: u64,
    /// Print the start, every event and the counts as JSON objects, one per line on
    /// stdout, each with an "event" member naming it
    #[arg(long)]
    json: bool,
}

impl ReportArgs {
    /// Prints one line for people, or its JSON form for machines.
    fn print(&self, text: impl std::fmt::Display, json: impl FnOnce() -> serde_json::Value) {
        if self.json {
            println!("{}", json());
        } else {
            println!("{text}");
        }
    }

    /// Whether the counts are due now; if so, starts the next interval.
    fn stats_due(&self, last: &mut Instant) -> bool {
        if self.stats_every == 0 || last.elapsed() < Duration::from_millis(self.stats_every) {
            return false;
        }
        *last = Instant::now();
        true
    }

    /// The periodic counts of `side` ("in" or "out"): text to stderr, JSON to stdout.
    fn print_stats(&self, side: &str, stats: serde_json::Value, text: impl std::fmt::Display) {
        let allocations = allocations();
        if self.json {
            let mut line = serde_json::json!({ "event": "stats", "side": side });
            if let (Some(line), Some(counts)) = (line.as_object_mut(), stats.as_object()) {
                line.extend(counts.clone());
                line.insert("allocations".to_owned(), allocations.into());
            }
            println!("{line}");
        } else {
            eprintln!("{side} stats: {text} allocations={allocations}");
        }
    }
}

impl ZenohArgs {
    fn config(&self) -> ZenohConfig {
        ZenohConfig {
            client: self.client,
            listen: self.listen.clone(),
            connect: self.connect.clone(),
            no_multicast_scouting: self.no_scouting,
            file: self.zenoh_config.clone(),
        }
    }
}

#[derive(Args)]
struct OutArgs {
    /// The local channel to read (any kind, typed or raw)
    #[arg(long)]
    channel: String,
    /// The zenoh key expression to publish on
    #[arg(long)]
    key: String,
    /// Most messages in one zenoh sample
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Send a sample once it holds this many bytes
    #[arg(long, default_value_t = 32 << 10)]
    batch_bytes: usize,
    /// How long a partly filled batch waits for more messages, in microseconds
    #[arg(long, default_value_t = 0, value_name = "US")]
    linger_us: u64,
    /// What zenoh does when it cannot send: wait (block) or drop the sample (reported
    /// as a gap by the far side)
    #[arg(long, value_enum, default_value_t = CongestionArg::Block)]
    congestion: CongestionArg,
    /// Forward even while no far side subscribes (those messages are lost)
    #[arg(long)]
    no_wait_for_subscriber: bool,
    /// Exit with status 1 when the local channel is removed or replaced under its name,
    /// instead of following the name to the new channel
    #[arg(long)]
    exit_on_removal: bool,
    /// Test hook: build batch N but never send it, as if zenoh lost it (repeatable)
    #[arg(long, hide = true, value_name = "N")]
    drop_batch: Vec<u64>,
    #[command(flatten)]
    zenoh: ZenohArgs,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Args)]
struct InArgs {
    /// The zenoh key expression to subscribe to
    #[arg(long)]
    key: String,
    /// The local channel to publish into (created for raw streams if it does not exist)
    #[arg(long)]
    channel: String,
    /// When the local channel is full: hold zenoh (block) or drop and count (drop)
    #[arg(long, value_enum, default_value_t = BackpressureArg::Block)]
    backpressure: BackpressureArg,
    /// Ring bytes per publisher of a channel the bridge creates
    #[arg(long, default_value_t = 1 << 20)]
    capacity: usize,
    /// Exit with status 0 after this many far `out` sides went away (0: never)
    #[arg(long, default_value_t = 0, value_name = "N")]
    exit_after_lost_outs: u64,
    /// Where to keep the state record that lets a restarted `in` report what it missed
    /// (default /dev/shm, else $XDG_RUNTIME_DIR, else the temporary directory)
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    #[command(flatten)]
    zenoh: ZenohArgs,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum CongestionArg {
    Block,
    Drop,
}

#[derive(Clone, Copy, ValueEnum)]
enum BackpressureArg {
    Block,
    Drop,
}

fn main() -> ExitCode {
    let outcome = match Cli::parse().command {
        Command::Out(args) => run_out(args),
        Command::In(args) => run_in(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("salias-bridge: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_out(args: OutArgs) -> Result<(), String> {
    let mut config = OutConfig::new(&args.channel, &args.key, args.zenoh.config());
    config.batch_messages = args.batch;
    config.batch_bytes = args.batch_bytes;
    config.linger = Duration::from_micros(args.linger_us);
    config.congestion = match args.congestion {
        CongestionArg::Block => Congestion::Block,
        CongestionArg::Drop => Congestion::Drop,
    };
    config.wait_for_subscriber = !args.no_wait_for_subscriber;
    config.exit_on_removal = args.exit_on_removal;
    config.drop_batches = args.drop_batch;
    let out = Bridge::out(config).map_err(|e| e.to_string())?;
    let report = &args.report;
    let meta = out.meta();
    report.print(
        format_args!(
            "out: channel \"{}\" ({}, {}) on \"{}\" as stream {:016x}",
            args.channel,
            meta.kind(),
            meta.describe_type(),
            args.key,
            meta.stream_id
        ),
        || {
            let mut line = meta.to_json();
            line["key"] = args.key.clone().into();
            tagged("out", line)
        },
    );
    let mut last = Instant::now();
    while !out.is_finished() {
        if let Ok(event) = out.events().recv_timeout(Duration::from_millis(20)) {
            report.print(&event, || event.to_json());
        }
        if report.stats_due(&mut last) {
            let stats = out.stats();
            report.print_stats("out", stats.to_json(), stats);
        }
    }
    let stats = out.stop().map_err(|e| e.to_string())?;
    report.print(format_args!("out: stopped; {stats}"), || {
        tagged("stopped", stats.to_json())
    });
    Ok(())
}

/// `fields` with `"event": name` first.
fn tagged(name: &str, fields: serde_json::Value) -> serde_json::Value {
    let mut line = serde_json::Map::new();
    line.insert("event".to_owned(), name.into());
    if let serde_json::Value::Object(fields) = fields {
        line.extend(fields);
    }
    serde_json::Value::Object(line)
}

fn run_in(args: InArgs) -> Result<(), String> {
    let mut config = InConfig::new(&args.key, &args.channel, args.zenoh.config());
    config.backpressure = match args.backpressure {
        BackpressureArg::Block => Backpressure::Block,
        BackpressureArg::Drop => Backpressure::Drop,
    };
    config.capacity = args.capacity;
    config.state_dir = args.state_dir.clone();
    let inbound = Bridge::inbound(config).map_err(|e| e.to_string())?;
    let report = &args.report;
    report.print(
        format_args!(
            "in: \"{}\" into channel \"{}\" (state record {})",
            args.key,
            args.channel,
            inbound.state_path().display()
        ),
        || {
            serde_json::json!({
                "event": "in",
                "key": args.key,
                "channel": args.channel,
                "state_record": inbound.state_path().display().to_string(),
            })
        },
    );
    let mut last = Instant::now();
    let mut lost_outs = 0;
    loop {
        match inbound.events().recv_timeout(Duration::from_millis(20)) {
            Ok(event @ InEvent::Refused { .. }) => {
                // The exit status and stderr say it to people; --json readers see it too.
                if report.json {
                    println!("{}", event.to_json());
                }
                return Err(event.to_string());
            }
            Ok(event) => {
                // One line per event on stdout, for people and scripts alike; a far `out`
                // that went away comes with the counts so far.
                if let InEvent::OutLost { .. } = event {
                    lost_outs += 1;
                    let stats = inbound.stats();
                    report.print(format_args!("{event}; {stats}"), || {
                        let mut line = event.to_json();
                        line["stats"] = stats.to_json();
                        line
                    });
                } else {
                    report.print(&event, || event.to_json());
                }
                if args.exit_after_lost_outs > 0 && lost_outs >= args.exit_after_lost_outs {
                    let stats = inbound.stats();
                    report.print(format_args!("in: stopped; {stats}"), || {
                        tagged("stopped", stats.to_json())
                    });
                    return Ok(());
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err("the bridge stopped".into()),
        }
        if report.stats_due(&mut last) {
            let stats = inbound.stats();
            report.print_stats("in", stats.to_json(), stats);
        }
    }
}
