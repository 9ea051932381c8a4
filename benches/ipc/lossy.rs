//! The lossy-subscriber section: a publisher and one tethered subscriber, alone and with a
//! sleeping lossy subscriber beside them (what the lossy one costs the publisher: nothing,
//! if publishers never wait for it), a publisher alone and with a process that joins with
//! history once a millisecond on the other core (what a history join costs the publisher),
//! and a publisher with only a lossy subscriber that receives as fast as it can (its own
//! receive rate, and how much it missed). All alternate round by round.

use std::error::Error;
use std::time::{Duration, Instant};

use salias::receive::Start;
use salias::{Config, FifoFanout, ReceiveError};
use serde::{Deserialize, Serialize};
use support::barrier::Barrier;
use support::clock::now_ns;
use support::cores::{Placement, Side};
use support::jsonl::JsonLines;
use support::records::{LossyRun, Receive, System, ThroughputBench, oversubscribed};
use support::role::{Children, report_json};
use support::stats::Spread;
use support::throughput::{Finished, Tally};

use crate::cli::Scale;
use crate::msg64::Msg64;
use crate::roles::Task;
use crate::setup::{Backoff, Kind, Setup};
use crate::throughput::start_child;

/// The watchdog's limit for one run.
const RUN_LIMIT: Duration = Duration::from_secs(600);
/// How long the sleeping lossy subscriber sleeps between drains.
const NAP: Duration = Duration::from_millis(1);

/// What the lossy subscriber of a run does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lossy {
    /// There is none.
    None,
    /// Wakes once a millisecond and drains what it finds.
    Sleeping,
    /// Receives as fast as it can.
    KeepingUp,
    /// Once a millisecond joins lossy with history (`Start::Oldest`), receives a few
    /// messages and leaves.
    JoiningOldest,
    /// The same, joining at the last 16 messages (`Start::Last(16)`): the join without
    /// reading a ring's worth of history.
    JoiningLast16,
    /// Once a millisecond joins tethered with history (`Start::Oldest`), reads until it
    /// has caught up with the publisher and leaves.
    JoiningTethered,
}

impl Lossy {
    fn name(self) -> &'static str {
        match self {
            Lossy::None => "none",
            Lossy::Sleeping => "sleeping",
            Lossy::KeepingUp => "keeping-up",
            Lossy::JoiningOldest => "lossy history joiner",
            Lossy::JoiningLast16 => "lossy last-16 joiner",
            Lossy::JoiningTethered => "tethered history joiner",
        }
    }
}

/// A run: a tethered subscriber or not, and what the lossy one does.
#[derive(Clone, Copy, Debug)]
struct Variant {
    tethered: bool,
    lossy: Lossy,
}

impl Variant {
    fn label(self) -> String {
        match (self.tethered, self.lossy) {
            (true, Lossy::None) => "1 tethered".into(),
            (false, Lossy::None) => "publisher alone".into(),
            (false, joiner @ (Lossy::JoiningOldest | Lossy::JoiningLast16 | Lossy::JoiningTethered)) => {
                format!("publisher + a {} (1/ms)", joiner.name())
            }
            (true, lossy) => format!("1 tethered + {} lossy", lossy.name()),
            (false, lossy) => format!("{} lossy only", lossy.name()),
        }
    }

    /// Whether the second subscriber is a history joiner (it reports joins, not messages).
    fn joins(self) -> bool {
        matches!(
            self.lossy,
            Lossy::JoiningOldest | Lossy::JoiningLast16 | Lossy::JoiningTethered
        )
    }

    /// Processes that spin while the run is timed (a sleeping one does not).
    fn busy(self) -> u32 {
        1 + u32::from(self.tethered) + u32::from(self.lossy == Lossy::KeepingUp)
    }
}

const VARIANTS: [Variant; 7] = [
    Variant {
        tethered: true,
        lossy: Lossy::None,
    },
    Variant {
        tethered: true,
        lossy: Lossy::Sleeping,
    },
    // What a history join costs the publisher: on a machine of two cores the joiner gets
    // the other one to itself only without a tethered subscriber.
    Variant {
        tethered: false,
        lossy: Lossy::None,
    },
    Variant {
        tethered: false,
        lossy: Lossy::JoiningOldest,
    },
    Variant {
        tethered: false,
        lossy: Lossy::JoiningLast16,
    },
    Variant {
        tethered: false,
        lossy: Lossy::JoiningTethered,
    },
    Variant {
        tethered: false,
        lossy: Lossy::KeepingUp,
    },
];

