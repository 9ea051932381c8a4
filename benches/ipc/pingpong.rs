//! The latency section: ping-pong round trip / 2 over salias, alternating round by round
//! with the bare cache-line floor, the 64-byte message floor and the ring floor (the
//! message through a ring of salias's frames) between the same two cores. The parent is
//! the pinger, a child the ponger; every stamp is taken with the latency clock
//! (`support::clock::latency`).

use std::error::Error;
use std::time::Duration;

use salias::{Bytes, Channel, Config, Fifo, Mpsc, wait::BusySpin};
use support::barrier::Barrier;
use support::cores::{Side, core_for, pin};
use support::jsonl::JsonLines;
use support::records::System;
use support::role::Children;
use support::shm::ShmFile;
use support::state::bracketed;
use support::trips::{TripTimer, Trips};

use crate::msg64::Msg64;
use crate::report;
use crate::roles::{Child, ROLE, Task};

/// The watchdog's limit for one ping-pong run.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// Runs `rounds` of the floor, the message floor, the ring floor and salias, `pings` round
/// trips each, writes a record per run and prints the summary.
pub fn latency(rounds: usize, pings: u64, bytes: usize, out: &mut JsonLines) -> Result<(), Box<dyn Error>> {
    let cores = [core_for(Side::Publisher, 0), core_for(Side::Subscriber, 0)];
    let mut runs = Vec::new();
    for round in 0..rounds {
        let pid = std::process::id();
        let (floor, floor_state) = bracketed(cores, || {
            floor_round_trips(&format!("floor-{pid}-{round}"), pings, cores)
        });
        let (message_floor, message_floor_state) = bracketed(cores, || {
            message_floor_round_trips(&format!("msgfloor-{pid}-{round}"), pings, cores)
        });
        let (ring_floor, ring_floor_state) = bracketed(cores, || {
            ring_floor_round_trips(&format!("ringfloor-{pid}-{round}"), pings, cores)
        });
        let (salias, salias_state) = bracketed(cores, || {
            let name = format!("pingpong-{pid}-{round}");
            if bytes == size_of::<Msg64>() {
                salias_round_trips(&name, pings, cores)
            } else {
                raw_round_trips(&name, pings, bytes, cores)
            }
        });
        let run = report::LatencyRound {
            floor: Trips::of(floor?),
            message_floor: Trips::of(message_floor?),
            ring_floor: Trips::of(ring_floor?),
            salias: Trips::of(salias?),
        };
        for (system, trips, state) in [
            (System::Floor, &run.floor, floor_state),
            (System::MessageFloor, &run.message_floor, message_floor_state),
            (System::RingFloor, &run.ring_floor, ring_floor_state),
            (System::Salias, &run.salias, salias_state),
        ] {
            out.write(&report::pingpong_record(system, round, cores, trips, state))?;
        }
        runs.push(run);
    }
    report::print_latency(cores, pings, bytes, &runs);
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
    let children = start_ponger(
        name,
        &barrier,
        Task::Pong {
            pings,
            bytes: size_of::<Msg64>(),
        },
        cores,
    )?;
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

/// As `salias_round_trips`, with raw messages of `bytes` bytes, the first word the ping's
/// number.
fn raw_round_trips(name: &str, pings: u64, bytes: usize, cores: [usize; 2]) -> Result<Vec<u64>, Box<dyn Error>> {
    let config = |end: &str| Config::new(format!("{name}-{end}")).max_message_size(bytes);
    let ping = Channel::<Bytes, Fifo, Mpsc>::create(&config("ping"))?;
    let pong = Channel::<Bytes, Fifo, Mpsc>::create(&config("pong"))?;
    let mut outbound = ping.publisher()?;
    let mut inbound = pong.subscriber()?;
    inbound.set_wait_strategy(BusySpin);
    let barrier = Barrier::create(name)?;
    let children = start_ponger(name, &barrier, Task::Pong { pings, bytes }, cores)?;
    let mut message = vec![0u8; bytes];
    let mut timer = TripTimer::start(pings);
    for seq in 0..pings {
        message[..8].copy_from_slice(&seq.to_le_bytes());
        outbound.send(&message)?;
        let back = inbound.recv()?;
        assert_eq!(back[..8], seq.to_le_bytes(), "ping-pong out of step");
        drop(back);
        timer.lap(true);
    }
    children.wait_all(RUN_LIMIT)?;
    Ok(timer.into_trips())
}

fn floor_round_trips(name: &str, pings: u64, cores: [usize; 2]) -> Result<Vec<u64>, Box<dyn Error>> {
    let barrier = Barrier::create(name)?;
    let children = start_ponger(name, &barrier, Task::FloorPong { pings }, cores)?;
    let samples = support::floor::round_trips(barrier.slots(), 0, pings);
    children.wait_all(RUN_LIMIT)?;
    Ok(samples)
}

fn message_floor_round_trips(name: &str, pings: u64, cores: [usize; 2]) -> Result<Vec<u64>, Box<dyn Error>> {
    let barrier = Barrier::create(name)?;
    let children = start_ponger(name, &barrier, Task::MessageFloorPong { pings }, cores)?;
    let samples = support::message_floor::round_trips(barrier.slots(), 0, pings);
    children.wait_all(RUN_LIMIT)?;
    Ok(samples)
}

fn ring_floor_round_trips(name: &str, pings: u64, cores: [usize; 2]) -> Result<Vec<u64>, Box<dyn Error>> {
    let barrier = Barrier::create(name)?;
    let file = ShmFile::create(&format!("{name}.rings"), support::ring_floor::FILE_BYTES)?;
    let children = start_ponger(name, &barrier, Task::RingFloorPong { pings }, cores)?;
    let (ping, pong) = support::ring_floor::rings(&file);
    let samples = support::ring_floor::round_trips(ping, pong, pings);
    children.wait_all(RUN_LIMIT)?;
    Ok(samples)
}
