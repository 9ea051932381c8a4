//! Loom models of the publish/consume protocol, the fanout write limit and join, the
//! ordered merge with gap detection, a sole sequence taker handing over to a joiner, the sleep/wake handshake, a publisher slot
//! changing hands (released, or taken over from a dead holder whose tail is recovered), a
//! subscriber deciding that its last publisher has gone,
//! a lossy subscriber's overrun detection (a reader racing a writer that laps it), a
//! subscriber joining with history walking back a ring its publisher is lapping, and a
//! tethered one holding the history it joined with.
//!
//! The models run salias's own protocol functions (`salias::protocol`) on a heap-backed
//! ring: loom atomics stand in for the shared words and `loom::cell::UnsafeCell` for frame
//! headers and payloads, so loom reports an interleaving or weak-memory outcome (among those
//! it explores: bounded preemptions, no load buffering) in which
//! a subscriber reads a frame the publisher is still writing, or a publisher overwrites
//! one a subscriber has not released. Positions count frames (one slot each) instead of
//! bytes; the protocol steps and their orderings are the channel's.
//!
//! The models have teeth: weakening any one of these makes a model fail (checked by hand
//! when they were written): the frame commit or the cursor release to Relaxed (loom
//! reports concurrent access to a frame), either SeqCst fence of the fanout join (a
//! joining subscriber reads a frame being overwritten), the sequence `fetch_add` or the
//! pending-cleared store to Relaxed, ignoring a publisher caught mid-`fetch_add`, or not
//! bounding a gap by the ring heads (a committed number is declared lost); a joiner that
//! does not wait out the sole taker's take in flight, or skips its barrier (a number taken
//! twice); a sleeper
//! clearing the wake claim before reading the futex word, or not clearing it, or a
//! publisher looking for sleepers without its fence (a lost wake-up); the slot release
//! made Relaxed (a successor starts on its predecessor's frames), or a take-over that
//! ignores a live holder (two publishers in one ring); a lossy reader that skips the
//! frontier re-check after its copy, or a publisher without its fence after storing the
//! frontier (a torn copy accepted); a history walk that keeps the frames its publisher may
//! have overwritten (a torn frame returned); a tethered join holding a whole ring of
//! history instead of a ring less the publisher's step (a frame read while overwritten),
//! or a publisher that takes a cursor it already lapped for a bad one (a refused join).
//!
//! The wake models run the fences that run in the channel where loom can express them:
//! a publisher outside the sleepers' barrier runs its real `full_fence`; a sleeper's
//! membarrier, which loom cannot express, is a SeqCst fence on the sleeper's thread and,
//! for a publisher it reaches, on the publisher's thread where the barrier lands. A sleep
//! that skips the barrier is shown to be able to miss a wake-up, which is why it is short.
//! The same models run a watched handle arming its readiness descriptor
//! (`protocol::arm`, then its watcher's wait), for messages and, roles swapped, for room.
//!
//! Run: `scripts/loom` (it sets `RUSTFLAGS="--cfg loom"` and builds in release mode).

#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering, fence};
use loom::thread;

use salias::protocol::{self, Head, OverwriteWords, PublisherView, RingHeads, SequenceWords, WakeWords};

const PENDING_NONE: u64 = u64::MAX;
const PENDING_TAKING: u64 = u64::MAX - 1;
const CURSOR_IDLE: u64 = u64::MAX;

/// Runs `model` under loom with at most `preemptions` forced thread switches per
/// execution (override with `LOOM_MAX_PREEMPTIONS`): without a bound, the spin-waits make
/// the search space too large to finish.
fn check_bounded(preemptions: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    builder.check(model);
}

fn check(model: impl Fn() + Sync + Send + 'static) {
    check_bounded(3, model);
}

struct Frame {
    commit: AtomicU64,
    sequence: UnsafeCell<u64>,
    payload: UnsafeCell<u64>,
}

/// One publisher's ring and the words of its producer slot, with a cursor per
/// subscriber slot.
struct Ring {
    frames: Vec<Frame>,
    tail: AtomicU64,
    pending: AtomicU64,
    pending_count: AtomicU64,
    cursors: Vec<AtomicU64>,
}

impl Ring {
    fn new(capacity: usize, subscribers: usize, initial_cursor: u64) -> Ring {
        Ring {
            frames: (0..capacity)
                .map(|_| Frame {
                    commit: AtomicU64::new(0),
                    sequence: UnsafeCell::new(0),
                    payload: UnsafeCell::new(0),
                })
                .collect(),
            tail: AtomicU64::new(0),
            pending: AtomicU64::new(PENDING_NONE),
            pending_count: AtomicU64::new(0),
            cursors: (0..subscribers).map(|_| AtomicU64::new(initial_cursor)).collect(),
        }
    }

    fn frame(&self, pos: u64) -> &Frame {
        &self.frames[pos as usize % self.frames.len()]
    }

    fn capacity(&self) -> u64 {
        self.frames.len() as u64
    }
}

/// Mirrors `Publisher::publish` for one message: reserve, take a number, write, commit,
/// clear the pending mark, report progress.
struct Publisher {
    ring: Arc<Ring>,
    sequence: Option<Arc<AtomicU64>>,
    /// Nobody takes numbers alone in these models: `sole_takers_hand_over_without_a_duplicate_number`
    /// models that.
    sole_taker: AtomicU64,
    fanout: bool,
    /// Fanout: how far past its tail it ever writes (`Shared::frontier_step`); `None`, a ring.
    step: Option<u64>,
    tail: u64,
    limit: u64,
}

