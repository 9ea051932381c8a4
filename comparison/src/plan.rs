//! What one invocation runs: the command line's flags resolved into rounds, sizes and the
//! lists of setups and systems, in the order they alternate.

use support::cores::cores;
use support::realtime::{self, Policy, Realtime, RealtimeError};
use support::records::System;

use crate::cli::{Cli, Part, SystemChoice};
use crate::throughput::{Api, Setup};
use crate::transports::aeron::AERON_TERM_BYTES;
use crate::wake::{VARIANTS as WAKE_VARIANTS, Variant, WakePlan};

/// Everything a run of the comparison needs from its command line.
pub struct Plan {
    pub rounds: usize,
    pub throughput: bool,
    pub latency: bool,
    pub openloop: bool,
    pub wake: bool,
    /// Wake-up runs: messages (wake-ups) per run and the idle interval.
    pub wake_plan: WakePlan,
    pub wake_variants: Vec<Variant>,
    /// Whether the 2P1S setups run (>= 3 cores, or `--two-publishers`).
    pub two_publishers: bool,
    /// Whether Aeron runs at all (its driver starts only then).
    pub aeron: bool,
    pub messages: u64,
    pub pings: u64,
    pub salias_ring: u64,
    pub ice_buffer: u64,
    /// Open-loop offered loads, M msg/s.
    pub loads: Vec<f64>,
    pub ol_duration: f64,
    pub ol_warmup: f64,
    /// The open loop's real-time policy (`--realtime`: SCHED_FIFO).
    pub realtime: Option<Realtime>,
    /// Throughput setups, in the order they alternate within a round.
    pub setups: Vec<Setup>,
    /// Open-loop systems with their buffer (as `Setup::param`).
    pub openloop_systems: Vec<(System, u64)>,
    pub latency_systems: Vec<System>,
}

