//! The child processes: publishers and subscribers of a throughput run, and the pongs of
//! the latency runs. Each connects, passes the start barrier, does its part, checks what
//! it received and reports to the parent.

use salias::{
    Bytes, Channel, Fanout, Fifo, Mpsc, Ordered, PublishError, kind::Mode, kind::Topology, receive::MessageInfo,
    wait::BusySpin,
};
use serde::{Deserialize, Serialize};
use support::barrier::Barrier;
use support::clock::now_ns;
use support::records::Receive;
use support::role::{Role, report_json};
use support::throughput::Finished;

use crate::lossy::Lossy;
use crate::msg64::Msg64;
use crate::setup::{Kind, Setup};

/// The environment variable that names a child's role.
pub const ROLE: Role = Role::new("SALIAS_IPC_ROLE");

/// A child's parameters: the run it belongs to (its channel and barrier are named
/// after it), its core and its task.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Child {
    pub name: String,
    pub core: usize,
    pub task: Task,
}

/// What a child is to do.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// Publishes `setup.messages` as publisher `index`.
    Publisher { index: u64, setup: Setup },
    /// Receives and checks every publisher's messages.
    Subscriber { setup: Setup },
    /// A lossy subscriber beside them (`lossy.rs`).
    Lossy { setup: Setup, lossy: Lossy },
    /// Echoes `pings` messages from `<name>-ping` to `<name>-pong`.
    Pong { pings: u64, bytes: usize },
    /// Echoes `pings` pings on the barrier's floor slots.
    FloorPong { pings: u64 },
    /// Echoes `pings` 64-byte messages on the barrier's floor slots.
    MessageFloorPong { pings: u64 },
    /// Echoes `pings` 64-byte messages on the ring floor's rings (`<name>.rings`).
    RingFloorPong { pings: u64 },
}

impl Task {
    /// The role's name, as the environment names it.
    pub fn role(&self) -> &'static str {
        match self {
            Task::Publisher { .. } => "publisher",
            Task::Subscriber { .. } => "subscriber",
            Task::Lossy { .. } => "lossy",
            Task::Pong { .. } => "pong",
            Task::FloorPong { .. } => "floor-pong",
            Task::MessageFloorPong { .. } => "message-floor-pong",
            Task::RingFloorPong { .. } => "ring-floor-pong",
        }
    }
}

/// Runs this child's task; a failed check panics, which fails the child and the run.
pub fn run() {
    let Child { name, core, task } = ROLE.params().unwrap_or_else(|e| panic!("{e}"));
    support::cores::pin(core).unwrap_or_else(|e| panic!("{e}"));
    match task {
        Task::Publisher { index, setup } => dispatch(Some(index), &name, &setup),
        Task::Subscriber { setup } => dispatch(None, &name, &setup),
        Task::Lossy { setup, lossy } => crate::lossy::run_lossy(&name, &setup, lossy),
        Task::Pong { pings, bytes } if bytes == size_of::<Msg64>() => pong(&name, pings),
        Task::Pong { pings, bytes } => raw_pong(&name, pings, bytes),
        Task::FloorPong { pings } => {
            let barrier = open_barrier(&name);
            barrier.arrive_and_wait();
            support::floor::pong(barrier.slots(), pings);
        }
        Task::MessageFloorPong { pings } => {
            let barrier = open_barrier(&name);
            barrier.arrive_and_wait();
            support::message_floor::pong(barrier.slots(), pings);
        }
        Task::RingFloorPong { pings } => {
            let file = support::shm::ShmFile::open(&format!("{name}.rings")).unwrap_or_else(|e| panic!("{e}"));
            let barrier = open_barrier(&name);
            barrier.arrive_and_wait();
            let (ping, pong) = support::ring_floor::rings(&file);
            support::ring_floor::pong(ping, pong, pings);
        }
    }
}

fn open_barrier(name: &str) -> Barrier {
    Barrier::open(name).unwrap_or_else(|e| panic!("{e}"))
}