impl Publisher {
    fn new(ring: Arc<Ring>, sequence: Option<Arc<AtomicU64>>, fanout: bool) -> Publisher {
        Publisher {
            ring,
            sequence,
            sole_taker: AtomicU64::new(0),
            fanout,
            step: None,
            tail: 0,
            limit: 0,
        }
    }

    fn refresh_limit(&mut self) {
        let capacity = self.ring.capacity();
        self.limit = protocol::write_limit(self.tail, capacity, capacity, self.fanout, &self.ring.cursors)
            .expect("honest cursors are always in range");
        if let Some(step) = self.step {
            self.limit = self.limit.min(self.tail + step);
        }
    }

    fn words(&self) -> Option<SequenceWords<'_, AtomicU64>> {
        self.sequence.as_deref().map(|sequence| SequenceWords {
            sequence,
            sole_taker: &self.sole_taker,
            pending: &self.ring.pending,
            pending_count: &self.ring.pending_count,
        })
    }

    /// Publishes `value`, or returns false when the ring is full.
    fn offer(&mut self, value: u64) -> bool {
        if self.tail + 1 > self.limit {
            self.refresh_limit();
            if self.tail + 1 > self.limit {
                return false;
            }
        }
        let sequence = self.words().map_or(0, |words| protocol::take_sequence(&words, 1, 0));
        let frame = self.ring.frame(self.tail);
        // The frame is reserved: loom checks no subscriber still reads it.
        // SAFETY: loom's cell access; the model asserts exclusivity.
        frame.sequence.with_mut(|s| unsafe { *s = sequence });
        // SAFETY: as above.
        frame.payload.with_mut(|p| unsafe { *p = value });
        protocol::commit_frame(&frame.commit, self.tail);
        self.tail += 1;
        if self.sequence.is_some() {
            protocol::clear_pending(&self.ring.pending);
        }
        protocol::report_tail(&self.ring.tail, self.tail);
        true
    }

    fn send(&mut self, value: u64) {
        while !self.offer(value) {
            thread::yield_now();
        }
    }

    /// Takes a number and stops before committing it, as a publisher killed there would.
    fn take_and_die(&mut self, alive: &AtomicBool) {
        self.refresh_limit();
        assert!(self.tail < self.limit);
        let words = self.words().expect("ordered");
        protocol::take_sequence(&words, 1, 0);
        // What the liveness check will find from now on.
        alive.store(false, Ordering::Release);
    }
}

/// Mirrors `Subscriber`: reads each ring at its head, releases when it runs out.
struct Subscriber {
    rings: Vec<Arc<Ring>>,
    /// The channel's global sequence (Ordered).
    sequence: Option<Arc<AtomicU64>>,
    slot: usize,
    heads: Vec<u64>,
    next_sequence: u64,
    current: usize,
    /// Numbers of frames passed over as already handled: in these models every frame
    /// comes after the subscriber started, so any entry is a message lost.
    passed_over: Vec<u64>,
}

impl Subscriber {
    fn new(rings: Vec<Arc<Ring>>, sequence: Option<Arc<AtomicU64>>, slot: usize) -> Subscriber {
        let heads = vec![0; rings.len()];
        Subscriber {
            rings,
            sequence,
            slot,
            heads,
            next_sequence: 0,
            current: 0,
            passed_over: Vec::new(),
        }
    }

    /// A fanout subscriber joining while publishers run, holding up to `behind` frames of
    /// history: it starts at the floor the join chose (one frame a position here, so
    /// every position is a frame to walk back to).
    fn join(rings: Vec<Arc<Ring>>, slot: usize, behind: u64) -> Subscriber {
        let mut subscriber = Subscriber::new(rings, None, slot);
        let rings = &subscriber.rings;
        let heads = &mut subscriber.heads;
        protocol::join(
            rings.len(),
            behind,
            |ring| &rings[ring].tail,
            |ring| &rings[ring].cursors[slot],
            |ring, _, floor| heads[ring] = floor,
        );
        subscriber
    }

    /// Reads the payload at the head of `ring` and moves past it.
    fn take(&mut self, ring: usize) -> u64 {
        let frame = self.rings[ring].frame(self.heads[ring]);
        // Committed and not yet released: loom checks no publisher writes it now.
        // SAFETY: loom's cell access; the model asserts no concurrent write.
        let value = frame.payload.with(|p| unsafe { *p });
        self.heads[ring] += 1;
        value
    }

    fn release_all(&self) {
        for (ring, head) in self.rings.iter().zip(&self.heads) {
            protocol::release(&ring.cursors[self.slot], *head);
        }
    }

    /// FIFO: the next message from any ring, as `(ring, payload)`.
    fn try_recv_fifo(&mut self) -> Option<(usize, u64)> {
        for step in 0..self.rings.len() {
            let ring = (self.current + step) % self.rings.len();
            if protocol::is_committed(&self.rings[ring].frame(self.heads[ring]).commit, self.heads[ring]) {
                self.current = ring;
                return Some((ring, self.take(ring)));
            }
        }
        self.release_all();
        None
    }

    /// Ordered: the next message in global order, as `(sequence, payload)`, declaring
    /// lost what only dead publishers held; `alive(ring)` is the liveness check.
    fn try_recv_ordered(
        &mut self,
        alive: &dyn Fn(usize) -> bool,
        gaps: &mut Vec<std::ops::Range<u64>>,
    ) -> Option<(u64, u64)> {
        let found = protocol::next_in_order(self, self.rings.len(), self.current, self.next_sequence, 16).unwrap();
        assert!(
            self.passed_over.is_empty(),
            "numbers {:?} were passed over: declared lost, yet committed",
            self.passed_over
        );
        if let Some(protocol::Found { ring, head, .. }) = found {
            self.current = ring;
            self.next_sequence = head.sequence + 1;
            return Some((head.sequence, self.take(ring)));
        }
        self.release_all();
        let rings = self.rings.clone();
        let sequence = self.sequence.clone().expect("ordered");
        let publisher = |ring: usize| PublisherView {
            alive: alive(ring),
            pending: &rings[ring].pending,
            pending_count: &rings[ring].pending_count,
        };
        if let Some(end) = protocol::find_gap(self.next_sequence, &*sequence, self, rings.len(), publisher).unwrap() {
            gaps.push(self.next_sequence..end);
            self.next_sequence = end;
        }
        None
    }
}

