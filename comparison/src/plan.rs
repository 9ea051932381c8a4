//! What one invocation runs: the command line's flags resolved into rounds, sizes and the
//! lists of setups and systems, in the order they alternate.

use support::cores::cores;
use support::realtime::{self, Policy, Realtime, RealtimeError};
use support::records::System;

use crate::cli::{Cli, Part, SystemChoice};
use crate::setup::{Api, Setup, VARIANTS as WAKE_VARIANTS, Variant, WakePlan};

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
    /// Only the headline grid runs (`--headline`).
    pub headline: bool,
    /// `--headline --allow-oversubscribed` on too few cores: every record is marked.
    pub marked_oversubscribed: bool,
    /// Aeron's term length of the default run's throughput and open loop.
    pub aeron_term: u64,
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
    /// The throughput subscribers' pauses after a poll that came back short.
    pub subscriber_pauses: u32,
    /// Open-loop systems with their buffer (as `Setup::param`).
    pub openloop_systems: Vec<(System, u64)>,
    pub latency_systems: Vec<System>,
}

/// The fewest cores the headline grid fits on: 2P2S spins two publishers and two
/// subscribers.
pub const HEADLINE_CORES: usize = 4;
/// The headline grid's rings and terms: 1, 4 and 64 MiB.
pub const HEADLINE_SIZES: [u64; 3] = [1 << 20, 4 << 20, 64 << 20];
/// The headline grid's shapes: (publishers, subscribers).
pub const HEADLINE_SHAPES: [(u32, u32); 2] = [(2, 1), (2, 2)];

/// Whether the headline grid's records must be marked oversubscribed on a machine of
/// `cores` cores: no when it has enough, yes when it has not and `allow` (the user's
/// `--allow-oversubscribed`) says run anyway, else the error that says so.
pub fn headline_marked(cores: usize, allow: bool) -> Result<bool, PlanError> {
    match (cores >= HEADLINE_CORES, allow) {
        (true, _) => Ok(false),
        (false, true) => Ok(true),
        (false, false) => Err(PlanError::TooFewCores { cores }),
    }
}

impl Plan {
    /// The plan of `cli` on this machine.
    pub fn new(cli: &Cli) -> Result<Plan, PlanError> {
        Plan::for_cores(cli, cores())
    }