/// A publisher (with its index) or a subscriber of `setup`'s kind.
fn dispatch(publisher: Option<u64>, name: &str, setup: &Setup) {
    macro_rules! run {
        ($m:ty, $k:ty, $sequence_of:expr) => {
            match publisher {
                Some(index) => run_publisher::<$m, $k>(name, setup, index),
                None => run_subscriber::<$m, $k>(name, setup, $sequence_of),
            }
        };
    }
    match setup.kind {
        Kind::RawFifoMpsc if publisher.is_some() => run_raw_publisher(name, setup),
        Kind::RawFifoMpsc => run_raw_subscriber(name, setup),
        Kind::FifoMpsc => run!(Fifo, Mpsc, |_| None),
        Kind::FifoFanout => run!(Fifo, Fanout, |_| None),
        Kind::OrderedMpsc => run!(Ordered, Mpsc, |info| Some(info.sequence())),
        Kind::OrderedFanout => run!(Ordered, Fanout, |info| Some(info.sequence())),
        Kind::WriteFloor => crate::write_floor::run(name, setup),
    }
}

fn run_publisher<M: Mode, K: Topology>(name: &str, setup: &Setup, index: u64) {
    let channel = Channel::<Msg64, M, K>::connect(name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut batch = vec![Msg64::new(index, 0); setup.batch];
    let (elapsed_ns, attempts) = publish(name, setup, |seq, count| {
        if setup.batch > 1 {
            for (i, message) in batch[..count].iter_mut().enumerate() {
                *message = Msg64::new(index, seq + i as u64);
            }
            publisher.offer_batch(&batch[..count])
        } else {
            publisher.offer(&Msg64::new(index, seq)).map(|()| 1)
        }
    });
    report_json(&Finished::Publisher {
        elapsed_ns,
        attempts,
        refused: publisher.backpressured(),
    });
}

/// Both publishers' loop: from the start barrier, offers until `setup.messages` are
/// taken, backing off when refused. `offer(seq, count)` offers messages `seq` to
/// `seq + count - 1` (`count` at most the batch) and says how many were taken. Returns
/// the time from the barrier to the last offer, and the number of offers.
fn publish(name: &str, setup: &Setup, mut offer: impl FnMut(u64, usize) -> Result<usize, PublishError>) -> (u64, u64) {
    let barrier = open_barrier(name);
    let (mut attempts, mut seq) = (0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while seq < setup.messages {
        let count = (setup.messages - seq).min(setup.batch as u64) as usize;
        attempts += 1;
        match offer(seq, count) {
            Ok(n) => seq += n as u64,
            Err(PublishError::Backpressured) => setup.backoff.back_off(),
            Err(e) => panic!("{e}"),
        }
    }
    (now_ns() - started, attempts)
}

/// `sequence_of` gives an ordered message's global sequence number, checked to run 0, 1,
/// 2, … with no gap or repeat; FIFO kinds pass a function that returns `None`.
fn run_subscriber<M: Mode, K: Topology>(name: &str, setup: &Setup, sequence_of: fn(&MessageInfo<M>) -> Option<u64>) {
    let channel = Channel::<Msg64, M, K>::connect(name).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    if setup.receive == Receive::Batching {
        subscriber.set_wait_strategy(salias::wait::Batching::default());
    }
    let barrier = open_barrier(name);
    let total = setup.messages * setup.publishers as u64;
    let mut next = vec![0u64; setup.publishers as usize];
    let (mut received, mut checksum, mut next_sequence, mut drains) = (0u64, 0u64, 0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    let mut check = |info: MessageInfo<M>, m: &Msg64| {
        if let Some(sequence) = sequence_of(&info) {
            assert_eq!(sequence, next_sequence, "global sequence has a gap or repeat");
            next_sequence += 1;
        }
        let producer = m.producer as usize;
        assert_eq!(m.seq, next[producer], "lost or reordered");
        assert_eq!(m.words[5], m.seq ^ m.producer, "corrupted");
        next[producer] += 1;
        checksum = checksum.wrapping_add(m.seq);
    };
    while received < total {
        let polled = match setup.receive {
            Receive::Drain => subscriber.drain(256, &mut check).unwrap() as u64,
            // Waits (busy, `Batching`) for the first message, so never 0.
            Receive::Batching => subscriber.recv_batch(256, &mut check).unwrap() as u64,
        };
        received += polled;
        drains += u64::from(polled > 0);
        if polled == 0 {
            setup.backoff.back_off();
        }
    }
    let elapsed_ns = now_ns() - started;
    let expected = setup.publishers as u64 * (setup.messages * (setup.messages - 1) / 2);
    assert_eq!(checksum, expected, "checksum");
    report_json(&Finished::Subscriber {
        elapsed_ns,
        received,
        drains,
    });
}

/// Raw frames of `size` bytes carry the sequence number in their first 8 bytes (or as
/// many as fit) and `raw_last_byte` in their last, so both ends of every frame are checked
/// without touching the bytes between.
fn raw_last_byte(len: usize, seq: u64) -> u8 {
    if len > 8 {
        seq as u8 ^ 0x5a
    } else {
        seq.to_le_bytes()[len - 1]
    }
}

fn fill_raw(frame: &mut [u8], seq: u64) {
    let (len, head) = (frame.len(), frame.len().min(8));
    frame[..head].copy_from_slice(&seq.to_le_bytes()[..head]);
    if let Some(last) = frame.last_mut() {
        *last = raw_last_byte(len, seq);
    }
}

fn run_raw_publisher(name: &str, setup: &Setup) {
    let channel = Channel::<Bytes, Fifo, Mpsc>::connect(name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut frames = vec![vec![0u8; setup.size]; setup.batch];
    let (elapsed_ns, attempts) = publish(name, setup, |seq, count| {
        for (i, frame) in frames[..count].iter_mut().enumerate() {
            fill_raw(frame, seq + i as u64);
        }
        if count == 1 {
            publisher.offer(&frames[0]).map(|()| 1)
        } else {
            publisher.offer_batch(&frames[..count])
        }
    });
    report_json(&Finished::Publisher {
        elapsed_ns,
        attempts,
        refused: publisher.backpressured(),
    });
}

fn run_raw_subscriber(name: &str, setup: &Setup) {
    let channel = Channel::<Bytes, Fifo, Mpsc>::connect(name).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let barrier = open_barrier(name);
    let (mut received, mut drains) = (0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while received < setup.messages {
        let polled = subscriber
            .drain(256, |_, frame| {
                assert_eq!(frame.len(), setup.size, "wrong length");
                let head = frame.len().min(8);
                assert_eq!(frame[..head], received.to_le_bytes()[..head], "lost or reordered");
                assert_eq!(
                    frame[frame.len() - 1],
                    raw_last_byte(frame.len(), received),
                    "corrupted"
                );
                received += 1;
            })
            .unwrap();
        drains += u64::from(polled > 0);
    }
    let elapsed_ns = now_ns() - started;
    report_json(&Finished::Subscriber {
        elapsed_ns,
        received,
        drains,
    });
}

/// The salias ping-pong's echo: receives each ping and sends it straight back.
/// The ponger of a raw ping-pong: echoes each message's bytes.
fn raw_pong(name: &str, pings: u64, bytes: usize) {
    let ping = Channel::<Bytes, Fifo, Mpsc>::connect(&format!("{name}-ping")).unwrap();
    let pong = Channel::<Bytes, Fifo, Mpsc>::connect(&format!("{name}-pong")).unwrap();
    let mut inbound = ping.subscriber().unwrap();
    inbound.set_wait_strategy(BusySpin);
    let mut outbound = pong.publisher().unwrap();
    let mut message = vec![0; bytes];
    open_barrier(name).arrive_and_wait();
    for _ in 0..pings {
        message.copy_from_slice(&inbound.recv().unwrap());
        outbound.send(&message).unwrap();
    }
}

fn pong(name: &str, pings: u64) {
    let ping = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-ping")).unwrap();
    let pong = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-pong")).unwrap();
    let mut inbound = ping.subscriber().unwrap();
    inbound.set_wait_strategy(BusySpin);
    let mut outbound = pong.publisher().unwrap();
    open_barrier(name).arrive_and_wait();
    for _ in 0..pings {
        let message = *inbound.recv().unwrap();
        outbound.send(&message).unwrap();
    }
}