impl Plan {
    pub fn new(cli: &Cli) -> Plan {
        let pick = |full, quick, smoke| by_mode(cli, full, quick, smoke);
        let short = cli.quick || cli.smoke;
        let rounds = cli.rounds.unwrap_or(pick(5, 3, 1)) as usize;
        let messages = cli.messages.unwrap_or(pick(10_000_000, 2_000_000, 20_000));
        let pings = cli.pings.unwrap_or(pick(200_000, 100_000, 1_000));
        let salias_ring = cli.salias_ring;
        let ice_buffer = cli.ice_buffer.unwrap_or(salias_ring / 64);
        let loads = cli.loads.clone().unwrap_or_else(|| {
            if cli.smoke {
                vec![0.1]
            } else {
                vec![0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
            }
        });
        let ol_duration = cli.ol_duration.unwrap_or(by_mode(cli, 1.0, 0.5, 0.05));
        let ol_warmup = cli.ol_warmup.unwrap_or(by_mode(cli, 0.2, 0.1, 0.01));
        let two_publishers = cores() >= 3 || cli.two_publishers;
        let wanted = |system: System| {
            let choice = match system {
                System::Salias => SystemChoice::Salias,
                System::Aeron => SystemChoice::Aeron,
                System::Iceoryx2 => SystemChoice::Iceoryx2,
                System::SpscFloor | System::Floor | System::MessageFloor => SystemChoice::Floor,
            };
            (choice != SystemChoice::Aeron || !cli.no_aeron)
                && cli.systems.as_ref().is_none_or(|list| list.contains(&choice))
        };

        let mut setups = Vec::new();
        let mut add = |system, api, publishers, param| {
            if wanted(system) {
                setups.push(Setup::new(system, api, publishers, messages, param));
            }
        };
        add(System::Salias, Api::Offer, 1, salias_ring);
        add(System::Aeron, Api::TryClaim, 1, AERON_TERM_BYTES);
        add(System::Iceoryx2, Api::LoanUninit, 1, ice_buffer);
        add(System::Salias, Api::OfferBatch, 1, salias_ring);
        add(System::Iceoryx2, Api::LoanUninitBlock, 1, ice_buffer);
        add(System::Aeron, Api::Offer, 1, AERON_TERM_BYTES);
        add(System::SpscFloor, Api::Batch, 1, salias_ring);
        if !short && salias_ring != AERON_TERM_BYTES {
            // salias with a ring as large as Aeron's term (Aeron's IPC window is term / 2)
            add(System::Salias, Api::Offer, 1, AERON_TERM_BYTES);
        }
        if two_publishers {
            add(System::Salias, Api::Offer, 2, salias_ring);
            add(System::Aeron, Api::TryClaim, 2, AERON_TERM_BYTES);
            add(System::Iceoryx2, Api::LoanUninit, 2, ice_buffer);
            add(System::Salias, Api::OfferBatch, 2, salias_ring);
        }
        let mut openloop_systems = vec![
            (System::Salias, salias_ring),
            (System::Aeron, AERON_TERM_BYTES),
            (System::Iceoryx2, ice_buffer),
        ];
        openloop_systems.retain(|&(s, _)| wanted(s));
        let mut latency_systems = vec![
            System::Floor,
            System::MessageFloor,
            System::Salias,
            System::Aeron,
            System::Iceoryx2,
        ];
        latency_systems.retain(|&s| wanted(s));
        let mut wake_variants = WAKE_VARIANTS.to_vec();
        wake_variants.retain(|&(s, _)| wanted(s));
        let wake_plan = WakePlan {
            messages: pick(500, 200, 40),
            idle_ms: pick(1_000, 500, 100),
        };
        let part = |p| cli.only.is_none_or(|only| only == p);
        Plan {
            rounds,
            throughput: part(Part::Throughput),
            latency: part(Part::Latency),
            openloop: part(Part::Openloop),
            wake: part(Part::Wake),
            wake_plan,
            wake_variants,
            two_publishers,
            // The wake part has no Aeron row: its driver starts only for the others.
            aeron: wanted(System::Aeron) && [Part::Throughput, Part::Latency, Part::Openloop].into_iter().any(part),
            messages,
            pings,
            salias_ring,
            ice_buffer,
            loads,
            ol_duration,
            ol_warmup,
            realtime: cli.realtime.map(|priority| Realtime {
                policy: Policy::Fifo,
                priority,
            }),
            setups,
            openloop_systems,
            latency_systems,
        }
    }
}

impl Plan {
    /// Whether the open loop can run as `--realtime` asks: the privilege is there, and
    /// each level ends before the kernel throttles real-time tasks (which would show as a
    /// stall of tens of ms in the tail).
    pub fn check_realtime(&self) -> Result<(), PlanError> {
        let Some(realtime) = self.realtime.filter(|_| self.openloop) else {
            return Ok(());
        };
        realtime::check(realtime.policy, realtime.priority).map_err(PlanError::Realtime)?;
        let level_ms = ((self.ol_duration + self.ol_warmup) * 1e3).ceil() as u64;
        match realtime::throttle_limit_ms() {
            Some(limit_ms) if level_ms > limit_ms => Err(PlanError::Throttled { level_ms, limit_ms }),
            _ => Ok(()),
        }
    }
}

/// A plan that cannot run as asked.
#[derive(Debug)]
pub enum PlanError {
    /// `--realtime` without the privilege.
    Realtime(RealtimeError),
    /// `--realtime` with levels longer than the kernel lets real-time tasks run.
    Throttled { level_ms: u64, limit_ms: u64 },
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::Realtime(e) => write!(f, "--realtime: {e}"),
            PlanError::Throttled { level_ms, limit_ms } => write!(
                f,
                "--realtime: an open-loop level takes {level_ms} ms (--ol-duration + --ol-warmup), but the kernel \
                 throttles real-time tasks after {limit_ms} ms (kernel.sched_rt_runtime_us, less 100 ms of margin); \
                 give --ol-duration and --ol-warmup that add up to at most {limit_ms} ms"
            ),
        }
    }
}