impl RingHeads for Subscriber {
    type Error = std::convert::Infallible;
    type At = ();

    fn head_at(&self, ring: usize) -> Result<Option<(Head, ())>, Self::Error> {
        let frame = self.rings[ring].frame(self.heads[ring]);
        if !protocol::is_committed(&frame.commit, self.heads[ring]) {
            return Ok(None);
        }
        let head = Head {
            len: 8,
            // SAFETY: loom's cell access; the model asserts no concurrent write.
            sequence: frame.sequence.with(|s| unsafe { *s }),
        };
        Ok(Some((head, ())))
    }

    fn pass_over(&mut self, ring: usize, _head: Head) {
        let frame = self.rings[ring].frame(self.heads[ring]);
        // SAFETY: loom's cell access; the frame is committed and not yet released.
        self.passed_over.push(frame.sequence.with(|s| unsafe { *s }));
        self.heads[ring] += 1;
    }

    /// The models publish no hole frames; one would be passed over like a stale frame.
    fn pass_hole(&mut self, ring: usize, head: Head) {
        self.pass_over(ring, head);
    }
}

// ---------------------------------------------------------------------------------------
// Models

/// One publisher laps a two-frame ring while one subscriber reads: every message arrives
/// once, in order, intact, and no frame is read while written or overwritten while read.
#[test]
fn fifo_publish_consume_wraps_the_ring() {
    check(|| {
        let ring = Arc::new(Ring::new(2, 1, 0));
        let mut publisher = Publisher::new(ring.clone(), None, false);
        let producer = thread::spawn(move || {
            for value in 1..=3 {
                publisher.send(value * 10);
            }
        });
        let mut subscriber = Subscriber::new(vec![ring], None, 0);
        let mut received = Vec::new();
        while received.len() < 3 {
            match subscriber.try_recv_fifo() {
                Some((_, value)) => received.push(value),
                None => thread::yield_now(),
            }
        }
        producer.join().unwrap();
        assert_eq!(received, [10, 20, 30]);
    });
}

/// Two fanout subscribers hold the publisher back until both released: each gets every
/// message, and the slower one is never overrun. (Both subscribers run on one thread,
/// the second reading every other turn; the publisher races each of them.)
#[test]
fn fanout_limit_waits_for_the_slowest_subscriber() {
    check(|| {
        let ring = Arc::new(Ring::new(2, 2, 0));
        let mut publisher = Publisher::new(ring.clone(), None, true);
        let producer = thread::spawn(move || {
            for value in 1..=3 {
                publisher.send(value);
            }
        });
        let mut fast = Subscriber::new(vec![ring.clone()], None, 0);
        let mut slow = Subscriber::new(vec![ring], None, 1);
        let (mut fast_got, mut slow_got) = (Vec::new(), Vec::new());
        let mut turn = 0;
        while fast_got.len() < 3 || slow_got.len() < 3 {
            let mut idle = true;
            if fast_got.len() < 3
                && let Some((_, value)) = fast.try_recv_fifo()
            {
                fast_got.push(value);
                idle = false;
            }
            turn += 1;
            if turn % 2 == 0
                && slow_got.len() < 3
                && let Some((_, value)) = slow.try_recv_fifo()
            {
                slow_got.push(value);
                idle = false;
            }
            if idle {
                thread::yield_now();
            }
        }
        producer.join().unwrap();
        assert_eq!(fast_got, [1, 2, 3]);
        assert_eq!(slow_got, [1, 2, 3]);
    });
}

/// A fanout subscriber joins while the publisher laps a ring nobody holds: from wherever
/// it starts, it reads every later message intact, and the publisher never overwrites a
/// frame it has not released.
#[test]
fn fanout_join_while_publishing() {
    check(|| {
        let ring = Arc::new(Ring::new(2, 1, CURSOR_IDLE));
        let mut publisher = Publisher::new(ring.clone(), None, true);
        let producer = thread::spawn(move || {
            for value in 0..4 {
                publisher.send(value);
            }
        });
        let mut subscriber = Subscriber::join(vec![ring], 0, 0);
        let start = subscriber.heads[0];
        let mut received = Vec::new();
        while subscriber.heads[0] < 4 {
            match subscriber.try_recv_fifo() {
                Some((_, value)) => received.push(value),
                None => thread::yield_now(),
            }
        }
        producer.join().unwrap();
        assert_eq!(received, (start..4).collect::<Vec<_>>());
        protocol::leave(&subscriber.rings[0].cursors[0]);
    });
}

