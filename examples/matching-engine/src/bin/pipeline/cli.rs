//! The command line: its flags, their defaults and checks, and what they make of a run.

use std::fmt;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use support::cores::cores;

use crate::params::{GatewayWait, Params, SubscriberWait};
use crate::placement::realtime_limit_ms;

const ABOUT: &str = "The showcase pipeline: gateway processes → OrderedMpsc → engine process → \
                     FifoFanout → market-data subscriber processes, with open-loop latency, \
                     every run verified.";

const LONG_ABOUT: &str = "The showcase pipeline: gateway processes → OrderedMpsc → engine process → \
                          FifoFanout → market-data subscriber processes, with open-loop latency, \
                          every run verified.\n\n\
                          Without --sweep: one run of each chosen system (default salias, 1 M \
                          requests/s for 1 s). With --sweep: every system at every offered load, \
                          alternating, for several rounds, raw data to \
                          results/pipeline-<time>.jsonl.";

/// The pipeline's command line; each field's doc comment is its `--help` text.
#[derive(Parser, Debug)]
#[command(name = "pipeline", args_override_self = true, about = ABOUT, long_about = LONG_ABOUT)]
pub struct Cli {
    /// Offered load over all gateways, requests per second [default: 1000000; 50000 with --quick]
    #[arg(long, value_name = "N", value_parser = requests_per_second)]
    rate: Option<f64>,
    /// Length of a run, ms [default: 1000; 300 with --sweep; 60 with --quick]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    duration_ms: Option<u64>,
    /// Requests planned in the first N ms are sent and verified but not measured [default: 50; 10 with --quick]
    #[arg(long, value_name = "N")]
    warmup_ms: Option<u64>,
    /// A smoke run: a single run at 50,000 requests/s for 60 ms (10 ms warm-up); flags given
    /// explicitly still win
    #[arg(long, conflicts_with = "sweep")]
    quick: bool,
    /// Gateway processes (1 to 32)
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=32))]
    gateways: u32,
    /// Market-data subscriber processes (1 to 32)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=32))]
    subscribers: u32,
    /// Seed of the gateways' synthetic order flow
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Cores of the gateways, taken in turn
    #[arg(long, value_name = "CORE,..", value_delimiter = ',', default_value = "0", value_parser = core)]
    gateway_cores: Vec<usize>,
    /// Core of the engine [default: 1, or 0 on a machine with one core]
    #[arg(long, value_name = "CORE", value_parser = core)]
    engine_core: Option<usize>,
    /// Cores of the subscribers, taken in turn
    #[arg(long, value_name = "CORE,..", value_delimiter = ',', default_value = "0", value_parser = core)]
    subscriber_cores: Vec<usize>,
    /// How a gateway waits for a planned time
    #[arg(long, value_enum, default_value_t = GatewayWait::Yield)]
    gateway_wait: GatewayWait,
    /// How an idle subscriber waits (the mutex baseline always sleeps on its condvar)
    #[arg(long, value_enum, default_value_t = SubscriberWait::Futex)]
    subscriber_wait: SubscriberWait,
    /// Every role under SCHED_RR at this priority (1 to 99), so kernel threads cannot take a
    /// role's core; needs root or CAP_SYS_NICE and util-linux's chrt, and runs short enough
    /// for the kernel's real-time throttling
    #[arg(long, value_name = "PRIORITY", value_parser = clap::value_parser!(u32).range(1..=99))]
    realtime: Option<u32>,
    /// Single run: write the engine's input (in the order it received it) and each
    /// subscriber's events to DIR, for a byte-for-byte replay (tests/pipeline.rs)
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// Single run of salias: the order feed is an `OrderedFanout` channel, and `salias
    /// record` records it beside the engine (tethered: nothing lost) to FILE (MCAP), which
    /// `replay --recording FILE` replays into a fresh engine
    #[arg(long, value_name = "FILE")]
    record_feed: Option<PathBuf>,
    /// Which system to run, in a single run or in every round of the sweep
    #[arg(long, value_enum, default_value_t = System::Salias)]
    system: System,
    /// Every system at every rate of --rates, for --rounds rounds
    #[arg(long)]
    sweep: bool,
    /// Sweep: the offered loads, requests per second [default: 100000,500000,1000000,2000000,4000000,6000000]
    #[arg(
        long,
        value_name = "N,..",
        hide_default_value = true,
        value_delimiter = ',',
        value_parser = requests_per_second,
        default_values_t = [100_000.0, 500_000.0, 1_000_000.0, 2_000_000.0, 4_000_000.0, 6_000_000.0]
    )]
    rates: Vec<f64>,
    /// Sweep: how many rounds (1 to 100)
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
    rounds: u64,
    /// Sweep: wait up to N s before each run for the machine to be under 10 % busy (the
    /// reading is recorded with the run)
    #[arg(long, value_name = "N", default_value_t = 2)]
    quiet_wait_s: u64,
}

/// The systems a run can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum System {
    /// salias channels between separate processes
    Salias,
    #[value(help = "Mutex<VecDeque> + Condvar queues between threads")]
    Mutex,
    /// lock-free rtrb SPSC rings between threads
    Lockfree,
    /// the mutex, lock-free and salias pipelines, in that order
    All,
}

impl System {
    /// The systems to run, by the names `systems::run_system` takes.
    pub fn names(self) -> Vec<&'static str> {
        match self {
            System::Salias => vec!["salias"],
            System::Mutex => vec!["mutex"],
            System::Lockfree => vec!["lockfree"],
            System::All => vec!["mutex", "lockfree", "salias"],
        }
    }
}

pub struct Options {
    pub params: Params,
    pub sweep: bool,
    pub rates: Vec<f64>,
    pub rounds: usize,
    pub quiet_wait_s: u64,
    pub systems: Vec<&'static str>,
}

