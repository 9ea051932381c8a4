//! Which core each process of a run is pinned to, and the pinning itself. The placement
//! is part of every figure (doc/benchmarking.md rule 2), so it is also written down.

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The machine's cores, counted once and remembered: count them before pinning anything,
/// as a pinned process sees only its own core.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Pins the calling thread (and the processes it starts later) to `core`.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn pin(core: usize) -> Result<(), PinError> {
    use rustix::thread::{CpuSet, sched_setaffinity};
    if core >= CpuSet::MAX_CPU {
        return Err(PinError { core, source: None });
    }
    let mut set = CpuSet::new();
    set.set(core);
    sched_setaffinity(None, &set).map_err(|e| PinError {
        core,
        source: Some(e.into()),
    })
}

/// Pins the calling thread to `core`: not on this platform, which has no affinity call.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn pin(core: usize) -> Result<(), PinError> {
    Err(PinError {
        core,
        source: Some(std::io::ErrorKind::Unsupported.into()),
    })
}

/// The calling thread could not be pinned.
#[derive(Debug)]
pub struct PinError {
    core: usize,
    /// Why the system refused; none when the core is beyond any the system can name.
    source: Option<std::io::Error>,
}

impl fmt::Display for PinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot pin to core {}", self.core)?;
        if let Some(source) = &self.source {
            write!(f, ": {source}")?;
        }
        write!(
            f,
            " (this machine has {} cores, 0 to {}; name one of those)",
            cores(),
            cores() - 1
        )
    }
}

impl std::error::Error for PinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}

/// Runs `first` on a new thread pinned to core `a` and `second` on one pinned to `b`, and
/// returns what `first` returns. Both pin, then meet: if either cannot, neither runs (the
/// other would spin forever waiting for it). New threads, so the caller's own affinity,
/// which the processes it starts inherit, stays as it was.
pub fn on_two_cores<R: Send>(
    a: usize,
    b: usize,
    first: impl FnOnce() -> R + Send,
    second: impl FnOnce() + Send,
) -> Result<R, PinError> {
    let pinned = std::sync::Barrier::new(2);
    let failed = AtomicBool::new(false);
    let place = |core: usize| {
        let placed = pin(core);
        if placed.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        // The barrier orders the flag: both read it after both wrote it.
        pinned.wait();
        placed.map(|()| !failed.load(Ordering::Relaxed))
    };
    std::thread::scope(|scope| {
        let other = scope.spawn(|| {
            if place(b)? {
                second();
            }
            Ok::<(), PinError>(())
        });
        let mine = scope.spawn(|| Ok::<_, PinError>(if place(a)? { Some(first()) } else { None }));
        let mine = mine.join().expect("the first side does not panic");
        other.join().expect("the second side does not panic")?;
        // Both sides pinned, or the side that failed returned its error above.
        Ok(mine?.expect("both sides were pinned"))
    })
}

/// Which end of a channel a process is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Sends: placed from the first core up.
    Publisher,
    /// Receives: placed from the last core down.
    Subscriber,
}

impl Side {
    /// `P` or `S`, as the placement writes it.
    pub fn letter(self) -> char {
        match self {
            Side::Publisher => 'P',
            Side::Subscriber => 'S',
        }
    }
}

/// The core of the `index`th process on `side`: publishers on the first cores,
/// subscribers on the last, so one publisher and one subscriber never share a core (on
/// two cores: P0@0, S0@1). More processes than cores share them, and say so in the
/// placement.
pub fn core_for(side: Side, index: usize) -> usize {
    let cores = cores().max(1);
    match side {
        Side::Publisher => index % cores,
        Side::Subscriber => (cores - 1 - index % cores) % cores,
    }
}

/// A run's placement, written `S0@1 P0@0`: role letter, index, `@`, core.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement(Vec<(Side, usize, usize)>);

impl Placement {
    /// An empty placement.
    pub fn new() -> Placement {
        Placement::default()
    }

    /// Places the `index`th process on `side` by [`core_for`], notes it and returns its
    /// core.
    pub fn place(&mut self, side: Side, index: usize) -> usize {
        let core = core_for(side, index);
        self.0.push((side, index, core));
        core
    }

    /// Notes that the `index`th process on `side` runs on `core`, placed by the caller.
    pub fn note(&mut self, side: Side, index: usize, core: usize) {
        self.0.push((side, index, core));
    }

    /// How many processes were placed.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (side, index, core)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}{index}@{core}", side.letter())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publishers_and_subscribers_start_at_opposite_ends() {
        let last = cores() - 1;
        assert_eq!(core_for(Side::Publisher, 0), 0);
        assert_eq!(core_for(Side::Subscriber, 0), last);
        assert_eq!(core_for(Side::Publisher, cores()), 0, "wraps round");
    }

    #[test]
    fn placement_reads_role_index_at_core() {
        let mut placement = Placement::new();
        placement.note(Side::Subscriber, 0, 1);
        placement.note(Side::Publisher, 0, 0);
        placement.note(Side::Publisher, 1, 1);
        assert_eq!(placement.to_string(), "S0@1 P0@0 P1@1");
        assert_eq!(placement.len(), 3);
    }

    #[test]
    fn a_core_out_of_range_is_refused_with_the_range() {
        let error = pin(usize::MAX).unwrap_err().to_string();
        assert!(error.contains("cannot pin to core"), "{error}");
        assert!(error.contains("cores, 0 to"), "{error}");
    }
}