/// A tethered subscriber joins with history while its publisher laps a ring of four
/// frames, writing at most one frame past its tail (its frontier step): it holds up to
/// three frames back (`capacity - step`) and reads every position from its start
/// whole, the publisher never overwriting one it has not released, and never taking a
/// first choice of cursor it had already lapped for a bad one. Holding a whole ring back
/// makes loom find the publisher writing a frame the joiner reads.
#[test]
fn a_tethered_history_join_holds_everything_from_its_start() {
    const CAPACITY: usize = 4;
    const STEP: u64 = 1;
    const MESSAGES: u64 = 6;
    check(|| {
        let ring = Arc::new(Ring::new(CAPACITY, 1, CURSOR_IDLE));
        let mut publisher = Publisher::new(ring.clone(), None, true);
        publisher.step = Some(STEP);
        let producer = thread::spawn(move || {
            for value in 0..MESSAGES {
                publisher.send(value);
            }
        });
        let mut subscriber = Subscriber::join(vec![ring], 0, CAPACITY as u64 - STEP);
        let start = subscriber.heads[0];
        let mut received = Vec::new();
        while subscriber.heads[0] < MESSAGES {
            match subscriber.try_recv_fifo() {
                Some((_, value)) => received.push(value),
                None => thread::yield_now(),
            }
        }
        producer.join().unwrap();
        assert_eq!(received, (start..MESSAGES).collect::<Vec<_>>());
        protocol::leave(&subscriber.rings[0].cursors[0]);
    });
}

/// Two publishers take global numbers and commit into their own rings; the subscriber
/// merges them strictly by number, and never declares a number a live publisher holds
/// lost, however often it checks.
#[test]
fn ordered_merge_delivers_every_number_in_order() {
    const MESSAGES: [u64; 2] = [2, 1];
    // Three threads spinning: a bound of 2 keeps the search to minutes.
    check_bounded(2, || {
        let sequence = Arc::new(AtomicU64::new(0));
        let rings = [Arc::new(Ring::new(2, 1, 0)), Arc::new(Ring::new(2, 1, 0))];
        let producers: Vec<_> = rings
            .iter()
            .enumerate()
            .map(|(index, ring)| {
                let mut publisher = Publisher::new(ring.clone(), Some(sequence.clone()), false);
                thread::spawn(move || {
                    for value in 0..MESSAGES[index] {
                        publisher.send(index as u64 * 100 + value);
                    }
                })
            })
            .collect();
        let mut subscriber = Subscriber::new(rings.to_vec(), Some(sequence), 0);
        let mut gaps = Vec::new();
        let mut delivered = Vec::new();
        while delivered.len() < 3 {
            match subscriber.try_recv_ordered(&|_| true, &mut gaps) {
                Some((number, value)) => delivered.push((number, value)),
                None => thread::yield_now(),
            }
        }
        for producer in producers {
            producer.join().unwrap();
        }
        assert!(gaps.is_empty(), "declared lost while live: {gaps:?}");
        let numbers: Vec<u64> = delivered.iter().map(|&(number, _)| number).collect();
        assert_eq!(numbers, [0, 1, 2]);
        // Each publisher's messages keep their order.
        for (index, &sent) in MESSAGES.iter().enumerate() {
            let index = index as u64;
            let mine: Vec<u64> = delivered.iter().map(|&(_, v)| v).filter(|v| v / 100 == index).collect();
            assert_eq!(mine, (0..sent).map(|v| index * 100 + v).collect::<Vec<_>>());
        }
    });
}

/// A publisher takes numbers alone (a plain load and store) while a second one joins:
/// the joiner marks the numbers shared, runs its barrier and waits out a take in flight,
/// then adds. Every number is taken exactly once, whichever way the take and the join
/// interleave. The joiner's barrier is a SeqCst fence on its thread; where it lands on
/// the sole taker's, its `taker_fence` (SeqCst under loom) stands in for it.
#[test]
fn sole_takers_hand_over_without_a_duplicate_number() {
    check(|| {
        let next = Arc::new(AtomicU64::new(0));
        let sole_taker = Arc::new(AtomicU64::new(0));
        let pending = Arc::new([AtomicU64::new(PENDING_NONE), AtomicU64::new(PENDING_NONE)]);
        let counts = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let take = |publisher: usize, alone: u64| {
            let words = SequenceWords {
                sequence: &*next,
                sole_taker: &*sole_taker,
                pending: &pending[publisher],
                pending_count: &counts[publisher],
            };
            let number = protocol::take_sequence(&words, 1, alone);
            protocol::clear_pending(&pending[publisher]);
            number
        };
        let first = protocol::join_takers(&*sole_taker, 1, true, || unreachable!(), |_| unreachable!());
        assert_eq!(first, Ok(protocol::Taking::Alone(1)));
        let sole = {
            let (next, sole_taker, pending, counts) =
                (next.clone(), sole_taker.clone(), pending.clone(), counts.clone());
            thread::spawn(move || {
                let words = SequenceWords {
                    sequence: &*next,
                    sole_taker: &*sole_taker,
                    pending: &pending[0],
                    pending_count: &counts[0],
                };
                let mut taken = Vec::new();
                for _ in 0..2 {
                    taken.push(protocol::take_sequence(&words, 1, 1));
                    protocol::clear_pending(&pending[0]);
                }
                taken
            })
        };
        let barrier = || {
            fence(Ordering::SeqCst);
            true
        };
        let busy = |tag: u64| {
            assert_eq!(tag, 1, "the joiner waits for the sole taker");
            pending[0].load(Ordering::Acquire) == PENDING_TAKING
        };
        let second = protocol::join_takers(&*sole_taker, 2, true, barrier, busy);
        assert_eq!(second, Ok(protocol::Taking::Shared));
        let mine = take(1, 0);
        let mut numbers = sole.join().unwrap();
        numbers.push(mine);
        numbers.sort();
        assert_eq!(numbers, [0, 1, 2], "every number taken once");
    });
}

