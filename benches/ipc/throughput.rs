//! The parent's side of a throughput run (throughput, size sweep and stress sections):
//! create the channel and the barrier, start the roles, release them together, collect
//! and check their reports; and the rounds, every setup once per round.

use std::error::Error;
use std::time::{Duration, Instant};

use salias::config::HugePages;
use salias::{Bytes, Channel, Config, Fanout, Fifo, Mpsc, Ordered};
use support::barrier::Barrier;
use support::cores::{Placement, Side, core_for};
use support::jsonl::JsonLines;
use support::role::Children;
use support::state::{Bracket, SpeedProbe};
use support::throughput::{Finished, Tally};

use crate::msg64::Msg64;
use crate::report;
use crate::roles::{Child, ROLE, Task};
use crate::setup::{Kind, Setup};

/// The watchdog's limit for one run, spawn to last report: a hang fails the benchmark.
const RUN_LIMIT: Duration = Duration::from_secs(600);

/// One run's result.
pub struct Run {
    pub published_per_s: f64,
    pub delivered_per_s: f64,
    /// Refused offers over all offers.
    pub refused: f64,
    pub placement: Placement,
    /// The speed state around the run.
    pub state: Option<SpeedProbe>,
    /// Messages per `drain` call that found any (`Finished::Subscriber::drains`).
    pub messages_per_drain: Option<f64>,
}

/// Runs every setup once per round, in the same order each round (A B C … A B C …), and
/// writes one record per run.
pub fn rounds(
    setups: &[Setup],
    rounds: usize,
    what: &str,
    started: Instant,
    out: &mut JsonLines,
) -> Result<Vec<Vec<Run>>, Box<dyn Error>> {
    let mut results: Vec<Vec<Run>> = setups.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (setup, runs) in setups.iter().zip(results.iter_mut()) {
            let run = throughput_run(setup, round).map_err(|e| format!("{}, round {round}: {e}", setup.label()))?;
            out.write(&report::throughput_record(setup, &run, round))?;
            runs.push(run);
        }
        eprintln!("{what}round {}/{rounds} done after {:?}", round + 1, started.elapsed());
    }
    Ok(results)
}

/// The channel of a run, created by the parent and held until its children are done.
fn create_channel(name: &str, setup: &Setup) -> Result<Box<dyn std::any::Any>, Box<dyn Error>> {
    let config = Config::new(name)
        .capacity(setup.ring)
        .publishers(setup.publishers)
        .subscribers(setup.subscribers);
    let config = if setup.huge_pages {
        config.huge_pages(HugePages::Size2MB)
    } else {
        config
    };
    Ok(match setup.kind {
        Kind::RawFifoMpsc => Box::new(Channel::<Bytes, Fifo, Mpsc>::create(
            &config.max_message_size(setup.size.max(1)),
        )?),
        Kind::FifoMpsc => Box::new(Channel::<Msg64, Fifo, Mpsc>::create(&config)?),
        Kind::FifoFanout => Box::new(Channel::<Msg64, Fifo, Fanout>::create(&config)?),
        Kind::OrderedMpsc => Box::new(Channel::<Msg64, Ordered, Mpsc>::create(&config)?),
        Kind::OrderedFanout => Box::new(Channel::<Msg64, Ordered, Fanout>::create(&config)?),
        Kind::WriteFloor => Box::new(crate::write_floor::create(name, setup)?),
    })
}

/// Starts `task` as a child of run `name`, named and pinned as `side`'s `index`.
pub fn start_child(
    children: &mut Children,
    placement: &mut Placement,
    name: &str,
    side: Side,
    index: usize,
    task: Task,
) -> Result<(), Box<dyn Error>> {
    let core = placement.place(side, index);
    let child = Child {
        name: name.to_owned(),
        core,
        task,
    };
    let mut command = ROLE.command_with(child.task.role(), &child)?;
    children.spawn(format!("{}{index}", side.letter()), &mut command)?;
    Ok(())
}

fn throughput_run(setup: &Setup, round: usize) -> Result<Run, Box<dyn Error>> {
    let name = format!(
        "bench-{}-{round}-{}",
        std::process::id(),
        support::clock::now_ns() % 1_000_000
    );
    let _channel = create_channel(&name, setup)?;
    let barrier = Barrier::create(&name)?;
    let bracket = Bracket::open([core_for(Side::Publisher, 0), core_for(Side::Subscriber, 0)]);
    let mut children = Children::new();
    let mut placement = Placement::new();
    let mut start = |side, index, task| start_child(&mut children, &mut placement, &name, side, index, task);
    for s in 0..setup.subscribers as usize {
        start(Side::Subscriber, s, Task::Subscriber { setup: setup.clone() })?;
    }
    for p in 0..setup.publishers as usize {
        let task = Task::Publisher {
            index: p as u64,
            setup: setup.clone(),
        };
        start(Side::Publisher, p, task)?;
    }
    barrier.release(setup.busy_processes() as u64, &mut children, RUN_LIMIT)?;
    let mut tally = Tally::default();
    for output in children.wait_all(RUN_LIMIT)? {
        for report in output.json_reports::<Finished>()? {
            tally.add(&report);
        }
    }
    let state = bracket.close();
    let rates = tally.rates(setup.messages, setup.publishers, setup.subscribers)?;
    // The write floor delivers nothing: its rate is its writes.
    let delivered_per_s = if setup.kind == Kind::WriteFloor {
        rates.published_per_s
    } else {
        rates.delivered_per_s
    };
    Ok(Run {
        published_per_s: rates.published_per_s,
        delivered_per_s,
        refused: rates.refused_fraction,
        placement,
        state,
        messages_per_drain: rates.messages_per_drain,
    })
}
