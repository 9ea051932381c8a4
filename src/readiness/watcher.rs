//! The watcher: one thread per channel mapping and wake line in a process, asleep on the
//! line's futex word for every armed handle of that mapping at once, which makes each
//! one's descriptor readable when a waker moves the word.
//!
//! Every armed handle is a registered sleeper (`protocol::announce_sleep`), so wakers see
//! it exactly as they see a subscriber parked in `recv`: the first commit (or release)
//! after it armed claims the wake, bumps the word and wakes every futex waiter, this
//! thread among them. The thread then leaves each woken handle's sleep and signals its
//! descriptor, under the lock the handle takes to check whether it is still armed.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use super::notify::NotifyFd;
use crate::platform;
use crate::protocol;
use crate::region::Shared;
use crate::wire::layout::WakeWord;

/// Longest futex wait while every armed handle took the sleeper's barrier. Only a waker
/// that claimed the wake and then died or stalled before bumping the word can leave the
/// thread asleep past a commit; after this long it notices the stale claim and signals
/// every armed handle, which re-checks.
const WATCH: Duration = Duration::from_secs(1);

/// How often the thread asks, while handles are armed, whether a peer they wait on (a
/// publisher, for subscribers; a subscriber, for publishers) died: a dead process wakes
/// nobody, so this bounds how long a watched handle takes to hear of a crash.
pub(crate) const LIVENESS: Duration = Duration::from_millis(100);

/// Which of a channel's wake lines a watcher sleeps on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// Subscribers waiting for messages; publishers wake them.
    Messages = 0,
    /// Publishers waiting for room; subscribers wake them.
    Room = 1,
}

impl Line {
    pub(crate) fn word(self, shared: &Shared) -> &WakeWord {
        match self {
            Line::Messages => &shared.hot().wake,
            Line::Room => &shared.hot().room,
        }
    }
}

/// A mapping's watchers, one per line, kept while any handle of this process uses one;
/// held in the mapping's `Shared::locals`.
#[derive(Default)]
struct Watchers([Mutex<Weak<Watcher>>; 2]);

/// One handle's part: its descriptor and whether it is armed (a registered sleeper that
/// the watcher has not yet signalled). `armed` changes only under the watcher's lock,
/// which orders everything about it; the atomic only lets the handle skip the lock when
/// it is not armed. Relaxed suffices for that: the handle set it itself, so by coherence
/// it reads its own `true` or the watcher's later `false`, never an older value.
pub(crate) struct Slot {
    pub(crate) fd: NotifyFd,
    armed: std::sync::atomic::AtomicBool,
}