/// A publisher dies holding a number while another keeps publishing: the subscriber
/// declares exactly that number lost, once, and delivers every other in order.
#[test]
fn ordered_gap_is_declared_only_for_the_dead_publishers_number() {
    check_bounded(2, || {
        let sequence = Arc::new(AtomicU64::new(0));
        let rings = [Arc::new(Ring::new(2, 1, 0)), Arc::new(Ring::new(2, 1, 0))];
        let alive = Arc::new([AtomicBool::new(true), AtomicBool::new(true)]);
        let doomed = {
            let mut publisher = Publisher::new(rings[0].clone(), Some(sequence.clone()), false);
            let alive = alive.clone();
            thread::spawn(move || publisher.take_and_die(&alive[0]))
        };
        let survivor = {
            let mut publisher = Publisher::new(rings[1].clone(), Some(sequence.clone()), false);
            thread::spawn(move || {
                publisher.send(7);
                publisher.send(8);
            })
        };
        let mut subscriber = Subscriber::new(rings.to_vec(), Some(sequence), 0);
        let mut gaps = Vec::new();
        let mut delivered = Vec::new();
        let is_alive = |ring: usize| alive[ring].load(Ordering::Acquire);
        while delivered.len() < 2 || subscriber.next_sequence < 3 {
            match subscriber.try_recv_ordered(&is_alive, &mut gaps) {
                Some((number, value)) => delivered.push((number, value)),
                None => thread::yield_now(),
            }
        }
        doomed.join().unwrap();
        survivor.join().unwrap();
        assert_eq!(delivered.iter().map(|&(_, v)| v).collect::<Vec<_>>(), [7, 8]);
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        let lost = gaps[0].clone();
        assert_eq!(lost.end - lost.start, 1, "{gaps:?}");
        let mut numbers: Vec<u64> = delivered.iter().map(|&(n, _)| n).chain(lost).collect();
        numbers.sort_unstable();
        assert_eq!(numbers, [0, 1, 2]);
    });
}

/// What stands between a publisher's commit and its look for sleepers, in the model.
#[derive(Clone, Copy)]
enum PublisherSide {
    /// A process that sleepers' barriers reach (`platform::register_fast_side`): it runs
    /// only a compiler fence, and the sleeper's membarrier makes every such thread run a
    /// full fence. Loom cannot express a barrier run on another thread's behalf, so
    /// `Word32::publisher_fence` is a SeqCst fence under loom: where the barrier lands.
    Reached,
    /// A process the barrier does not reach: `full_fence`, exactly the code that runs.
    Unreached,
}

/// How the subscriber in `wake_model` gets ready to sleep.
#[derive(Clone, Copy)]
enum Sleeper {
    /// A parked `recv`: `wait::Park::park`'s steps, written out (announce, barrier, look).
    Park,
    /// A watched subscriber arming its descriptor: `protocol::arm` itself, with the
    /// watcher's wait (on the futex word, for the `seen` that `arm` returns) after it.
    Arm,
}

/// Two publishers each commit a message and wake sleepers; one subscriber sleeps up to
/// twice, running the steps of `wait::Park::park` in its order (announce, barrier, last
/// look, sleep), or arming as a watched subscriber does (`Sleeper`). `barrier` says
/// whether the sleeper takes its barrier (a long park with membarrier: on the sleeper's
/// own thread a full fence, modelled as a SeqCst fence) or skips it (a park of at most
/// `SHORT_PARK`). Loom has no futex, so "asleep" is waiting for the futex word to move;
/// a lost wake-up, the subscriber asleep with both publishers done and the word where it
/// left it, panics with "lost wake-up". It covers the wake claim for one sleeper: a
/// publisher skips its wake only after another has claimed it since the sleeper's last
/// announcement. An armed subscriber's watcher, woken, leaves its sleep and signals the
/// descriptor; the subscriber then looks again, as the loop it serves does.
fn wake_model(side: PublisherSide, barrier: bool, sleeper: Sleeper) {
    check(move || {
        let wake = Arc::new(WakeWords::<AtomicU32>::default());
        let commits = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let done = Arc::new(AtomicU32::new(0));
        let publishers: Vec<_> = (0..2)
            .map(|index| {
                let (wake, commits, done) = (wake.clone(), commits.clone(), done.clone());
                thread::spawn(move || {
                    commits[index].store(true, Ordering::Release);
                    let reached = matches!(side, PublisherSide::Reached);
                    if protocol::sleepers_present(&wake, reached) && protocol::claim_wake(&wake) {
                        protocol::bump_wake(&wake);
                    }
                    done.fetch_add(1, Ordering::Release);
                })
            })
            .collect();
        let ready = || commits.iter().all(|c| c.load(Ordering::Acquire));
        for _ in 0..2 {
            if ready() {
                break;
            }
            let seen = match sleeper {
                Sleeper::Park => {
                    let seen = protocol::announce_sleep(&wake);
                    if barrier {
                        fence(Ordering::SeqCst);
                    }
                    if ready() {
                        protocol::leave_sleep(&wake);
                        continue;
                    }
                    seen
                }
                Sleeper::Arm => {
                    let took_barrier = || {
                        if barrier {
                            fence(Ordering::SeqCst);
                        }
                        barrier
                    };
                    match protocol::arm(&wake, took_barrier, ready) {
                        protocol::Armed::Ready => continue,
                        protocol::Armed::Sleeping { seen, reliable } => {
                            assert_eq!(reliable, barrier);
                            seen
                        }
                    }
                }
            };
            sleep_while_unmoved(&wake, seen, &done, 2);
            protocol::leave_sleep(&wake);
        }
        for publisher in publishers {
            publisher.join().unwrap();
        }
    });
}

