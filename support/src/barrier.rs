//! The start barrier in shared memory (doc/benchmarking.md rule 3): every process of a run
//! connects, checks in, and spins until the parent says go, so all start within
//! nanoseconds of each other and setup stays outside the timed region.
//!
//! # Layout
//! `/dev/shm/<name>.barrier`: a page of 8-byte words, word 0 counting arrivals and word 1
//! "go" (cache line 0), word 8 counting roles done (line 1); then, from the second page,
//! the latency floors' [`SlotPages`] (see [`crate::slots`]).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::role::{Children, RoleError};
use crate::shm::{ShmError, ShmFile};
use crate::slots::{SlotPages, Slots};

const ARRIVED: usize = 0;
const GO: usize = 1;
const DONE: usize = 8;
const PAGE: usize = 4096;
const LEN: usize = PAGE + size_of::<SlotPages>();

/// How often a waiting parent looks at the barrier and its children.
const PARENT_POLL: Duration = Duration::from_micros(100);

/// A start barrier shared by the processes of one run; the creator removes its file
/// when dropped.
pub struct Barrier(ShmFile);

impl Barrier {
    fn file_name(name: &str) -> String {
        format!("{name}.barrier")
    }

    /// Creates run `name`'s barrier (the parent does, before starting the children).
    pub fn create(name: &str) -> Result<Barrier, ShmError> {
        ShmFile::create(&Self::file_name(name), LEN).map(Barrier)
    }

    /// Opens run `name`'s barrier (each child does).
    pub fn open(name: &str) -> Result<Barrier, ShmError> {
        ShmFile::open(&Self::file_name(name)).map(Barrier)
    }

    /// Checks in and spins until go: a child's last step before its clock starts.
    pub fn arrive_and_wait(&self) {
        // SYNC POINT arrival: the parent's Acquire load in `release` sees this process
        // connected and ready.
        self.0.word(ARRIVED).fetch_add(1, Ordering::AcqRel);
        // SYNC POINT go: pairs with the parent's Release store in `release`.
        while self.0.word(GO).load(Ordering::Acquire) == 0 {
            std::hint::spin_loop();
        }
    }

    /// The parent: waits until `parties` processes have arrived, then says go. The
    /// watchdog: a child that ends first, or `limit` passing, is an error (a child that
    /// never arrives would keep the others spinning forever).
    pub fn release(&self, parties: u64, children: &mut Children, limit: Duration) -> Result<(), RoleError> {
        let deadline = Instant::now() + limit;
        // SYNC POINT arrival: pairs with each child's AcqRel add in `arrive_and_wait`.
        while self.0.word(ARRIVED).load(Ordering::Acquire) < parties {
            children.check_running()?;
            if Instant::now() > deadline {
                return Err(RoleError::BarrierTimeout {
                    arrived: self.0.word(ARRIVED).load(Ordering::Acquire),
                    parties,
                    limit,
                });
            }
            std::thread::sleep(PARENT_POLL);
        }
        // SYNC POINT go: pairs with the Acquire loads in `arrive_and_wait`.
        self.0.word(GO).store(1, Ordering::Release);
        Ok(())
    }

    /// The parent as one of the parties (a pinger that is the parent itself): checks in,
    /// then releases everyone once `parties` (itself included) have arrived.
    pub fn arrive_and_release(&self, parties: u64, children: &mut Children, limit: Duration) -> Result<(), RoleError> {
        // SYNC POINT arrival: as a child's add in `arrive_and_wait`.
        self.0.word(ARRIVED).fetch_add(1, Ordering::AcqRel);
        self.release(parties, children, limit)
    }

    /// Notes that this process's role is done (a subscriber that has every message), so
    /// the roles that must outlive it can leave.
    pub fn done(&self) {
        // SYNC POINT done: pairs with the Acquire load in `wait_done`.
        self.0.word(DONE).fetch_add(1, Ordering::AcqRel);
    }

    /// Waits until `count` processes have called [`Barrier::done`] (a publisher that
    /// keeps its resources until its subscribers have everything).
    pub fn wait_done(&self, count: u64) {
        // SYNC POINT done: pairs with the AcqRel adds in `done`.
        while self.0.word(DONE).load(Ordering::Acquire) < count {
            std::thread::sleep(PARENT_POLL);
        }
    }

    /// The latency floors' slots, from the second page on.
    pub fn slots(&self) -> Slots<'_> {
        assert!(
            self.0.len() >= LEN,
            "a barrier holds {LEN} bytes, this one {}",
            self.0.len()
        );
        // SAFETY: the mapping is at least LEN bytes (checked above) and page aligned, so
        // `SlotPages` (page aligned, LEN - PAGE bytes: whole cache lines, no padding) lies
        // inside it from byte PAGE on; its lines are eight `AtomicU64`s each, zero bytes
        // are valid for them, and every process touches these bytes only through
        // atomics. The pages borrow the mapping, which `self` keeps.
        Slots::new(unsafe { &*self.0.as_ptr().add(PAGE).cast::<SlotPages>() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_releases_once_every_party_arrived() {
        let name = format!("salias-support-barrier-{}", std::process::id());
        let parent = Barrier::create(&name).unwrap();
        let waiter = std::thread::spawn(move || {
            let child = Barrier::open(&name).unwrap();
            child.arrive_and_wait();
            child.done();
        });
        let mut children = Children::new();
        parent
            .arrive_and_release(2, &mut children, Duration::from_secs(60))
            .unwrap();
        parent.wait_done(1);
        waiter.join().unwrap();
    }

    #[test]
    fn a_party_that_never_arrives_trips_the_watchdog() {
        let name = format!("salias-support-barrier-late-{}", std::process::id());
        let parent = Barrier::create(&name).unwrap();
        let error = parent
            .release(1, &mut Children::new(), Duration::from_millis(20))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("only 0 of 1 processes reached the start barrier"),
            "{error}"
        );
    }
}
