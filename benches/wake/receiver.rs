//! The receiving process: connects, waits for each message the way its row says, stamps
//! the moment its wait returned, acknowledges the message, and at the end reports every
//! latency to the parent.

use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use salias::{FifoMpsc, Subscriber, wait::Park, wait::WaitStrategy};
use serde::{Deserialize, Serialize};
use support::barrier::Barrier;
use support::clock::now_ns;
use support::role::{Role, report_json};
use support::wake::{Acks, STOP};

use crate::rows::Row;
use crate::stamp::Stamp;
use crate::sys::{EventFd, Fifo, futex_wait};
use crate::words::Words;
use support::epoll::Readable;

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
            let epoll = Readable::watching(&*eventfd)?;
            barrier.arrive_and_wait();
            by_epoll(&mut subscriber, &acks, Some(&words), &epoll, || eventfd.drain())?
        }
        Row::FdEpoll => {
            // The descriptor is the subscriber's own; its empty `try_recv` arms it and
            // reading messages drains it.
            let epoll = Readable::watching(&subscriber)?;
            barrier.arrive_and_wait();
            by_epoll(&mut subscriber, &acks, None, &epoll, || Ok(()))?
        }
        #[cfg(feature = "tokio")]
        Row::RecvAsync => {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
            barrier.arrive_and_wait();
            runtime.block_on(by_recv_async(&mut subscriber, &acks))?
        }
        Row::Fifo => {
            let path = params.fifo.as_ref().ok_or("design B needs a FIFO path")?;
            let fifo = Fifo::reader(path)?;
            let epoll = Readable::watching(&fifo)?;
            barrier.arrive_and_wait();
            by_epoll(&mut subscriber, &acks, Some(&words), &epoll, || fifo.drain())?
        }
    };
    report_json(&report);
    Ok(())
}

/// What the receiver has seen so far.
#[derive(Default)]
struct Tally {
    wake_ns: Vec<u64>,
    not_slept: u64,
    expected: u64,
}

impl Tally {
    /// Checks a message's order and, unless it is the stop, acknowledges it and records
    /// when its wait returned (`None`: found before sleeping). Returns whether to go on.
    fn take(&mut self, stamp: Stamp, woke: Option<u64>, acks: &Acks) -> Result<bool, String> {
        if stamp.seq == STOP {
            return Ok(false);
        }
        if stamp.seq != self.expected {
            return Err(format!("message {} arrived where {} was due", stamp.seq, self.expected));
        }
        self.expected += 1;
        acks.ack(self.expected);
        match woke {
            Some(woke) => self.wake_ns.push(woke.saturating_sub(stamp.sent_ns)),
            None => self.not_slept += 1,
        }
        Ok(true)
    }

    /// The report; `slept_known`: whether the wait said when it found a message unslept.
    fn report(self, slept_known: bool) -> Report {
        Report {
            wake_ns: self.wake_ns,
            not_slept: slept_known.then_some(self.not_slept),
        }
    }
}

fn by_recv(subscriber: &mut Sub, acks: &Acks) -> Result<Report, Box<dyn Error>> {
    let mut tally = Tally::default();
    loop {
        let message = subscriber.recv()?;
        let (woke, stamp) = (now_ns(), *message);
        drop(message);
        if !tally.take(stamp, Some(woke), acks)? {
            return Ok(tally.report(false));
        }
    }
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

/// The raw epoll loop: try; then (the prototypes, with their `words`) arm and try once
/// more; sleep in epoll until the descriptor is readable, drain it, take the message.
/// salias's own descriptor arms in the empty `try_recv`, and receiving drains it.
fn by_epoll(
    subscriber: &mut Sub,
    acks: &Acks,
    words: Option<&Words>,
    epoll: &Readable,
    drain: impl Fn() -> std::io::Result<()>,
) -> Result<Report, Box<dyn Error>> {
    let mut tally = Tally::default();
    loop {
        let (stamp, woke) = match take(subscriber)? {
            Some(stamp) => (stamp, None),
            None => {
                let last_look = match words {
                    Some(words) => {
                        words.arm();
                        take(subscriber)?
                    }
                    None => None,
                };
                match last_look {
                    Some(stamp) => {
                        words.inspect(|w| w.disarm());
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
        if !tally.take(stamp, woke, acks)? {
            return Ok(tally.report(true));
        }
    }
}

#[cfg(feature = "tokio")]
async fn by_recv_async(subscriber: &mut Sub, acks: &Acks) -> Result<Report, Box<dyn Error>> {
    let mut tally = Tally::default();
    loop {
        let message = subscriber.recv_async().await?;
        let (woke, stamp) = (now_ns(), *message);
        drop(message);
        if !tally.take(stamp, Some(woke), acks)? {
            return Ok(tally.report(false));
        }
    }
}