/// Asleep on the futex word: waits for it to move past `seen`, panicking with "lost
/// wake-up" if all `wakers` are done and it has not.
fn sleep_while_unmoved(wake: &WakeWords<AtomicU32>, seen: u32, done: &AtomicU32, wakers: u32) {
    while wake.seq.load(Ordering::Acquire) == seen {
        if done.load(Ordering::Acquire) == wakers {
            assert_ne!(wake.seq.load(Ordering::Acquire), seen, "lost wake-up");
        }
        thread::yield_now();
    }
}

#[test]
fn sleeping_subscriber_is_always_woken() {
    wake_model(PublisherSide::Reached, true, Sleeper::Park);
}

/// The path that runs where membarrier does not reach the publisher (macOS, the portable
/// layer, a kernel without expedited membarrier for the publisher's process): the
/// publisher's fence is the real `full_fence`. On macOS and the portable layer the
/// sleeper's is the real one too: `wait::sleeper_barrier` runs a SeqCst fence there
/// (`Barrier::NotNeeded`) in place of membarrier.
#[test]
fn sleeping_subscriber_is_woken_by_a_fenced_publisher() {
    wake_model(PublisherSide::Unreached, true, Sleeper::Park);
}

/// Without the sleeper's barrier a wake-up can be lost even against a fully fenced
/// publisher: the sleeper's registration is a read-modify-write whose order against its
/// last look the memory model does not promise. This is why `Park::park` caps a sleep
/// that skips the barrier at `NAP`: a commit that races it delays the sleeper at most
/// that long. Loom must find that outcome; if it stops finding it, the model lost its teeth.
#[test]
#[should_panic(expected = "lost wake-up")]
fn a_sleep_without_the_barrier_can_miss_a_wake_up() {
    wake_model(PublisherSide::Unreached, false, Sleeper::Park);
}

/// A watched subscriber that arms (drain, `protocol::arm`, hand `seen` to the watcher):
/// either its last look finds the commit or the watcher is woken.
#[test]
fn an_armed_subscriber_is_always_signalled() {
    wake_model(PublisherSide::Reached, true, Sleeper::Arm);
}

#[test]
fn an_armed_subscriber_is_signalled_by_a_fenced_publisher() {
    wake_model(PublisherSide::Unreached, true, Sleeper::Arm);
}

/// Arming without the barrier can miss a wake-up, as a short park can: why the watcher
/// re-checks such a handle after every `NAP`. The model must keep finding it.
#[test]
#[should_panic(expected = "lost wake-up")]
fn arming_without_the_barrier_can_miss_a_wake_up() {
    wake_model(PublisherSide::Unreached, false, Sleeper::Arm);
}

/// The room direction: a publisher whose ring is full (capacity 1, one frame written,
/// the subscriber's cursor before it) arms on the room line, its last look the write
/// limit; the subscriber releases the frame and looks for sleepers on the room line, as
/// `Subscriber::release_all` does. Either the publisher's look finds the room or its
/// watcher is woken, and then the room is visible.
fn room_model(side: PublisherSide) {
    check(move || {
        let room = Arc::new(WakeWords::<AtomicU32>::default());
        let ring = Arc::new(Ring::new(1, 1, 0));
        let done = Arc::new(AtomicU32::new(0));
        let subscriber = {
            let (room, ring, done) = (room.clone(), ring.clone(), done.clone());
            thread::spawn(move || {
                protocol::release(&ring.cursors[0], 1);
                let reached = matches!(side, PublisherSide::Reached);
                if protocol::sleepers_present(&room, reached) && protocol::claim_wake(&room) {
                    protocol::bump_wake(&room);
                }
                done.fetch_add(1, Ordering::Release);
            })
        };
        // The next frame would end at 2; the limit is the cursor plus the capacity.
        let room_for_next = || protocol::write_limit(1, 1, 1, false, &ring.cursors).unwrap() >= 2;
        let barrier = || {
            fence(Ordering::SeqCst);
            true
        };
        if let protocol::Armed::Sleeping { seen, .. } = protocol::arm(&room, barrier, room_for_next) {
            sleep_while_unmoved(&room, seen, &done, 1);
            protocol::leave_sleep(&room);
            assert!(room_for_next(), "woken without the room");
        }
        subscriber.join().unwrap();
    });
}

#[test]
fn an_armed_publisher_is_always_signalled_when_room_appears() {
    room_model(PublisherSide::Reached);
}

#[test]
fn an_armed_publisher_is_signalled_by_a_fenced_subscriber() {
    room_model(PublisherSide::Unreached);
}

/// Two subscribers sleep on one channel's wake words while one publisher commits: the
/// publisher's single claim and bump must wake both, whichever order they announce,
/// clear the claim and look in. Each sleeper takes its barrier; a sleeper that decides
/// to sleep stays registered until the publisher is done (it is asleep), and then the
/// futex word must have moved past the value it sleeps on.
#[test]
fn one_wake_reaches_every_sleeper() {
    check_bounded(2, || {
        let wake = Arc::new(WakeWords::<AtomicU32>::default());
        let commit = Arc::new(AtomicBool::new(false));
        let publisher = {
            let (wake, commit) = (wake.clone(), commit.clone());
            thread::spawn(move || {
                commit.store(true, Ordering::Release);
                if protocol::sleepers_present(&wake, false) && protocol::claim_wake(&wake) {
                    protocol::bump_wake(&wake);
                }
            })
        };
        // Returns the futex value it went to sleep on, if it slept.
        let sleeper = {
            let (wake, commit) = (wake.clone(), commit.clone());
            move || {
                if commit.load(Ordering::Acquire) {
                    return None;
                }
                let seen = protocol::announce_sleep(&wake);
                fence(Ordering::SeqCst);
                if commit.load(Ordering::Acquire) {
                    protocol::leave_sleep(&wake);
                    return None;
                }
                Some(seen)
            }
        };
        let other = thread::spawn(sleeper.clone());
        let slept = [sleeper(), other.join().unwrap()];
        publisher.join().unwrap();
        for seen in slept.into_iter().flatten() {
            assert_ne!(wake.seq.load(Ordering::Acquire), seen, "lost wake-up");
        }
    });
}