    /// The plan of `cli` on a machine of `cores` cores.
    pub fn for_cores(cli: &Cli, cores: usize) -> Result<Plan, PlanError> {
        let marked_oversubscribed = if cli.headline {
            headline_marked(cores, cli.allow_oversubscribed)?
        } else {
            false
        };
        let pick = |full, quick, smoke| by_mode(cli, full, quick, smoke);
        let short = cli.quick || cli.smoke;
        let default_rounds = if cli.headline { pick(5, 5, 1) } else { pick(5, 3, 1) };
        let rounds = cli.rounds.unwrap_or(default_rounds) as usize;
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
        let two_publishers = cores >= 3 || cli.two_publishers;
        let aeron_term = cli.aeron_term;
        let wanted = |system: System| {
            let choice = match system {
                System::Salias => SystemChoice::Salias,
                System::Aeron => SystemChoice::Aeron,
                System::Iceoryx2 => SystemChoice::Iceoryx2,
                System::SpscFloor | System::Floor | System::MessageFloor | System::RingFloor | System::WriteFloor => {
                    SystemChoice::Floor
                }
            };
            (choice != SystemChoice::Aeron || !cli.no_aeron)
                && cli.systems.as_ref().is_none_or(|list| list.contains(&choice))
        };

        let mut setups = Vec::new();
        if cli.headline {
            for (publishers, subscribers) in HEADLINE_SHAPES {
                for size in HEADLINE_SIZES {
                    for (system, api) in [(System::Salias, Api::Offer), (System::Aeron, Api::TryClaim)] {
                        let setup = Setup::new(system, api, publishers, messages, size);
                        setups.push(setup.with_subscribers(subscribers).headline(marked_oversubscribed));
                    }
                }
            }
        }
        let mut add = |system, api, publishers, param| {
            if wanted(system) && !cli.headline {
                setups.push(Setup::new(system, api, publishers, messages, param));
            }
        };
        add(System::Salias, Api::Offer, 1, salias_ring);
        add(System::Aeron, Api::TryClaim, 1, aeron_term);
        add(System::Iceoryx2, Api::LoanUninit, 1, ice_buffer);
        add(System::Salias, Api::OfferBatch, 1, salias_ring);
        add(System::Iceoryx2, Api::LoanUninitBlock, 1, ice_buffer);
        add(System::Aeron, Api::Offer, 1, aeron_term);
        add(System::SpscFloor, Api::Batch, 1, salias_ring);
        // The floor moving salias's frame bytes per message: what the frame header costs
        // the machine, apart from what salias does with it.
        add(System::SpscFloor, Api::FrameBatch, 1, salias_ring);
        if !short {
            // salias with larger rings: 4 MiB, and as large as Aeron's term (Aeron's IPC
            // window is term / 2); the SPSC floor with each, for what the ring size costs
            // the machine itself
            let mut larger = vec![4 << 20, aeron_term];
            larger.retain(|&ring| ring > salias_ring);
            larger.dedup();
            for ring in larger {
                add(System::Salias, Api::Offer, 1, ring);
                add(System::SpscFloor, Api::Batch, 1, ring);
            }
        }
        if two_publishers {
            add(System::Salias, Api::Offer, 2, salias_ring);
            add(System::Aeron, Api::TryClaim, 2, aeron_term);
            add(System::Iceoryx2, Api::LoanUninit, 2, ice_buffer);
            add(System::Salias, Api::OfferBatch, 2, salias_ring);
        }
        // Only the throughput subscribers pause: the open loop's and the ping-pong's
        // subscribers are timed per message.
        let setups: Vec<Setup> = setups
            .into_iter()
            .map(|setup| setup.with_subscriber_pauses(cli.subscriber_pauses))
            .collect();
        let mut openloop_systems = vec![
            (System::Salias, salias_ring),
            (System::Aeron, aeron_term),
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
        // The headline grid is throughput runs only.
        let part = |p| cli.only.is_none_or(|only| only == p) && (!cli.headline || p == Part::Throughput);
        Ok(Plan {
            rounds,
            throughput: part(Part::Throughput),
            latency: part(Part::Latency),
            openloop: part(Part::Openloop),
            wake: part(Part::Wake),
            wake_plan,
            wake_variants,
            two_publishers,
            headline: cli.headline,
            marked_oversubscribed,
            aeron_term,
            // The wake part has no Aeron row: its driver starts only for the others.
            aeron: wanted(System::Aeron) && [Part::Throughput, Part::Latency, Part::Openloop].into_iter().any(part),
            messages,
            pings,
            salias_ring,
            ice_buffer,
            subscriber_pauses: cli.subscriber_pauses,
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
        })
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
    /// `--headline` on fewer cores than its busy processes, without `--allow-oversubscribed`.
    TooFewCores { cores: usize },
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
            PlanError::TooFewCores { cores } => write!(
                f,
                "--headline needs at least {HEADLINE_CORES} cores (2P2S spins two publishers and two subscribers), \
                 and this machine has {cores}; run it on a larger machine, or add \
                 --allow-oversubscribed to run it anyway with every record marked oversubscribed"
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
    use super::tests_support::cli;
    use super::*;
    use crate::transports::aeron::AERON_TERM_BYTES;

    fn plan(args: &[&str]) -> Plan {
        Plan::for_cores(&cli(args), 2).unwrap()
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
    fn subscriber_pauses_reach_every_throughput_setup_and_its_label() {
        let plain = plan(&["--quick"]);
        assert!(plain.setups.iter().all(|s| s.subscriber_pauses == 0));
        assert!(plain.setups.iter().all(|s| !s.label().contains("pauses")));
        let pausing = plan(&["--quick", "--subscriber-pauses", "64"]);
        assert_eq!(pausing.setups.len(), plain.setups.len());
        for setup in &pausing.setups {
            assert_eq!(setup.params("run", 1, 0, "", 0).subscriber_pauses, 64);
            assert!(setup.label().ends_with(", subscriber pauses 64"), "{}", setup.label());
        }
        assert!(
            pausing.setups.iter().any(|s| s.system == System::SpscFloor),
            "the floor pauses too"
        );
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
mod headline_tests {
    use super::tests_support::cli;
    use super::*;
    use support::records::ThroughputBench;

    #[test]
    fn fewer_than_four_cores_are_refused_with_the_way_out() {
        for cores in [1, 2, 3] {
            let error = Plan::for_cores(&cli(&["--headline"]), cores)
                .err()
                .expect("refused")
                .to_string();
            assert!(error.contains("at least 4 cores"), "{error}");
            assert!(error.contains(&format!("has {cores}")), "{error}");
            assert!(error.contains("--allow-oversubscribed"), "{error}");
        }
    }

    #[test]
    fn the_override_marks_every_record_oversubscribed() {
        let plan = Plan::for_cores(&cli(&["--headline", "--allow-oversubscribed"]), 2).unwrap();
        assert!(plan.marked_oversubscribed && plan.headline);
        assert!(
            plan.setups
                .iter()
                .all(|s| s.marked_oversubscribed && s.bench == ThroughputBench::Headline)
        );
        let roomy = Plan::for_cores(&cli(&["--headline", "--allow-oversubscribed"]), 8).unwrap();
        assert!(
            roomy.setups.iter().all(|s| !s.marked_oversubscribed),
            "enough cores: nothing to mark"
        );
        assert_eq!(headline_marked(4, false).ok(), Some(false));
    }

    #[test]
    fn the_grid_pairs_salias_offer_with_aeron_try_claim_at_every_shape_and_size() {
        let plan = Plan::for_cores(&cli(&["--headline"]), 4).unwrap();
        assert_eq!(plan.rounds, 5);
        assert!(plan.throughput && !plan.latency && !plan.openloop && !plan.wake && plan.aeron);
        let grid: Vec<_> = plan
            .setups
            .iter()
            .map(|s| (s.system, s.api, s.publishers, s.subscribers, s.param))
            .collect();
        let mut expected = Vec::new();
        for (p, s) in HEADLINE_SHAPES {
            for size in HEADLINE_SIZES {
                expected.push((System::Salias, Api::Offer, p, s, size));
                expected.push((System::Aeron, Api::TryClaim, p, s, size));
            }
        }
        assert_eq!(grid, expected);
        assert!(grid.iter().any(|g| g.3 == 2) && grid.iter().all(|g| g.2 == 2));
        let smoke = Plan::for_cores(&cli(&["--headline", "--smoke"]), 4).unwrap();
        assert_eq!((smoke.rounds, smoke.messages), (1, 20_000));
        assert_eq!(Plan::for_cores(&cli(&["--headline", "--quick"]), 4).unwrap().rounds, 5);
    }

    #[test]
    fn the_default_run_keeps_its_setups_and_takes_a_term_length() {
        let default = Plan::for_cores(&cli(&[]), 2).unwrap();
        assert!(!default.headline && default.setups.iter().all(|s| s.subscribers == 1));
        assert!(default.setups.iter().all(|s| s.bench == ThroughputBench::Throughput));
        let aeron: Vec<_> = default.setups.iter().filter(|s| s.system == System::Aeron).collect();
        assert!(!aeron.is_empty() && aeron.iter().all(|s| s.param == 64 << 20));
        let floor_rings: Vec<u64> = default
            .setups
            .iter()
            .filter(|s| s.system == System::SpscFloor && s.api == Api::Batch)
            .map(|s| s.param)
            .collect();
        assert_eq!(
            floor_rings,
            [1 << 20, 4 << 20, 64 << 20],
            "the SPSC floor at every ring salias runs"
        );
        let short = Plan::for_cores(&cli(&["--aeron-term", "1048576"]), 2).unwrap();
        assert!(
            short
                .setups
                .iter()
                .filter(|s| s.system == System::Aeron)
                .all(|s| s.param == 1 << 20)
        );
        assert!(short.openloop_systems.contains(&(System::Aeron, 1 << 20)));
    }
}

#[cfg(test)]
mod tests_support {
    use super::*;
    use clap::Parser;

    pub fn cli(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("salias-comparison").chain(args.iter().copied())).unwrap()
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
        let error = Plan::new(&cli).unwrap().check_realtime().unwrap_err().to_string();
        assert!(
            error.contains("throttles real-time tasks") || error.contains("CAP_SYS_NICE"),
            "{error}"
        );
        let without = Cli::try_parse_from(["salias-comparison", "--only", "openloop"]).unwrap();
        assert!(
            Plan::new(&without).unwrap().check_realtime().is_ok(),
            "nothing to check without --realtime"
        );
    }
}
