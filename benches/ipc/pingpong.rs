//! The latency section: ping-pong round trip / 2 over salias, alternating round by round
//! with the bare cache-line floor and the 64-byte message floor between the same two
//! cores. The parent is the pinger, a child the ponger; every stamp is taken with the
//! latency clock (`support::clock::latency`).

use std::error::Error;
use std::time::Duration;

use salias::{Channel, Config, Fifo, Mpsc, wait::BusySpin};
use support::barrier::Barrier;
use support::cores::{Side, core_for, pin};
use support::jsonl::JsonLines;
use support::records::System;
use support::role::Children;
use support::trips::{TripTimer, Trips};

use crate::msg64::Msg64;
use crate::report;
use crate::roles::{Child, ROLE, Task};

/// The watchdog's limit for one ping-pong run.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// Runs `rounds` of the floor, the message floor and salias, `pings` round trips each,
/// writes a record per run and prints the summary.
pub fn latency(rounds: usize, pings: u64, out: &mut JsonLines) -> Result<(), Box<dyn Error>> {
    let cores = [core_for(Side::Publisher, 0), core_for(Side::Subscriber, 0)];
    let mut runs = Vec::new();
    for round in 0..rounds {
        let pid = std::process::id();
        let run = report::LatencyRound {
            floor: Trips::of(floor_round_trips(&format!("floor-{pid}-{round}"), pings, cores)?),
            message_floor: Trips::of(message_floor_round_trips(
                &format!("msgfloor-{pid}-{round}"),
                pings,
                cores,
            )?),
            salias: Trips::of(salias_round_trips(&format!("pingpong-{pid}-{round}"), pings, cores)?),
        };
        for (system, trips) in [
            (System::Floor, &run.floor),
            (System::MessageFloor, &run.message_floor),
            (System::Salias, &run.salias),
        ] {
            out.write(&report::pingpong_record(system, round, cores, trips))?;
        }
        runs.push(run);
    }
    report::print_latency(cores, pings, &runs);
    Ok(())
}

/// Starts the ponger for run `name` on core `b`, pins this process to `a` and passes the
/// barrier with it.
fn start_ponger(name: &str, barrier: &Barrier, task: Task, [a, b]: [usize; 2]) -> Result<Children, Box<dyn Error>> {
    let child = Child {
        name: name.into(),
        core: b,
        task,
    };
    let mut children = Children::new();
    children.spawn(child.task.role(), &mut ROLE.command_with(child.task.role(), &child)?)?;
    pin(a)?;
    barrier.arrive_and_release(2, &mut children, RUN_LIMIT)?;
    Ok(children)
}

fn salias_round_trips(name: &str, pings: u64, cores: [usize; 2]) -> Result<Vec<u64>, Box<dyn Error>> {
    let ping = Channel::<Msg64, Fifo, Mpsc>::create(&Config::new(format!("{name}-ping")))?;
    let pong = Channel::<Msg64, Fifo, Mpsc>::create(&Config::new(format!("{name}-pong")))?;
    let mut outbound = ping.publisher()?;
    let mut inbound = pong.subscriber()?;
    inbound.set_wait_strategy(BusySpin);
    let barrier = Barrier::create(name)?;
    let children = start_ponger(name, &barrier, Task::Pong { pings }, cores)?;
    let mut timer = TripTimer::start(pings);
    for seq in 0..pings {
        outbound.send(&Msg64::new(0, seq))?;
        let back = inbound.recv()?;
        assert_eq!(back.seq, seq, "ping-pong out of step");
        drop(back);
        timer.lap(true);
    }
    children.wait_all(RUN_LIMIT)?;
    Ok(timer.into_trips())
}

fn floor_round_trips(name: &str, pings: u64, cores: [usize; 2]) -> Result<Vec<u64>, Box<dyn Error>> {
    let barrier = Barrier::create(name)?;
    let children = start_ponger(name, &barrier, Task::FloorPong { pings }, cores)?;
    let (ping, pong) = barrier.floor_line();
    let samples = support::floor::round_trips(ping, pong, 0, pings);
    children.wait_all(RUN_LIMIT)?;
    Ok(samples)
}

fn message_floor_round_trips(name: &str, pings: u64, cores: [usize; 2]) -> Result<Vec<u64>, Box<dyn Error>> {
    let barrier = Barrier::create(name)?;
    let children = start_ponger(name, &barrier, Task::MessageFloorPong { pings }, cores)?;
    let (ping, pong) = barrier.message_lines();
    let samples = support::message_floor::round_trips(ping, pong, 0, pings);
    children.wait_all(RUN_LIMIT)?;
    Ok(samples)
}