/// Holder words of the two publishers in the hand-off models.
const FIRST: u64 = 1 << 32 | 7;
const SECOND: u64 = 2 << 32 | 7;

/// Writes and commits `value` at `pos`, as `Publisher::publish` does for one frame.
fn write_frame(ring: &Ring, pos: u64, value: u64) {
    let frame = ring.frame(pos);
    // SAFETY: loom's cell access; the model asserts exclusivity.
    frame.payload.with_mut(|p| unsafe { *p = value });
    protocol::commit_frame(&frame.commit, pos);
}

/// A publisher frees its slot after reporting its tail; the next publisher to claim the
/// slot starts exactly there, never on top of a frame the first one wrote (the
/// slot-handoff ordering: release with Release, claim with Acquire).
#[test]
fn a_released_slot_hands_its_tail_to_the_next_publisher() {
    check(|| {
        let ring = Arc::new(Ring::new(4, 1, 0));
        let holder = Arc::new(AtomicU64::new(FIRST));
        let first = {
            let (ring, holder) = (ring.clone(), holder.clone());
            thread::spawn(move || {
                write_frame(&ring, 0, 10);
                write_frame(&ring, 1, 11);
                protocol::report_tail(&ring.tail, 2);
                protocol::release_slot(&*holder);
            })
        };
        while !protocol::claim_free(&*holder, SECOND) {
            thread::yield_now();
        }
        let tail = protocol::reported_tail(&ring.tail);
        assert_eq!(tail, 2, "the successor starts after its predecessor's frames");
        write_frame(&ring, tail, 12);
        first.join().unwrap();
    });
}

/// A publisher dies after committing two frames but reporting only one: the successor
/// takes the slot over only once the holder is dead, recovers the true end of the ring
/// from the commit words, and appends after both frames, which stay intact.
#[test]
fn a_dead_publishers_successor_recovers_the_tail_it_did_not_report() {
    check(|| {
        let ring = Arc::new(Ring::new(4, 1, 0));
        let holder = Arc::new(AtomicU64::new(FIRST));
        let alive = Arc::new(AtomicBool::new(true));
        let first = {
            let (ring, alive) = (ring.clone(), alive.clone());
            thread::spawn(move || {
                write_frame(&ring, 0, 10);
                protocol::report_tail(&ring.tail, 1);
                write_frame(&ring, 1, 11);
                // Dies here: what the liveness check will find from now on.
                alive.store(false, Ordering::Release);
            })
        };
        let is_alive = |token: u64| token == FIRST && alive.load(Ordering::Acquire);
        while !protocol::take_over(&*holder, SECOND, is_alive, 8) {
            thread::yield_now();
        }
        // As `Shared::recover_tail`: the reported tail, then every frame committed after it.
        let mut tail = protocol::reported_tail(&ring.tail);
        while tail < ring.capacity() && protocol::is_committed(&ring.frame(tail).commit, tail) {
            tail += 1;
        }
        assert_eq!(tail, 2, "the unreported frame is found");
        for pos in 0..2 {
            // SAFETY: loom's cell access.
            ring.frame(pos).payload.with(|p| assert_eq!(unsafe { *p }, 10 + pos));
        }
        write_frame(&ring, tail, 12);
        first.join().unwrap();
    });
}

/// The last publisher commits its frames and drops (frees its slot); a subscriber that
/// sees the slot free and then finds nothing at its head has received everything that
/// publisher committed, so reporting `Disconnected` then loses nothing (SYNC POINT
/// departure: `release_slot` Release, `is_free` Acquire).
#[test]
fn a_departure_is_seen_only_after_everything_committed() {
    check(|| {
        let ring = Arc::new(Ring::new(4, 1, 0));
        let holder = Arc::new(AtomicU64::new(FIRST));
        let publisher = {
            let (ring, holder) = (ring.clone(), holder.clone());
            thread::spawn(move || {
                write_frame(&ring, 0, 10);
                write_frame(&ring, 1, 11);
                protocol::release_slot(&*holder);
            })
        };
        let mut head = 0;
        loop {
            // As `Subscriber::idle_checks`: the slot first, then one more look.
            let gone = protocol::is_free(&*holder);
            while head < ring.capacity() && protocol::is_committed(&ring.frame(head).commit, head) {
                // SAFETY: loom's cell access; the commit's Acquire ordered the write before.
                ring.frame(head).payload.with(|p| assert_eq!(unsafe { *p }, 10 + head));
                head += 1;
            }
            if gone {
                break;
            }
            thread::yield_now();
        }
        assert_eq!(head, 2, "a departure reported before a committed frame was received");
        publisher.join().unwrap();
    });
}

/// A ring a lossy subscriber reads: payload words are atomics (the reader copies them
/// while the publisher may be overwriting them, as the channel's volatile copy does), and
/// the ring's overwrite words.
struct LossyRing {
    commits: Vec<AtomicU64>,
    words: Vec<[AtomicU64; 2]>,
    overwrite: OverwriteWords<AtomicU64>,
}

/// What message `pos` holds, in two words: a copy torn between two laps has a mismatch.
fn message_words(pos: u64) -> [u64; 2] {
    [pos, !pos.rotate_left(17)]
}

