//! One run of one row: the parent is the publisher, pinned to its core; the receiver a
//! child on the other. Each message follows a random gap after the receiver acknowledged
//! the one before, so the receiver is asleep when it is committed. Then the receiver
//! idles while its CPU time is read from /proc, and a last message stops it.

use std::error::Error;
use std::time::Duration;

use salias::{Config, FifoMpsc, Publisher};
use support::barrier::Barrier;
use support::cores::pin;
use support::cpu::IdleCpu;
use support::role::{Children, RoleError};
use support::wake::{Acks, Gaps, STOP};

use crate::cli::Scale;
use crate::receiver::{Params, ROLE, Report};
use crate::rows::Row;
use crate::stamp::Stamp;
use crate::sys::{Fifo, FifoDir};
use crate::words::Words;

/// The watchdog's limit for one run.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// What one run measured.
pub struct Run {
    pub report: Report,
    /// System calls the publisher made to wake the receiver (the prototypes only).
    pub publisher_wakes: Option<u64>,
    pub idle: IdleCpu,
}

/// The publisher's and the receiver's cores.
pub const CORES: [usize; 2] = [0, 1];

pub fn run(row: Row, name: &str, scale: &Scale, seed: u64) -> Result<Run, Box<dyn Error>> {
    let channel = FifoMpsc::<Stamp>::create(&Config::new(name))?;
    let mut publisher = channel.publisher()?;
    let barrier = Barrier::create(name)?;
    let acks = Acks::create(name)?;
    let words = Words::create(name)?;
    let dir = match row {
        Row::Fifo => Some(FifoDir::create(name)?),
        _ => None,
    };
    let fifo_path = dir.as_ref().map(|d| d.fifo("slot-0")).transpose()?;
    let params = Params {
        name: name.into(),
        core: CORES[1],
        row,
        fifo: fifo_path.clone(),
    };
    let mut children = Children::new();
    children.spawn("receiver", &mut ROLE.command_with("receiver", &params)?)?;
    pin(CORES[0])?;
    barrier.arrive_and_release(2, &mut children, RUN_LIMIT)?;
    // The receiver opened its end before the barrier.
    let fifo = fifo_path.as_deref().map(Fifo::writer).transpose()?;
    let mut wakes = 0u64;
    let mut send = |publisher: &mut Publisher<Stamp>, seq: u64| -> Result<(), Box<dyn Error>> {
        let sent_ns = support::clock::now_ns();
        publisher.send(&Stamp { seq, sent_ns })?;
        if row.prototype() && words.take_wake() {
            wakes += 1;
            match &fifo {
                Some(fifo) => fifo.signal()?,
                None => wake_watcher(&words),
            }
        }
        Ok(())
    };
    let mut gaps = Gaps::new(seed);
    let mut alive = || children.check_running().map_err(|e: RoleError| e.to_string());
    for seq in 0..scale.messages {
        acks.wait_ack(seq, RUN_LIMIT, &mut alive)?;
        std::thread::sleep(gaps.next_gap());
        send(&mut publisher, seq)?;
    }
    acks.wait_ack(scale.messages, RUN_LIMIT, &mut alive)?;
    // The idle interval starts as the receiver goes back to waiting: it includes a
    // spinning strategy's spin.
    let idle = IdleCpu::measure(acks.pid(), Duration::from_millis(scale.idle_ms))?;
    send(&mut publisher, STOP)?;
    let outputs = children.wait_all(RUN_LIMIT)?;
    let report: Report = serde_json::from_str(
        outputs[0]
            .reports()
            .next()
            .ok_or("the receiver ended without reporting")?,
    )?;
    if report.wake_ns.len() as u64 + report.not_slept.unwrap_or(0) != scale.messages {
        return Err(format!("the receiver accounted for other than {} messages", scale.messages).into());
    }
    Ok(Run {
        report,
        publisher_wakes: row.prototype().then_some(wakes),
        idle,
    })
}

/// Design A's publisher side: moves the futex word, wakes whoever waits on it.
fn wake_watcher(words: &Words) {
    // SYNC POINT wake (publisher side): pairs with the watcher's Acquire load.
    words.seq().fetch_add(1, std::sync::atomic::Ordering::Release);
    crate::sys::futex_wake(words.seq());
}