impl Slot {
    pub(crate) fn new(fd: NotifyFd) -> Self {
        Slot {
            fd,
            armed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Whether the handle may be armed; only `Watcher::is_armed` says for sure.
    pub(crate) fn maybe_armed(&self) -> bool {
        self.armed.load(Ordering::Relaxed)
    }
}

struct Entry {
    slot: Arc<Slot>,
    seen: u32,
    /// Signalled after this long even if no waker moved the word (see `Watcher::add`).
    recheck: Option<Duration>,
}

#[derive(Default)]
struct State {
    armed: Vec<Entry>,
    stop: bool,
}

struct Inner {
    state: Mutex<State>,
    changed: Condvar,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing in the critical sections panics; a poisoned lock still holds sound state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The thread watching one line of one mapping. Dropped with the last handle using it:
/// the thread is stopped and joined, and only then does it let go of the mapping.
pub(crate) struct Watcher {
    inner: Arc<Inner>,
    shared: Arc<Shared>,
    line: Line,
    thread: Option<JoinHandle<()>>,
    /// The process that started the thread: a `fork()` child has no such thread.
    pid: u32,
}

impl Watcher {
    /// The watcher of `line` for this mapping, started if no handle uses one now.
    pub(crate) fn get(shared: &Arc<Shared>, line: Line) -> std::io::Result<Arc<Watcher>> {
        let watchers = shared.locals.get_or_init(|| Box::<Watchers>::default());
        let watchers = watchers
            .downcast_ref::<Watchers>()
            .expect("only readiness keeps state in `locals`");
        let mut cell = watchers.0[line as usize].lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(watcher) = cell.upgrade() {
            return Ok(watcher);
        }
        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let thread = {
            let (inner, shared) = (inner.clone(), shared.clone());
            std::thread::Builder::new()
                .name("salias-watch".to_owned())
                .stack_size(128 * 1024)
                .spawn(move || run(&inner, &shared, line))?
        };
        let watcher = Arc::new(Watcher {
            inner,
            shared: shared.clone(),
            line,
            thread: Some(thread),
            pid: std::process::id(),
        });
        *cell = Arc::downgrade(&watcher);
        Ok(watcher)
    }

    /// Hands an armed handle to the thread: it stays a registered sleeper until the
    /// word moves past `seen`, or for at most `recheck` if that is set: when the handle
    /// skipped the sleeper's barrier (a racing waker may not move the word), or when
    /// what it waits for can come without a wake.
    pub(crate) fn add(&self, slot: &Arc<Slot>, seen: u32, recheck: Option<Duration>) {
        let mut state = self.inner.lock();
        slot.armed.store(true, Ordering::Relaxed);
        state.armed.push(Entry {
            slot: slot.clone(),
            seen,
            recheck,
        });
        drop(state);
        self.inner.changed.notify_one();
    }

    /// Whether `slot` is armed: not yet signalled by the thread.
    pub(crate) fn is_armed(&self, slot: &Slot) -> bool {
        let _state = self.inner.lock();
        slot.armed.load(Ordering::Relaxed)
    }

    /// A handle going away: if it is still armed, its sleep ends here.
    pub(crate) fn remove(&self, slot: &Arc<Slot>) {
        if std::process::id() != self.pid {
            return; // a fork child: the parent's thread and lock are not ours
        }
        let mut state = self.inner.lock();
        if let Some(at) = state.armed.iter().position(|e| Arc::ptr_eq(&e.slot, slot)) {
            state.armed.swap_remove(at);
            slot.armed.store(false, Ordering::Relaxed);
            protocol::leave_sleep(self.line.word(&self.shared));
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let Some(thread) = self.thread.take() else { return };
        if std::process::id() != self.pid {
            // A fork child: no thread to stop; its handle must not be joined.
            std::mem::forget(thread);
            return;
        }
        self.inner.lock().stop = true;
        self.inner.changed.notify_one();
        // The thread may be in (or about to enter) its futex wait: moving the word makes
        // that wait return at once. Other sleepers on this word, in any process, wake
        // spuriously, re-check and sleep again: once per watcher, when its last handle goes.
        crate::wait::wake_everyone(self.line.word(&self.shared));
        let _ = thread.join();
    }
}

/// The thread: sleeps while nothing is armed, else on the word, and signals every armed
/// handle the word has moved past.
fn run(inner: &Inner, shared: &Shared, line: Line) {
    let word = line.word(shared);
    let mut state = inner.lock();
    loop {
        if state.stop {
            return;
        }
        if state.armed.is_empty() {
            state = inner.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        // SYNC POINT wake-bump (watcher side): pairs with `protocol::bump_wake`.
        let now = word.seq.load(Ordering::Acquire);
        fire(&mut state, word, |entry| entry.seen != now);
        if state.armed.is_empty() {
            continue;
        }
        let longest = state
            .armed
            .iter()
            .filter_map(|entry| entry.recheck)
            .fold(WATCH, Duration::min);
        drop(state);
        let peers = Peers::of(shared, line);
        let longest = if peers.others_hold_slots() {
            longest.min(LIVENESS)
        } else {
            longest
        };
        platform::wait(&word.seq, now, longest);
        state = inner.lock();
        // SYNC POINT wake-bump (watcher side), as above.
        if word.seq.load(Ordering::Acquire) == now {
            // Timed out or woken spuriously. A claim still set means a waker claimed
            // after the last sleeper announced but has not bumped the word: it died or
            // stalled, so everyone re-checks. A handle that asked to re-check does so
            // (a spurious readiness each time, see `Subscriber::as_fd`).
            let stale_claim = word.woken.load(Ordering::Relaxed) != 0;
            // A peer that died wakes nobody: every armed handle looks, and hears of it.
            let peer_died = peers.any_dead();
            fire(&mut state, word, |entry| {
                (stale_claim && entry.seen == now) || entry.recheck.is_some() || peer_died
            });
        }
    }
}

/// The slots of the side the handles on a line wait on: publishers for the messages
/// line, subscribers for the room line.
struct Peers<'a> {
    shared: &'a Shared,
    line: Line,
    me: u64,
}

impl<'a> Peers<'a> {
    fn of(shared: &'a Shared, line: Line) -> Self {
        Peers {
            shared,
            line,
            me: platform::Identity::current().token(),
        }
    }

    fn tokens(&self) -> impl Iterator<Item = u64> + '_ {
        let shared = self.shared;
        let slots = match self.line {
            Line::Messages => shared.publishers,
            Line::Room => shared.subscribers,
        };
        (0..slots as usize)
            .map(move |slot| {
                let holder = match self.line {
                    Line::Messages => &shared.publisher_slot(slot).holder,
                    Line::Room => &shared.subscriber_slot(slot).holder,
                };
                holder.token.load(Ordering::Relaxed)
            })
            .filter(|&token| token != crate::wire::layout::SLOT_FREE && token != self.me)
    }

    /// Whether another process holds one of the slots (one that could die unheard).
    fn others_hold_slots(&self) -> bool {
        self.tokens().next().is_some()
    }

    /// Whether a holder of another process died (system calls, at most once a `LIVENESS`).
    fn any_dead(&self) -> bool {
        self.tokens().any(|token| !platform::token_alive(token))
    }
}

/// Leaves the sleep of, and signals, every armed handle that `woken` picks.
fn fire(state: &mut State, word: &WakeWord, woken: impl Fn(&Entry) -> bool) {
    let mut at = 0;
    while at < state.armed.len() {
        if woken(&state.armed[at]) {
            let entry = state.armed.swap_remove(at);
            protocol::leave_sleep(word);
            entry.slot.fd.signal();
            entry.slot.armed.store(false, Ordering::Relaxed);
        } else {
            at += 1;
        }
    }
}
