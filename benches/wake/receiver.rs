//! The receiving process: connects, waits for each message the way its row says, stamps
//! the moment its wait returned, acknowledges the message, and at the end reports every
//! latency to the parent.

use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use salias::{FifoMpsc, Park, Subscriber, WaitStrategy};
use serde::{Deserialize, Serialize};
use support::barrier::Barrier;
use support::clock::now_ns;
use support::role::{Role, report_json};
use support::wake::{Acks, STOP};

use crate::rows::Row;
use crate::stamp::Stamp;
use crate::sys::{Epoll, EventFd, Fifo, futex_wait};
use crate::words::Words;

/// The environment variable that names a child's role.
pub const ROLE: Role = Role::new("SALIAS_WAKE_ROLE");

/// The receiver's parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Params {
    pub name: String,
    pub core: usize,
    pub row: Row,
    /// Design B's FIFO.
    pub fifo: Option<PathBuf>,
}

/// What the receiver reports at the end.
#[derive(Debug, Serialize, Deserialize)]
pub struct Report {
    /// Commit to woken receiver, ns, per message whose receiver slept.
    pub wake_ns: Vec<u64>,
    /// Messages found before sleeping; `None` where `recv` does not tell.
    pub not_slept: Option<u64>,
}

type Sub = Subscriber<Stamp, salias::Fifo, salias::Mpsc>;

/// Sleeps in the futex on every idle call: no spin, no yield.
struct ParkAtOnce;

impl WaitStrategy for ParkAtOnce {
    fn wait(&mut self, _idle: u32, park: &mut Park<'_>) {
        // Longer than `SHORT_PARK`: the sleep that takes the barrier and is always woken.
        park.park(Duration::from_millis(100));
    }
}

/// The child's entry point; a failure panics, which fails the run.
pub fn run() {
    let params: Params = ROLE.params().unwrap_or_else(|e| panic!("{e}"));
    support::cores::pin(params.core).unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = receive(&params) {
        panic!("receiver of {}: {e}", params.name);
    }
}

fn receive(params: &Params) -> Result<(), Box<dyn Error>> {
    let channel = FifoMpsc::<Stamp>::connect(&params.name)?;
    let mut subscriber = channel.subscriber()?;
    let acks = Acks::open(&params.name)?;
    acks.set_pid(std::process::id());
    let words = Arc::new(Words::open(&params.name)?);
    let barrier = Barrier::open(&params.name)?;
    let report = match params.row {
        Row::RecvAdaptive => {
            barrier.arrive_and_wait();
            by_recv(&mut subscriber, &acks)?
        }
        Row::RecvPark => {
            subscriber.set_wait_strategy(ParkAtOnce);
            barrier.arrive_and_wait();
            by_recv(&mut subscriber, &acks)?
        }
        Row::WatcherEventfd => {
            let eventfd = Arc::new(EventFd::new()?);
            spawn_watcher(Arc::clone(&words), Arc::clone(&eventfd));
            let epoll = Epoll::watching(eventfd.raw())?;
            barrier.arrive_and_wait();
            by_epoll(&mut subscriber, &acks, &words, &epoll, || eventfd.drain())?
        }
        Row::Fifo => {
            let path = params.fifo.as_ref().ok_or("design B needs a FIFO path")?;
            let fifo = Fifo::reader(path)?;
            let epoll = Epoll::watching(fifo.raw())?;
            barrier.arrive_and_wait();
            by_epoll(&mut subscriber, &acks, &words, &epoll, || fifo.drain())?
        }
    };
    report_json(&report);
    Ok(())
}

/// Checks a message's order and, unless it is the stop, acknowledges it. Returns
/// whether to go on.
fn handle(stamp: Stamp, expected: &mut u64, acks: &Acks) -> Result<bool, String> {
    if stamp.seq == STOP {
        return Ok(false);
    }
    if stamp.seq != *expected {
        return Err(format!("message {} arrived where {} was due", stamp.seq, expected));
    }
    *expected += 1;
    acks.ack(*expected);
    Ok(true)
}

fn by_recv(subscriber: &mut Sub, acks: &Acks) -> Result<Report, Box<dyn Error>> {
    let (mut wake_ns, mut expected) = (Vec::new(), 0);
    loop {
        let message = subscriber.recv()?;
        let woke = now_ns();
        let stamp = *message;
        drop(message);
        if !handle(stamp, &mut expected, acks)? {
            break;
        }
        wake_ns.push(woke.saturating_sub(stamp.sent_ns));
    }
    Ok(Report {
        wake_ns,
        not_slept: None,
    })
}

/// Design A's watcher: sleeps on the shared futex word and signals the eventfd each time
/// it moves. It compares with the last value it saw, never a fresh read, so a bump
/// between two waits is not missed. It lives until the process ends.
fn spawn_watcher(words: Arc<Words>, eventfd: Arc<EventFd>) {
    std::thread::spawn(move || {
        let mut last = words.seq().load(std::sync::atomic::Ordering::Acquire);
        loop {
            futex_wait(words.seq(), last);
            // SYNC POINT wake (watcher side): pairs with the publisher's Release bump.
            let now = words.seq().load(std::sync::atomic::Ordering::Acquire);
            if now != last {
                last = now;
                eventfd.signal().unwrap_or_else(|e| panic!("watcher: {e}"));
            }
        }
    });
}

/// The next message, copied out, if one is there.
fn take(subscriber: &mut Sub) -> Result<Option<Stamp>, salias::ReceiveError> {
    let message = subscriber.try_recv()?;
    Ok(message.map(|m| *m))
}

/// The prototypes' receive loop: try, arm, try once more, sleep in epoll until the
/// descriptor is readable, drain it, take the message.
fn by_epoll(
    subscriber: &mut Sub,
    acks: &Acks,
    words: &Words,
    epoll: &Epoll,
    drain: impl Fn() -> std::io::Result<()>,
) -> Result<Report, Box<dyn Error>> {
    let (mut wake_ns, mut not_slept, mut expected) = (Vec::new(), 0, 0);
    loop {
        let (stamp, slept_until) = match take(subscriber)? {
            Some(stamp) => (stamp, None),
            None => {
                words.arm();
                match take(subscriber)? {
                    Some(stamp) => {
                        words.disarm();
                        (stamp, None)
                    }
                    None => {
                        epoll.wait()?;
                        let woke = now_ns();
                        drain()?;
                        // A stale signal (from an arming that found its message on the
                        // last look) wakes us with nothing there: arm again.
                        let Some(stamp) = take(subscriber)? else { continue };
                        (stamp, Some(woke))
                    }
                }
            }
        };
        if !handle(stamp, &mut expected, acks)? {
            break;
        }
        match slept_until {
            Some(woke) => wake_ns.push(woke.saturating_sub(stamp.sent_ns)),
            None => not_slept += 1,
        }
    }
    Ok(Report {
        wake_ns,
        not_slept: Some(not_slept),
    })
}