/// Arguments that parse one by one but not together.
#[derive(Debug)]
pub enum CliError {
    /// The run is longer than the kernel lets real-time tasks run in a row.
    RealtimeTooLong { limit_ms: u64, warmup_ms: u64 },
    /// The warm-up would cover the whole run.
    WarmupTooLong { warmup_ms: u64, duration_ms: u64 },
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::RealtimeTooLong { limit_ms, warmup_ms } => write!(
                f,
                "--realtime runs spin under SCHED_RR, and the kernel throttles real-time tasks after \
                 {limit_ms} ms of every second (kernel.sched_rt_runtime_us): use --duration-ms of at most {}",
                limit_ms.saturating_sub(*warmup_ms)
            ),
            CliError::WarmupTooLong { warmup_ms, duration_ms } => write!(
                f,
                "--warmup-ms ({warmup_ms}) must be shorter than --duration-ms ({duration_ms})"
            ),
        }
    }
}

impl std::error::Error for CliError {}

fn core(value: &str) -> Result<usize, String> {
    let cores = cores();
    match value.parse::<usize>() {
        Ok(core) if core < cores => Ok(core),
        _ => Err(format!("takes core numbers below {cores} (this machine's cores)")),
    }
}

fn requests_per_second(value: &str) -> Result<f64, String> {
    value
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r >= 1.0)
        .ok_or_else(|| "takes requests per second, at least 1".to_owned())
}

impl Cli {
    /// The run these arguments describe, with every default filled in.
    pub fn options(self) -> Result<Options, CliError> {
        let duration_ms = self.duration_ms.unwrap_or(match (self.sweep, self.quick) {
            (true, _) => 300,
            (false, true) => 60,
            (false, false) => 1_000,
        });
        let params = Params {
            gateways: self.gateways,
            subscribers: self.subscribers,
            rate: self.rate.unwrap_or(if self.quick { 50_000.0 } else { 1_000_000.0 }),
            duration_ms,
            warmup_ms: self.warmup_ms.unwrap_or(if self.quick { 10 } else { 50 }),
            seed: self.seed,
            gateway_cores: self.gateway_cores,
            engine_core: self.engine_core.unwrap_or(1.min(cores() - 1)),
            subscriber_cores: self.subscriber_cores,
            gateway_wait: self.gateway_wait,
            subscriber_wait: self.subscriber_wait,
            realtime: self.realtime,
            record: self.record,
            record_feed: self.record_feed,
        };
        if params.realtime.is_some()
            && let Some(limit_ms) = realtime_limit_ms()
            && params.duration_ms + params.warmup_ms > limit_ms
        {
            return Err(CliError::RealtimeTooLong {
                limit_ms,
                warmup_ms: params.warmup_ms,
            });
        }
        if params.warmup_ms >= params.duration_ms {
            return Err(CliError::WarmupTooLong {
                warmup_ms: params.warmup_ms,
                duration_ms: params.duration_ms,
            });
        }
        Ok(Options {
            params,
            sweep: self.sweep,
            rates: self.rates,
            rounds: self.rounds as usize,
            quiet_wait_s: self.quiet_wait_s,
            systems: self.system.names(),
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Params};

    fn options(args: &[&str]) -> super::Options {
        Cli::try_parse_from(std::iter::once("pipeline").chain(args.iter().copied()))
            .expect("arguments parse")
            .options()
            .expect("arguments agree")
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_role_process_gets_the_parents_parameters() {
        // A role process is handed the run's parameters as JSON (support::role).
        let parent = options(&[
            "--rate",
            "2500.5",
            "--duration-ms",
            "70",
            "--warmup-ms",
            "5",
            "--gateways",
            "3",
            "--subscribers",
            "2",
            "--seed",
            "9",
            "--gateway-wait",
            "sleep",
            "--subscriber-wait",
            "nap",
            "--realtime",
            "3",
            "--record",
            "/tmp/x",
            "--record-feed",
            "/tmp/x/feed.mcap",
        ])
        .params;
        let json = serde_json::to_string(&parent).expect("parameters encode");
        assert_eq!(
            serde_json::from_str::<Params>(&json).expect("parameters decode"),
            parent
        );
    }

    #[test]
    fn defaults_depend_on_the_mode() {
        let single = options(&[]).params;
        assert_eq!(
            (single.rate, single.duration_ms, single.warmup_ms),
            (1_000_000.0, 1_000, 50)
        );
        let sweep = options(&["--sweep"]);
        assert_eq!(sweep.params.duration_ms, 300);
        assert_eq!(sweep.rates.len(), 6);
        let quick = options(&["--quick"]).params;
        assert_eq!((quick.rate, quick.duration_ms, quick.warmup_ms), (50_000.0, 60, 10));
        let quick_but = options(&["--quick", "--rate", "7000"]).params;
        assert_eq!((quick_but.rate, quick_but.duration_ms), (7_000.0, 60));
        assert_eq!(options(&["--system", "all"]).systems, ["mutex", "lockfree", "salias"]);
    }

    #[test]
    fn arguments_that_disagree_are_refused() {
        let parse = |args: &[&str]| Cli::try_parse_from(std::iter::once("pipeline").chain(args.iter().copied()));
        assert!(parse(&["--gateways", "0"]).is_err());
        assert!(parse(&["--rounds", "101"]).is_err());
        assert!(parse(&["--rate", "0.5"]).is_err());
        assert!(parse(&["--quick", "--sweep"]).is_err());
        let late = parse(&["--warmup-ms", "80", "--duration-ms", "80"]).unwrap().options();
        assert!(late.is_err_and(|e| e.to_string().contains("--warmup-ms (80) must be shorter")));
    }
}