/// What a lossy subscriber child reports.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct LossyFinished {
    elapsed_ns: u64,
    received: u64,
    missed: u64,
}

/// The lossy subscriber's role: receives (copies, each checked) until every message was
/// received or counted missed.
pub fn run_lossy(name: &str, setup: &Setup, lossy: Lossy) {
    match lossy {
        Lossy::JoiningOldest => return run_joiner(name, setup, false, Start::Oldest),
        Lossy::JoiningLast16 => return run_joiner(name, setup, false, Start::Last(16)),
        Lossy::JoiningTethered => return run_joiner(name, setup, true, Start::Oldest),
        _ => {}
    }
    let channel = FifoFanout::<Msg64>::connect(name).unwrap();
    let mut subscriber = channel.lossy_subscriber().unwrap();
    let barrier = Barrier::open(name).unwrap_or_else(|e| panic!("{e}"));
    barrier.arrive_and_wait();
    let started = now_ns();
    let mut next = 0;
    while next < setup.messages {
        match subscriber.try_recv() {
            Ok(Some(m)) => {
                assert!(m.seq >= next && m.words[5] == m.seq ^ m.producer, "torn or reordered");
                assert_eq!(m.missed_before(), m.seq - next, "a miss not counted");
                next = m.seq + 1;
            }
            Ok(None) if lossy == Lossy::Sleeping => std::thread::sleep(NAP),
            Ok(None) => std::hint::spin_loop(),
            Err(ReceiveError::TimedOut) => {}
            Err(e) => panic!("{e}"),
        }
    }
    report_json(&LossyFinished {
        elapsed_ns: now_ns() - started,
        received: subscriber.received(),
        missed: subscriber.missed(),
    });
}

/// The joiner's role: once a millisecond, until the publisher's last message is its latest,
/// joins with history from `start`, checks what it reads and leaves: lossy, after a few messages;
/// tethered, once it has caught up (a tethered joiner holds the publisher back from its
/// start until it has read its history). Reports its joins as `received`.
fn run_joiner(name: &str, setup: &Setup, tethered: bool, start: Start) {
    const LOOK: usize = 16;
    let channel = FifoFanout::<Msg64>::connect(name).unwrap();
    let barrier = Barrier::open(name).unwrap_or_else(|e| panic!("{e}"));
    barrier.arrive_and_wait();
    let started = now_ns();
    let check = |m: &Msg64| assert!(m.words[5] == m.seq ^ m.producer, "torn");
    let mut joins = 0u64;
    while channel
        .latest(0)
        .unwrap()
        .is_none_or(|last| last.seq + 1 < setup.messages)
    {
        std::thread::sleep(NAP);
        if tethered {
            let mut late = channel.subscriber_from(start).unwrap();
            while let Some(m) = late.try_recv().unwrap() {
                check(&m);
            }
        } else {
            let mut late = channel.lossy_subscriber_from(start).unwrap();
            for _ in 0..LOOK {
                if let Some(m) = late.try_recv().unwrap() {
                    check(&m);
                }
            }
        }
        joins += 1;
    }
    report_json(&LossyFinished {
        elapsed_ns: now_ns() - started,
        received: joins,
        missed: 0,
    });
}

/// Runs the section: every variant once per round, a record per run, then the summary.
pub fn section(scale: &Scale, rounds: usize, started: Instant, out: &mut JsonLines) -> Result<(), Box<dyn Error>> {
    let setup = Setup {
        bench: ThroughputBench::Throughput,
        kind: Kind::FifoFanout,
        publishers: 1,
        subscribers: 1,
        ring: scale.rings[0],
        batch: 1,
        messages: scale.messages,
        size: size_of::<Msg64>(),
        backoff: Backoff::Spin,
        receive: Receive::Drain,
        huge_pages: false,
    };
    let mut results: Vec<Vec<LossyRun>> = VARIANTS.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (&variant, runs) in VARIANTS.iter().zip(results.iter_mut()) {
            let run =
                one_run(&setup, variant, round).map_err(|e| format!("{}, round {round}: {e}", variant.label()))?;
            out.write(&run)?;
            runs.push(run);
        }
        eprintln!("lossy round {}/{rounds} done after {:?}", round + 1, started.elapsed());
    }
    print(&setup, &results);
    Ok(())
}

