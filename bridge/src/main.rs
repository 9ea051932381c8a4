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
use salias_bridge::{Backpressure, Bridge, Congestion, InConfig, InEvent, OutConfig, OutEvent, ZenohConfig};

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
    /// Print the bridge's counts (and the process's heap allocations) to stderr this
    /// often (milliseconds; 0: never)
    #[arg(long, default_value_t = 0, value_name = "MS")]
    stats_every: u64,
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
    let meta = out.meta();
    println!(
        "out: channel \"{}\" ({}, {}) on \"{}\" as stream {:016x}",
        args.channel,
        meta.kind(),
        meta.describe_type(),
        args.key,
        meta.stream_id
    );
    let mut last = Instant::now();
    while !out.is_finished() {
        // One line per event on stdout, as `in` prints its own.
        if let Ok(event) = out.events().recv_timeout(Duration::from_millis(20)) {
            match event {
                OutEvent::ChannelRemoved { channel } => println!(
                    "out: channel \"{channel}\" was removed; reading what is left in it and watching its name for a new channel"
                ),
                OutEvent::Reattached { previous, stream } => println!(
                    "out: channel \"{}\" was replaced by a new one ({}, {}); stream {previous:016x} ended, now stream {:016x}",
                    stream.channel,
                    stream.kind(),
                    stream.describe_type(),
                    stream.stream_id
                ),
                OutEvent::PublishersGone { channel } => {
                    println!("out: every publisher of channel \"{channel}\" has gone; waiting for the next")
                }
                _ => {}
            }
        }
        if args.zenoh.stats_every > 0 && last.elapsed() >= Duration::from_millis(args.zenoh.stats_every) {
            last = Instant::now();
            let stats = out.stats();
            eprintln!(
                "out stats: messages={} samples={} bytes={} reattached={} publishers_gone={} allocations={}",
                stats.messages,
                stats.samples,
                stats.bytes,
                stats.reattached,
                stats.publishers_gone,
                allocations()
            );
        }
    }
    out.stop().map(|_| ()).map_err(|e| e.to_string())
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
    println!(
        "in: \"{}\" into channel \"{}\" (state record {})",
        args.key,
        args.channel,
        inbound.state_path().display()
    );
    let mut last = Instant::now();
    let mut lost_outs = 0;
    loop {
        match inbound.events().recv_timeout(Duration::from_millis(20)) {
            Ok(event) => {
                // One line per event on stdout, flushed, for people and scripts alike.
                match &event {
                    InEvent::Stream(meta) => println!(
                        "stream {:016x}: {} of {} from channel \"{}\"",
                        meta.stream_id,
                        meta.kind(),
                        meta.describe_type(),
                        meta.channel
                    ),
                    InEvent::Refused { stream_id, error } => {
                        return Err(format!("refused stream {stream_id:016x}: {error}"));
                    }
                    InEvent::Gap {
                        stream_id,
                        missing,
                        ordered,
                    } => println!(
                        "gap in stream {stream_id:016x}: {} {}..{} missing ({})",
                        if *ordered { "sequence numbers" } else { "messages" },
                        missing.start,
                        missing.end,
                        missing.end - missing.start
                    ),
                    InEvent::OutJoined { stream_id } => println!("out joined: stream {stream_id:016x}"),
                    InEvent::OutLost { stream_id } => {
                        lost_outs += 1;
                        println!("out lost: stream {stream_id:016x} went away; {:?}", inbound.stats());
                    }
                    InEvent::Malformed { reason } => println!("malformed sample: {reason}"),
                    InEvent::Undelivered {
                        stream_id,
                        messages,
                        sequences,
                        in_doubt,
                        gap_in_doubt,
                    } => println!(
                        "{}",
                        undelivered(*stream_id, messages, sequences, in_doubt, *gap_in_doubt)
                    ),
                    InEvent::Unrecorded { error } => println!(
                        "state not recorded: {error}; a restarted in may report as undelivered what this one delivered"
                    ),
                }
                if args.exit_after_lost_outs > 0 && lost_outs >= args.exit_after_lost_outs {
                    println!("in: {:?}", inbound.stats());
                    return Ok(());
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err("the bridge stopped".into()),
        }
        if args.zenoh.stats_every > 0 && last.elapsed() >= Duration::from_millis(args.zenoh.stats_every) {
            last = Instant::now();
            let s = inbound.stats();
            eprintln!(
                "in stats: samples={} messages={} delivered={} dropped={} waited={} lost_samples={} gaps={} missing={} malformed={} refused={} outs_lost={} undelivered={} in_doubt={} unrecorded={} no_subscriber={} allocations={}",
                s.samples,
                s.messages,
                s.delivered,
                s.dropped,
                s.waited,
                s.lost_samples,
                s.gaps.events,
                s.gaps.missing,
                s.malformed,
                s.refused,
                s.outs_lost,
                s.undelivered,
                s.in_doubt,
                s.unrecorded,
                s.no_subscriber,
                allocations()
            );
        }
    }
}

/// The line for [`InEvent::Undelivered`], e.g. "undelivered in stream 00ab…: messages
/// 28..29 (1) were not delivered by the previous in; sequence numbers 28..29 (1) declared
/// missing in the near channel".
fn undelivered(
    stream_id: u64,
    messages: &std::ops::Range<u64>,
    sequences: &Option<std::ops::Range<u64>>,
    in_doubt: &std::ops::Range<u64>,
    gap_in_doubt: u64,
) -> String {
    let count = |range: &std::ops::Range<u64>| range.end - range.start;
    let mut line = format!(
        "undelivered in stream {stream_id:016x}: messages {}..{} ({}) were not delivered by the previous in",
        messages.start,
        messages.end,
        count(messages)
    );
    if let Some(sequences) = sequences {
        line += &format!(
            "; sequence numbers {}..{} ({}) declared missing in the near channel",
            sequences.start,
            sequences.end,
            count(sequences)
        );
    }
    if !in_doubt.is_empty() {
        line += &format!(
            "; messages {}..{} ({}) in doubt: the previous in was publishing them as it died, and how many arrived cannot be told",
            in_doubt.start,
            in_doubt.end,
            count(in_doubt)
        );
    }
    if gap_in_doubt > 0 {
        line += &format!(
            "; the first {gap_in_doubt} of those numbers were being declared as it died and may be declared twice"
        );
    }
    line
}
