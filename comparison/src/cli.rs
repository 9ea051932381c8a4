//! The command line: every flag, its default, and what it accepts. The defaults that
//! depend on `--quick` or `--smoke` are resolved in [`crate::plan`].

use clap::{Parser, ValueEnum};

use crate::transports::aeron::{AERON_TERM_BYTES, term_length};

/// Same-run, cross-process comparison of salias with Aeron IPC, iceoryx2 and the machine's
/// floors.
///
/// Default: 5 rounds, 10M messages per publisher, 200k pings, 500 wake-ups; --quick: 3
/// rounds, 2M, 100k, 200; --smoke: 1 round, 20k, 1k, 40.
/// Open loop: loads 0.1,0.5,1,2,5,10,20,50 M msg/s until a system saturates, 1 s per level
/// after 0.2 s of warm-up (--quick: 0.5 s after 0.1 s). The default runs throughput, latency,
/// the open loop and wake-up latency. 2P1S runs by default only with >= 3 cores.
/// --headline runs only the C++ original's headline grid (2P1S and 2P2S × 1, 4, 64 MiB:
/// salias FIFO offer vs Aeron try_claim), 5 rounds (--smoke: 1), on >= 4 cores.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "salias-comparison",
    after_help = "Results: comparison/results/<unix time>.jsonl (a header line, then one record per run)"
)]
pub struct Cli {
    /// Fewer rounds and messages: 3 rounds, 2M messages per publisher, 100k pings, open loop
    /// 0.5 s + 0.1 s warm-up per level, no 64 MiB salias ring.
    #[arg(long, conflicts_with = "smoke")]
    pub quick: bool,

    /// A check that every part runs and writes its records, not a measurement: 1 round,
    /// 20k messages per publisher, 1k pings, one open-loop level of 0.1 M msg/s for
    /// 0.05 s + 0.01 s warm-up, no 64 MiB salias ring. Explicit flags still apply.
    #[arg(long)]
    pub smoke: bool,

    /// Run only the C++ original's headline grid: 2P1S and 2P2S × rings / terms of 1, 4 and
    /// 64 MiB, salias FIFO `offer` (FifoMpsc, FifoFanout for 2 subscribers) against Aeron
    /// `try_claim`, alternating within each round [rounds: 5; --smoke 1]. Needs >= 4 cores.
    #[arg(long, conflicts_with_all = [
        "only", "systems", "no_aeron", "two_publishers", "salias_ring", "aeron_term", "ice_buffer",
        "pings", "loads", "ol_duration", "ol_warmup", "realtime",
    ])]
    pub headline: bool,

    /// With --headline on fewer than 4 cores: run anyway, every record marked oversubscribed.
    #[arg(long, requires = "headline")]
    pub allow_oversubscribed: bool,

    /// Alternating rounds [default: 5; --quick 3; --smoke 1; --headline 5].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub rounds: Option<u64>,

    /// Run one part only.
    #[arg(long, value_enum, value_name = "PART")]
    pub only: Option<Part>,

    /// Run the 2P1S setups also with fewer than 3 cores.
    #[arg(long)]
    pub two_publishers: bool,

    /// Leave Aeron out (its driver is not started).
    #[arg(long)]
    pub no_aeron: bool,

    /// Run only these systems, comma-separated; `floor` means the floors (the SPSC ring,
    /// the cache-line ping-pong and the 64-byte message ping-pong).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LIST")]
    pub systems: Option<Vec<SystemChoice>>,

    /// Messages per publisher in a throughput run [default: 10000000; --quick 2000000;
    /// --smoke 20000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub messages: Option<u64>,

    /// Recorded ping-pong round trips per run, after 10 000 unrecorded ones [default:
    /// 200000; --quick 100000; --smoke 1000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub pings: Option<u64>,

    /// salias ring bytes per publisher (also the SPSC floor's ring): a power of two of at
    /// least 4096.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20, value_parser = ring_bytes)]
    pub salias_ring: u64,

    /// Aeron's term length for the throughput and open-loop runs (ping-pong keeps 64 MiB): a
    /// power of two from 65536 (64 KiB) to 1073741824 (1 GiB).
    #[arg(long, value_name = "BYTES", default_value_t = AERON_TERM_BYTES, value_parser = aeron_term)]
    pub aeron_term: u64,

    /// iceoryx2 subscriber buffer, in samples [default: salias ring / 64].
    #[arg(long, value_name = "SAMPLES", value_parser = clap::value_parser!(u64).range(1..))]
    pub ice_buffer: Option<u64>,

    /// Open-loop offered loads, M msg/s, comma-separated, run level by level until a system
    /// saturates [default: 0.1,0.5,1,2,5,10,20,50; --smoke 0.1].
    #[arg(long, value_delimiter = ',', value_name = "M,M,...", value_parser = positive_rate)]
    pub loads: Option<Vec<f64>>,

    /// Recorded seconds per open-loop level [default: 1; --quick 0.5; --smoke 0.05].
    #[arg(long, value_name = "S", value_parser = positive_seconds)]
    pub ol_duration: Option<f64>,

    /// Run the open loop's publisher and subscriber under SCHED_FIFO at PRIORITY (1-99), so
    /// no ordinary task takes their cores: tails with less scheduler noise. Needs root or
    /// CAP_SYS_NICE, and a level (duration + warm-up) shorter than the kernel's real-time
    /// limit (kernel.sched_rt_runtime_us).
    #[arg(long, value_name = "PRIORITY", value_parser = clap::value_parser!(u32).range(1..=99))]
    pub realtime: Option<u32>,

    /// Unrecorded warm-up seconds before each open-loop level [default: 0.2; --quick 0.1;
    /// --smoke 0.01].
    #[arg(long, value_name = "S", value_parser = seconds)]
    pub ol_warmup: Option<f64>,

    /// Throughput runs: `pause`s every system's subscriber spins after a poll that came
    /// back short (some messages, fewer than the poll's limit), so that a subscriber that
    /// caught up stays off the line its publisher is writing for a while, as salias's
    /// `recv_batch` with `wait::Batching` does; 0 polls again at once.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub subscriber_pauses: u32,
}