fn one_run(setup: &Setup, variant: Variant, round: usize) -> Result<LossyRun, Box<dyn Error>> {
    let name = format!("bench-lossy-{}-{round}-{}", std::process::id(), now_ns() % 1_000_000);
    let _channel = FifoFanout::<Msg64>::create(&Config::new(&name).capacity(setup.ring).subscribers(2))?;
    let barrier = Barrier::create(&name)?;
    let (mut children, mut placement) = (Children::new(), Placement::new());
    let mut start = |side, index, task| start_child(&mut children, &mut placement, &name, side, index, task);
    let tethered = u32::from(variant.tethered);
    if variant.tethered {
        start(Side::Subscriber, 0, Task::Subscriber { setup: setup.clone() })?;
    }
    if variant.lossy != Lossy::None {
        let (setup, lossy) = (setup.clone(), variant.lossy);
        start(Side::Subscriber, tethered as usize, Task::Lossy { setup, lossy })?;
    }
    let task = Task::Publisher {
        index: 0,
        setup: setup.clone(),
    };
    start(Side::Publisher, 0, task)?;
    let parties = 1 + tethered + u32::from(variant.lossy != Lossy::None);
    barrier.release(parties as u64, &mut children, RUN_LIMIT)?;
    let (mut tally, mut lossy) = (Tally::default(), None);
    for output in children.wait_all(RUN_LIMIT)? {
        match output.json_reports::<Finished>() {
            Ok(reports) => reports.iter().for_each(|report| tally.add(report)),
            Err(_) => lossy = output.json_reports::<LossyFinished>()?.first().copied(),
        }
    }
    let rates = tally.rates(setup.messages, 1, tethered)?;
    let per_s = |count: u64, ns: u64| count as f64 / (ns.max(1) as f64 / 1e9);
    Ok(LossyRun {
        system: System::Salias,
        round,
        label: variant.label(),
        kind: Kind::FifoFanout.name().into(),
        tethered,
        lossy: variant.lossy.name().into(),
        ring_bytes: setup.ring as u64,
        message_bytes: setup.size as u64,
        messages_per_publisher: setup.messages,
        published_per_s: rates.published_per_s.round(),
        tethered_received_per_s: variant.tethered.then_some(rates.delivered_per_s.round()),
        // The joiner reports joins, not messages.
        lossy_received_per_s: lossy
            .filter(|_| !variant.joins())
            .map(|l| per_s(l.received, l.elapsed_ns).round()),
        lossy_missed_fraction: lossy
            .filter(|_| !variant.joins())
            .map(|l| l.missed as f64 / setup.messages as f64),
        refused_fraction: rates.refused_fraction,
        placement: placement.to_string(),
        busy_processes: variant.busy(),
        oversubscribed: oversubscribed(variant.busy()),
    })
}

/// The summary: per variant, the median [min, max] over the rounds.
fn print(setup: &Setup, results: &[Vec<LossyRun>]) {
    println!(
        "\nlossy subscribers, FifoFanout 64 B, ring {} KiB: {:>26} {:>26} {:>26} {:>9} {:>8}",
        setup.ring >> 10,
        "published M/s med [min,max]",
        "tethered M/s med [min,max]",
        "lossy M/s med [min,max]",
        "missed",
        "refused"
    );
    let spread = |runs: &[LossyRun], f: fn(&LossyRun) -> Option<f64>| {
        let values: Vec<f64> = runs.iter().filter_map(f).collect();
        Spread::of(&values).map_or("-".to_string(), |s| {
            format!("{:.2} [{:.2},{:.2}]", s.median, s.min, s.max)
        })
    };
    for runs in results {
        let Some(first) = runs.first() else { continue };
        let missed: Vec<f64> = runs.iter().filter_map(|r| r.lossy_missed_fraction).collect();
        let refused: Vec<f64> = runs.iter().map(|r| r.refused_fraction).collect();
        let pct = |values: &[f64]| Spread::of(values).map_or("-".to_string(), |s| format!("{:.1}%", s.median * 100.0));
        let marker = if first.oversubscribed { "  OVERSUBSCRIBED" } else { "" };
        println!(
            "{:<50} {:>26} {:>26} {:>26} {:>9} {:>8}  {}{marker}",
            first.label,
            spread(runs, |r| Some(r.published_per_s / 1e6)),
            spread(runs, |r| r.tethered_received_per_s.map(|v| v / 1e6)),
            spread(runs, |r| r.lossy_received_per_s.map(|v| v / 1e6)),
            pct(&missed),
            pct(&refused),
            first.placement,
        );
    }
}