/// A publisher that never waits laps a lossy subscriber in a ring of two frames. The
/// subscriber copies each frame out and keeps it only if the frontier it re-reads after
/// the copy says it was not overwritten; when overrun, it restarts at the publisher's
/// mark, whose message count equals its position here (one message per frame). It never
/// accepts a torn copy, never goes backwards, and counts exactly what it skipped. Removing
/// the frontier re-check (or the publisher's fence after storing the frontier) makes
/// loom find a torn copy that is accepted.
#[test]
fn a_lossy_reader_never_accepts_a_frame_its_publisher_overwrote() {
    const CAPACITY: u64 = 2;
    const FRAMES: u64 = 4;
    check(|| {
        let ring = Arc::new(LossyRing {
            commits: (0..CAPACITY).map(|_| AtomicU64::new(0)).collect(),
            words: (0..CAPACITY).map(|_| [AtomicU64::new(0), AtomicU64::new(0)]).collect(),
            overwrite: OverwriteWords::default(),
        });
        let publisher = lapping_publisher(&ring, FRAMES, None);
        let (head, received, missed) = read_lossy(&ring, 0, 3);
        assert_eq!(received + missed, head, "every position received or counted missed");
        publisher.join().unwrap();
    });
}

/// A publisher that never waits writes `frames` messages into `ring` (two frames), one a
/// position, publishing its frontier and mark before it laps; reports its tail if given one.
fn lapping_publisher(ring: &Arc<LossyRing>, frames: u64, tail: Option<Arc<AtomicU64>>) -> thread::JoinHandle<()> {
    let ring = ring.clone();
    let capacity = ring.commits.len() as u64;
    thread::spawn(move || {
        let mut limit = 0;
        for pos in 0..frames {
            if pos >= limit {
                // No tethered subscriber: the limit is a ring past the tail.
                limit = pos + capacity;
                protocol::advance_frontier(&ring.overwrite, limit, pos, pos);
            }
            let slot = (pos % capacity) as usize;
            for (word, value) in ring.words[slot].iter().zip(message_words(pos)) {
                word.store(value, Ordering::Relaxed);
            }
            protocol::commit_frame(&ring.commits[slot], pos);
            if let Some(tail) = &tail {
                protocol::report_tail(&**tail, pos + 1);
            }
        }
    })
}

/// A lossy reader from `head`, `looks` looks at its ring: copies each frame out and keeps
/// it only if the frontier re-read after the copy says it was not overwritten; overrun, it
/// restarts at the publisher's mark, whose message count equals its position (one message
/// a frame). Returns where it ended, what it received and what it counted missed.
fn read_lossy(ring: &LossyRing, mut head: u64, looks: usize) -> (u64, u64, u64) {
    let capacity = ring.commits.len() as u64;
    let (mut received, mut missed) = (0, 0);
    for _ in 0..looks {
        let slot = (head % capacity) as usize;
        let committed = protocol::is_committed(&ring.commits[slot], head);
        let copy = [0, 1].map(|word| ring.words[slot][word].load(Ordering::Relaxed));
        if protocol::overwritten(&ring.overwrite.frontier, head, capacity) {
            if let Some((mark, count)) = protocol::read_mark(&ring.overwrite)
                && mark > head
            {
                assert_eq!(count, mark, "the mark counts the messages before it");
                missed += mark - head;
                head = mark;
            }
            continue;
        }
        if !committed {
            thread::yield_now();
            continue;
        }
        assert_eq!(copy, message_words(head), "a torn copy was accepted");
        received += 1;
        head += 1;
    }
    (head, received, missed)
}

/// A subscriber joining with history races a publisher that laps a ring of two frames. It
/// walks back from the tail it read (`protocol::walk_back`; the model finds each frame by
/// its commit key and copies it as it goes), then reads on from the oldest frame as a
/// lossy reader. Every frame the walk returns was copied whole, as its publisher committed
/// it; reading on, every position from the start is received whole or counted missed.
/// Dropping the walk's frontier check (keeping every frame it walked) makes loom find a
/// returned frame whose copy is torn.
#[test]
fn a_history_join_racing_a_lapping_publisher_delivers_or_counts_exactly() {
    const CAPACITY: u64 = 2;
    const FRAMES: u64 = 4;
    check(|| {
        let ring = Arc::new(LossyRing {
            commits: (0..CAPACITY).map(|_| AtomicU64::new(0)).collect(),
            words: (0..CAPACITY).map(|_| [AtomicU64::new(0), AtomicU64::new(0)]).collect(),
            overwrite: OverwriteWords::default(),
        });
        let tail = Arc::new(AtomicU64::new(0));
        let publisher = lapping_publisher(&ring, FRAMES, Some(tail.clone()));
        let joined_at = protocol::reported_tail(&*tail);
        let mut copies = Vec::new();
        let walked = protocol::walk_back(&ring.overwrite.frontier, CAPACITY, joined_at, 0, None, |end, lowest| {
            // One frame per position here: the frame before `end` starts at `end - 1`.
            let at = end - 1;
            let slot = (at % CAPACITY) as usize;
            if at < lowest || !protocol::is_committed(&ring.commits[slot], at) {
                return None;
            }
            copies.push((at, [0, 1].map(|word| ring.words[slot][word].load(Ordering::Relaxed))));
            Some((at, 0))
        });
        for &(at, _) in &walked {
            let copy = copies.iter().find(|(walked_at, _)| *walked_at == at).unwrap().1;
            assert_eq!(
                copy,
                message_words(at),
                "the walk returned a frame overwritten while it was read"
            );
        }
        let start = walked.first().map_or(joined_at, |&(at, _)| at);
        let (head, received, missed) = read_lossy(&ring, start, 3);
        assert_eq!(
            received + missed,
            head - start,
            "every position received or counted missed"
        );
        publisher.join().unwrap();
    });
}