/// One part of the comparison (`--only`).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Throughput of every setup.
    Throughput,
    /// Ping-pong round trip / 2.
    Latency,
    /// The open-loop sweep of offered load.
    Openloop,
    /// Wake-up latency of a sleeping receiver, and its idle CPU.
    Wake,
}

/// A system `--systems` may name.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemChoice {
    Salias,
    Aeron,
    Iceoryx2,
    /// The floors: the SPSC ring, the cache-line ping-pong and the 64-byte message
    /// ping-pong.
    Floor,
}

fn ring_bytes(text: &str) -> Result<u64, String> {
    let bytes: u64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a byte count; give a power of two such as 1048576"))?;
    if bytes < 4096 || !bytes.is_power_of_two() {
        return Err(format!(
            "{bytes} is not a power of two of at least 4096 (salias rings and the SPSC floor's need one)"
        ));
    }
    Ok(bytes)
}

fn aeron_term(text: &str) -> Result<u64, String> {
    let bytes: u64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a byte count; give a power of two such as 1048576"))?;
    term_length(bytes).map_err(|e| e.to_string())
}

fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(s),
        _ => Err(format!("`{text}` is not a number of seconds >= 0, such as 0.2")),
    }
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    match seconds(text) {
        Ok(s) if s > 0.0 => Ok(s),
        _ => Err(format!("`{text}` is not a number of seconds > 0, such as 0.5")),
    }
}

fn positive_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(m) if m.is_finite() && m > 0.0 => Ok(m),
        _ => Err(format!("`{text}` is not a rate in M msg/s > 0, such as 0.5")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_flag_scripts_pass_parses() {
        let cli = Cli::try_parse_from([
            "salias-comparison",
            "--quick",
            "--rounds",
            "7",
            "--only",
            "openloop",
            "--two-publishers",
            "--no-aeron",
            "--systems",
            "salias,aeron,iceoryx2,floor",
            "--messages",
            "1000",
            "--pings",
            "100",
            "--salias-ring",
            "65536",
            "--ice-buffer",
            "1024",
            "--loads",
            "0.1,1,10",
            "--ol-duration",
            "0.5",
            "--ol-warmup",
            "0",
            "--realtime",
            "50",
            "--aeron-term",
            "1048576",
        ])
        .unwrap();
        assert!(cli.quick && cli.two_publishers && cli.no_aeron);
        assert_eq!(cli.rounds, Some(7));
        assert_eq!(cli.only, Some(Part::Openloop));
        assert_eq!(cli.systems.as_ref().map(Vec::len), Some(4));
        assert_eq!(cli.salias_ring, 65536);
        assert_eq!(cli.loads, Some(vec![0.1, 1.0, 10.0]));
        assert_eq!(cli.ol_warmup, Some(0.0));
        assert_eq!(cli.realtime, Some(50));
        assert_eq!(cli.aeron_term, 1 << 20);
        let headline =
            Cli::try_parse_from(["salias-comparison", "--headline", "--allow-oversubscribed", "--smoke"]).unwrap();
        assert!(headline.headline && headline.allow_oversubscribed && headline.smoke);
    }

    #[test]
    fn bad_values_are_refused_with_the_reason() {
        for (flag, value, says) in [
            ("--salias-ring", "3000", "power of two"),
            ("--rounds", "0", "0"),
            ("--loads", "1,-2", "rate"),
            ("--ol-duration", "0", "seconds"),
            ("--only", "everything", "everything"),
            ("--systems", "zeromq", "zeromq"),
            ("--realtime", "100", "100"),
            ("--aeron-term", "32768", "64 KiB"),
            ("--aeron-term", "3145728", "power of two"),
            ("--aeron-term", "2147483648", "1 GiB"),
            ("--aeron-term", "big", "byte count"),
        ] {
            let error = Cli::try_parse_from(["salias-comparison", flag, value]).unwrap_err();
            assert!(error.to_string().contains(says), "{flag} {value}: {error}");
        }
        for args in [
            &["--allow-oversubscribed"][..],
            &["--headline", "--only", "latency"],
            &["--headline", "--salias-ring", "65536"],
        ] {
            let error =
                Cli::try_parse_from(std::iter::once("salias-comparison").chain(args.iter().copied())).unwrap_err();
            assert!(error.to_string().contains("--"), "{args:?}: {error}");
        }
    }
}
