//! The schedule of a wake-up latency run, shared by its two processes: the sender waits
//! until the receiver has handled the last message, lets a random gap pass so that the
//! receiver is asleep, and sends the next, stamped. The receiver acknowledges each one in
//! a page of shared memory, `/dev/shm/<name>.ack`, which also carries its pid for the
//! sender's idle CPU readings ([`crate::cpu::IdleCpu`]).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::shm::{ShmError, ShmFile};

/// The planned gap between messages is drawn uniformly from this range, in µs: long
/// enough that every receiver is asleep, and varied so that no wait lines up with it.
pub const GAP_US: [u64; 2] = [2_000, 5_000];

/// The number of the message that ends a run.
pub const STOP: u64 = u64::MAX;

const ACK: usize = 0;
const PID: usize = 8;
const LEN: usize = 4096;

/// How often the sender looks for the receiver's acknowledgement.
const ACK_POLL: Duration = Duration::from_micros(50);

/// The receiver's acknowledgements and pid; the creator removes the file when dropped.
pub struct Acks(ShmFile);

impl Acks {
    fn file_name(name: &str) -> String {
        format!("{name}.ack")
    }

    /// Creates run `name`'s page (the parent does, before starting the children).
    pub fn create(name: &str) -> Result<Acks, ShmError> {
        ShmFile::create(&Self::file_name(name), LEN).map(Acks)
    }

    /// Opens run `name`'s page.
    pub fn open(name: &str) -> Result<Acks, ShmError> {
        ShmFile::open(&Self::file_name(name)).map(Acks)
    }

    /// Receiver: it has handled every message before `seq`.
    pub fn ack(&self, seq: u64) {
        // SYNC POINT ack: pairs with the Acquire load in `acked`.
        self.0.word(ACK).store(seq, Ordering::Release);
    }

    /// How many messages the receiver has handled.
    pub fn acked(&self) -> u64 {
        // SYNC POINT ack: pairs with the Release store in `ack`.
        self.0.word(ACK).load(Ordering::Acquire)
    }

    /// Receiver, before the start barrier (which orders it before [`Acks::pid`]).
    pub fn set_pid(&self, pid: u32) {
        self.0.word(PID).store(pid as u64, Ordering::Relaxed);
    }

    /// The receiver's pid, after the start barrier.
    pub fn pid(&self) -> u32 {
        self.0.word(PID).load(Ordering::Relaxed) as u32
    }

    /// Sender: waits until the receiver has handled every message before `seq`. Gives up
    /// after `limit`, or as soon as `check` fails (a receiver that died).
    pub fn wait_ack<E: From<String>>(
        &self,
        seq: u64,
        limit: Duration,
        mut check: impl FnMut() -> Result<(), E>,
    ) -> Result<(), E> {
        let deadline = Instant::now() + limit;
        while self.acked() < seq {
            check()?;
            if Instant::now() > deadline {
                return Err(format!("the receiver did not acknowledge message {seq} within {limit:?}").into());
            }
            std::thread::sleep(ACK_POLL);
        }
        Ok(())
    }
}

/// The gaps between messages: uniform over [`GAP_US`], from xorshift64 seeded per run, so
/// they vary between runs and can be replayed.
pub struct Gaps(u64);

impl Gaps {
    /// Gaps from `seed`.
    pub fn new(seed: u64) -> Gaps {
        Gaps(seed | 1)
    }

    /// The next gap.
    pub fn next_gap(&mut self) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        Duration::from_micros(GAP_US[0] + self.0 % (GAP_US[1] - GAP_US[0] + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_stay_in_range_and_vary() {
        let mut gaps = Gaps::new(42);
        let all: Vec<Duration> = (0..1000).map(|_| gaps.next_gap()).collect();
        let range = Duration::from_micros(GAP_US[0])..=Duration::from_micros(GAP_US[1]);
        assert!(all.iter().all(|g| range.contains(g)));
        assert!(all.iter().any(|g| *g != all[0]));
    }

    #[test]
    fn an_ack_is_seen_by_the_waiter() {
        let name = format!("salias-support-ack-{}", std::process::id());
        let acks = Acks::create(&name).unwrap();
        let other = Acks::open(&name).unwrap();
        other.set_pid(7);
        other.ack(3);
        assert_eq!(acks.pid(), 7);
        acks.wait_ack::<String>(3, Duration::from_secs(1), || Ok(())).unwrap();
        let late = acks.wait_ack::<String>(4, Duration::from_millis(1), || Ok(()));
        assert!(late.unwrap_err().contains("did not acknowledge message 4"));
    }
}