impl std::error::Error for PlanError {}

/// The default of the full run, of `--quick` or of `--smoke`.
fn by_mode<T>(cli: &Cli, full: T, quick: T, smoke: T) -> T {
    if cli.smoke {
        smoke
    } else if cli.quick {
        quick
    } else {
        full
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn plan(args: &[&str]) -> Plan {
        Plan::new(&Cli::try_parse_from(std::iter::once("salias-comparison").chain(args.iter().copied())).unwrap())
    }

    #[test]
    fn the_full_run_adds_the_large_salias_ring() {
        let full = plan(&[]);
        assert_eq!((full.rounds, full.messages, full.pings), (5, 10_000_000, 200_000));
        assert!(
            full.setups
                .iter()
                .any(|s| s.system == System::Salias && s.param == AERON_TERM_BYTES)
        );
        let quick = plan(&["--quick"]);
        assert_eq!((quick.rounds, quick.messages, quick.pings), (3, 2_000_000, 100_000));
        assert!(
            !quick
                .setups
                .iter()
                .any(|s| s.system == System::Salias && s.param == AERON_TERM_BYTES)
        );
    }

    #[test]
    fn smoke_is_small_and_runs_every_part_and_system() {
        let smoke = plan(&["--smoke"]);
        assert_eq!((smoke.rounds, smoke.loads.as_slice()), (1, &[0.1][..]));
        assert!(smoke.throughput && smoke.latency && smoke.openloop && smoke.wake && smoke.aeron);
        assert_eq!(smoke.wake_variants.len(), 3);
        assert_eq!(smoke.wake_plan.messages, 40);
        assert_eq!(smoke.latency_systems.len(), 5);
        assert_eq!(smoke.openloop_systems.len(), 3);
        assert_eq!(plan(&["--smoke", "--rounds", "2"]).rounds, 2, "explicit flags win");
    }

    #[test]
    fn systems_and_parts_restrict_what_runs() {
        let floors = plan(&["--systems", "floor"]);
        assert!(floors.setups.iter().all(|s| s.system == System::SpscFloor));
        assert_eq!(floors.latency_systems, [System::Floor, System::MessageFloor]);
        assert!(floors.openloop_systems.is_empty() && !floors.aeron);
        let no_aeron = plan(&["--no-aeron", "--only", "latency"]);
        assert!(!no_aeron.aeron && !no_aeron.latency_systems.contains(&System::Aeron));
        assert!(no_aeron.latency && !no_aeron.throughput && !no_aeron.openloop);
        let wake = plan(&["--only", "wake"]);
        assert!(wake.wake && !wake.aeron, "no Aeron row in the wake part, so no driver");
        assert!(plan(&[]).realtime.is_none());
        assert_eq!(
            plan(&["--realtime", "7"]).realtime,
            Some(Realtime {
                policy: Policy::Fifo,
                priority: 7
            })
        );
        assert_eq!(
            plan(&["--salias-ring", "65536"]).ice_buffer,
            1024,
            "ring / 64 by default"
        );
    }
}

#[cfg(test)]
mod realtime_tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn a_level_longer_than_the_kernels_real_time_limit_is_refused() {
        let Some(limit_ms) = realtime::throttle_limit_ms() else {
            return;
        };
        let mut cli = Cli::try_parse_from(["salias-comparison", "--realtime", "1", "--only", "openloop"]).unwrap();
        cli.ol_duration = Some(limit_ms as f64 / 1e3 + 0.5);
        let error = Plan::new(&cli).check_realtime().unwrap_err().to_string();
        assert!(
            error.contains("throttles real-time tasks") || error.contains("CAP_SYS_NICE"),
            "{error}"
        );
        let without = Cli::try_parse_from(["salias-comparison", "--only", "openloop"]).unwrap();
        assert!(
            Plan::new(&without).check_realtime().is_ok(),
            "nothing to check without --realtime"
        );
    }
}
