//! The CPU's counter as a clock: `rdtsc` on x86_64, `cntvct_el0` on aarch64, calibrated
//! against `CLOCK_MONOTONIC` at run time (doc/benchmarking.md rule 6; never a hard-coded
//! frequency), and refused with a reason when it cannot be trusted: a counter that is
//! not invariant, that the calibration finds unsteady, or that two cores disagree on.
//!
//! Assumption, checked by [`sync_check`]: on a machine with an invariant counter every
//! core reads the same counter, so a stamp taken on one core may be subtracted from one
//! taken on another (the open loop stamps in one process and reads in another).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering, compiler_fence};

use serde::{Deserialize, Serialize};

use crate::cores::{PinError, on_two_cores};

/// The instruction that reads the counter here, or `None` where there is none.
pub const COUNTER: Option<&str> = if cfg!(target_arch = "x86_64") {
    Some("lfence; rdtsc")
} else if cfg!(target_arch = "aarch64") {
    Some("isb; mrs cntvct_el0")
} else {
    None
};

/// The counter now, in ticks.
///
/// x86_64: `rdtsc` is not ordered with the instructions around it; a stamp after a spin
/// loop could be taken before the load that ended the loop has its value, and the figure
/// would be short. `lfence` first waits until every earlier instruction has completed
/// locally (Intel SDM; AMD with the dispatch-serialising `lfence` Linux enables), so the
/// stamp follows the load it times. `rdtscp` would also wait for earlier loads, but lets
/// later instructions start before it; `lfence; rdtsc` is one form for both the start
/// and the end stamp. Stores cannot become visible before an earlier `rdtsc`: they leave
/// the store buffer only after retiring, in order.
///
/// aarch64: `isb` keeps the `cntvct_el0` read from being taken early in the same way.
///
/// Elsewhere there is no counter: [`crate::clock::LatencyClock::detect`] refuses it there
/// (`COUNTER` is `None`), and this returns `CLOCK_MONOTONIC` ns so it is never garbage.
#[inline(always)]
pub fn ticks() -> u64 {
    // The compiler must not move memory accesses across the stamp either.
    compiler_fence(Ordering::SeqCst);
    let t = read_counter();
    compiler_fence(Ordering::SeqCst);
    t
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn read_counter() -> u64 {
    // SAFETY: `lfence` (SSE2, part of every x86_64) and `rdtsc` (every x86_64, usable from
    // user mode unless the kernel set CR4.TSD, which Linux does not) touch no memory and
    // have no preconditions.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn read_counter() -> u64 {
    let t: u64;
    // SAFETY: `isb` and reading `cntvct_el0` have no preconditions; Linux lets user mode
    // read the virtual counter (CNTKCTL_EL1.EL0VCTEN). The asm writes only `t`.
    unsafe { core::arch::asm!("isb", "mrs {t}, cntvct_el0", t = out(reg) t, options(nostack, preserves_flags)) };
    t
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
fn read_counter() -> u64 {
    crate::clock::now_ns()
}

/// Why the counter is not used as the clock.
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// This architecture has no counter this crate can read.
    NoCounter,
    /// /proc/cpuinfo could not be read, so invariance is unknown.
    CpuInfo(String),
    /// The counter is not invariant: these /proc/cpuinfo flags are missing.
    NotInvariant(Vec<&'static str>),
    /// Two calibration windows disagree on the frequency by more than [`STEADY`].
    Unsteady {
        /// Ticks per second of the first window.
        first: f64,
        /// Ticks per second of the second window.
        second: f64,
    },
    /// The counter or `CLOCK_MONOTONIC` did not advance over a calibration window.
    NotCounting,
    /// Two cores' counters differ by more than a round trip between them can explain.
    Unsynchronised(SyncCheck),
    /// The two cores of a sync check could not be had.
    Pin(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NoCounter => write!(
                f,
                "this architecture has no counter the harness reads (x86_64 and aarch64 do)"
            ),
            Refusal::CpuInfo(e) => write!(f, "cannot read /proc/cpuinfo to check that the TSC is invariant: {e}"),
            Refusal::NotInvariant(missing) => write!(
                f,
                "the TSC is not invariant: /proc/cpuinfo lacks the flag(s) {}; its rate may change with the core's \
                 frequency or stop in sleep states",
                missing.join(", ")
            ),
            Refusal::Unsteady { first, second } => write!(
                f,
                "the counter's calibration is unsteady: {first:.0} then {second:.0} ticks/s in two windows \
                 (more than {STEADY} apart); run on a quieter machine"
            ),
            Refusal::NotCounting => write!(f, "the counter or CLOCK_MONOTONIC did not advance while calibrating"),
            Refusal::Unsynchronised(c) => write!(
                f,
                "the counters of cores {} and {} differ by {:.0} ns, more than the {:.0} ns a round trip between \
                 them explains; stamps from two cores could not be subtracted",
                c.cores[0], c.cores[1], c.offset_ns, c.bound_ns
            ),
            Refusal::Pin(e) => write!(f, "cannot check that the cores' counters agree: {e}"),
        }
    }
}

impl std::error::Error for Refusal {}

/// The flags /proc/cpuinfo must show for an x86 TSC to be a clock: a constant rate
/// whatever the core's frequency, and counting through sleep states.
pub const INVARIANT_FLAGS: [&str; 2] = ["constant_tsc", "nonstop_tsc"];

/// Whether the counter described by `cpuinfo` (the text of /proc/cpuinfo) is invariant.
/// On aarch64 the generic timer's counter is architecturally one constant-rate system
/// counter for every core, so there is nothing to look for.
pub fn invariance(cpuinfo: &str) -> Result<(), Refusal> {
    if cfg!(target_arch = "aarch64") {
        return Ok(());
    }
    if COUNTER.is_none() {
        return Err(Refusal::NoCounter);
    }
    x86_invariance(cpuinfo)
}

/// [`invariance`] by the x86 flags, on any architecture (tests).
pub fn x86_invariance(cpuinfo: &str) -> Result<(), Refusal> {
    // Every core must have them: look at every `flags` line.
    let lines: Vec<&str> = cpuinfo.lines().filter(|l| l.starts_with("flags")).collect();
    let missing: Vec<&'static str> = INVARIANT_FLAGS
        .into_iter()
        .filter(|flag| lines.is_empty() || !lines.iter().all(|l| l.split_whitespace().any(|w| w == *flag)))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Refusal::NotInvariant(missing))
    }
}

/// How far apart two calibration windows' frequencies may be, relative.
pub const STEADY: f64 = 1e-4;

/// Ticks → ns: the counter's rate and the tick that is 0 ns. Every process of a run uses
/// the parent's, so their stamps are on one timeline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The counter's ticks at 0 ns of this clock.
    pub base_ticks: u64,
    /// Ticks per second, measured against `CLOCK_MONOTONIC`.
    pub ticks_per_s: f64,
}

impl Calibration {
    /// Nanoseconds per tick.
    pub fn ns_per_tick(&self) -> f64 {
        1e9 / self.ticks_per_s
    }

    /// `ticks` as ns since `base_ticks` (0 before it).
    #[inline(always)]
    pub fn ns(&self, ticks: u64) -> u64 {
        (ticks.saturating_sub(self.base_ticks) as f64 * 1e9 / self.ticks_per_s).round() as u64
    }
}

/// A (ticks, monotonic ns) pair taken as close together as `ticks` and `mono` allow:
/// the counter read between two monotonic reads, the narrowest of 16 tries, paired with
/// their midpoint.
fn pair(ticks: &mut impl FnMut() -> u64, mono: &mut impl FnMut() -> u64) -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..16 {
        let before = mono();
        let t = ticks();
        let after = mono();
        let width = after.saturating_sub(before);
        if width < best.0 {
            best = (width, t, before + width / 2);
        }
    }
    (best.1, best.2)
}

/// Calibrates `ticks` against `mono` (ns) over two windows of `window_ns` each; refuses
/// when either does not advance or the windows disagree by more than [`STEADY`].
pub fn calibrate(
    mut ticks: impl FnMut() -> u64,
    mut mono: impl FnMut() -> u64,
    window_ns: u64,
) -> Result<Calibration, Refusal> {
    let mut points = [(0, 0); 3];
    for (i, point) in points.iter_mut().enumerate() {
        if i > 0 {
            let start = mono();
            while mono().saturating_sub(start) < window_ns {
                std::hint::spin_loop();
            }
        }
        *point = pair(&mut ticks, &mut mono);
    }
    let rate = |(t0, n0): (u64, u64), (t1, n1): (u64, u64)| {
        let (dt, dn) = (t1.saturating_sub(t0), n1.saturating_sub(n0));
        if dt == 0 || dn == 0 {
            Err(Refusal::NotCounting)
        } else {
            Ok(dt as f64 * 1e9 / dn as f64)
        }
    };
    let (first, second) = (rate(points[0], points[1])?, rate(points[1], points[2])?);
    if (first - second).abs() > STEADY * first {
        return Err(Refusal::Unsteady { first, second });
    }
    Ok(Calibration {
        base_ticks: points[0].0,
        ticks_per_s: rate(points[0], points[2])?,
    })
}

/// The smallest non-zero difference between consecutive values of `read` over `reads`
/// reads: the step a stamp can really show; 0 if it never moved.
pub fn smallest_step(mut read: impl FnMut() -> u64, reads: usize) -> u64 {
    let mut last = read();
    let mut smallest = u64::MAX;
    for _ in 0..reads {
        let now = read();
        let d = now.wrapping_sub(last);
        if d != 0 && d < smallest {
            smallest = d;
        }
        last = now;
    }
    if smallest == u64::MAX { 0 } else { smallest }
}

/// Two cores' counters compared: core `cores[1]` stamps when a ping from `cores[0]`
/// arrives; `cores[0]` stamps before sending and after the echo. If the counters agree,
/// the remote stamp lies between the two, so its distance from their midpoint is at most
/// half the round trip. The narrowest round trip of the check is kept.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyncCheck {
    /// The two cores: the one that pings, the one that stamps.
    pub cores: [usize; 2],
    /// The remote stamp minus the midpoint of the local ones, ns.
    pub offset_ns: f64,
    /// Half the round trip: the largest offset that agreeing counters can show, ns.
    pub bound_ns: f64,
}

impl SyncCheck {
    /// Whether the offset is within the bound.
    pub fn agrees(&self) -> bool {
        self.offset_ns.abs() <= self.bound_ns
    }
}

/// The narrowest of `round_trips` (local before, remote, local after) stamp triples as a
/// [`SyncCheck`] of `cores`.
pub fn sync_of(cores: [usize; 2], triples: &[(u64, u64, u64)], ns_per_tick: f64) -> Option<SyncCheck> {
    let &(before, remote, after) = triples.iter().min_by_key(|(b, _, a)| a.saturating_sub(*b))?;
    let mid = before as f64 + (after - before) as f64 / 2.0;
    Some(SyncCheck {
        cores,
        offset_ns: (remote as f64 - mid) * ns_per_tick,
        bound_ns: (after - before) as f64 / 2.0 * ns_per_tick,
    })
}

/// Compares the counters of cores `a` and `b` by `round_trips` round trips between two
/// threads pinned to them.
pub fn sync_check(a: usize, b: usize, round_trips: u64, ns_per_tick: f64) -> Result<SyncCheck, PinError> {
    let ping = AtomicU64::new(0);
    let pong = AtomicU64::new(0);
    let stamp = AtomicU64::new(0);
    let triples = on_two_cores(
        a,
        b,
        || {
            let mut triples = Vec::with_capacity(round_trips as usize);
            for i in 1..=round_trips {
                let before = ticks();
                // SYNC POINT tsc-ping: pairs with the Acquire load of the stamping side.
                ping.store(i, Ordering::Release);
                // SYNC POINT tsc-pong: pairs with the Release store of the stamping side;
                // its stamp was written before it.
                while pong.load(Ordering::Acquire) != i {
                    std::hint::spin_loop();
                }
                let remote = stamp.load(Ordering::Relaxed);
                triples.push((before, remote, ticks()));
            }
            triples
        },
        || {
            for i in 1..=round_trips {
                // SYNC POINT tsc-ping: pairs with the pinger's Release store.
                while ping.load(Ordering::Acquire) != i {
                    std::hint::spin_loop();
                }
                stamp.store(ticks(), Ordering::Relaxed);
                // SYNC POINT tsc-pong: pairs with the pinger's Acquire load.
                pong.store(i, Ordering::Release);
            }
        },
    )?;
    Ok(sync_of([a, b], &triples, ns_per_tick).expect("at least one round trip"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A fake machine: every read advances time by 1 ns; the counter runs at `per_ns`
    /// ticks a ns.
    fn fake(per_ns: u64) -> (impl FnMut() -> u64, impl FnMut() -> u64) {
        let time = std::rc::Rc::new(Cell::new(1_000u64));
        let (t1, t2) = (time.clone(), time);
        (
            move || {
                t1.set(t1.get() + 1);
                t1.get() * per_ns
            },
            move || {
                t2.set(t2.get() + 1);
                t2.get()
            },
        )
    }

    #[test]
    fn a_fake_counter_calibrates_exactly() {
        let (ticks, mono) = fake(3);
        let c = calibrate(ticks, mono, 10_000).unwrap();
        assert_eq!(c.ticks_per_s, 3e9);
        assert_eq!(c.ns(c.base_ticks + 3_000), 1_000);
        assert_eq!(c.ns(c.base_ticks + 3_000_000_000), 1_000_000_000);
        assert_eq!(c.ns(c.base_ticks - 5), 0, "before the base is 0");
        assert!((c.ns_per_tick() - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_counter_that_stands_still_or_changes_rate_is_refused() {
        let (_, mono) = fake(1);
        assert_eq!(calibrate(|| 7, mono, 1_000), Err(Refusal::NotCounting));
        // 2 ticks a ns until 2600 ns, then 3: the second window (from about 2100 ns to
        // 3200 ns) disagrees with the first.
        let time = std::rc::Rc::new(Cell::new(1_000u64));
        let clock = time.clone();
        let ticks = move || {
            clock.set(clock.get() + 1);
            let t = clock.get();
            if t < 2_600 { 2 * t } else { 5_200 + 3 * (t - 2_600) }
        };
        let mono = move || {
            time.set(time.get() + 1);
            time.get()
        };
        let refusal = calibrate(ticks, mono, 1_000).unwrap_err();
        assert!(matches!(refusal, Refusal::Unsteady { .. }), "{refusal:?}");
        assert!(refusal.to_string().contains("unsteady"), "{refusal}");
    }

    #[test]
    fn a_tsc_without_the_invariant_flags_is_refused_by_name() {
        let good = "flags\t: fpu tsc constant_tsc nonstop_tsc\nflags\t: fpu constant_tsc nonstop_tsc\n";
        assert_eq!(x86_invariance(good), Ok(()));
        let one_core_lacks = "flags\t: constant_tsc nonstop_tsc\nflags\t: constant_tsc\n";
        let refusal = x86_invariance(one_core_lacks).unwrap_err();
        assert_eq!(refusal, Refusal::NotInvariant(vec!["nonstop_tsc"]));
        assert!(
            refusal.to_string().contains("lacks the flag(s) nonstop_tsc"),
            "{refusal}"
        );
        assert_eq!(
            x86_invariance("model name : x"),
            Err(Refusal::NotInvariant(INVARIANT_FLAGS.to_vec()))
        );
    }

    #[test]
    fn the_sync_check_keeps_the_narrowest_round_trip() {
        // Remote 10 ticks past the midpoint of the narrow trip: outside its bound of 5.
        let check = sync_of([0, 1], &[(0, 500, 1000), (100, 115, 110)], 2.0).unwrap();
        assert_eq!((check.offset_ns, check.bound_ns), (20.0, 10.0));
        assert!(!check.agrees());
        assert!(sync_of([0, 1], &[(0, 60, 100)], 1.0).unwrap().agrees());
        assert!(
            Refusal::Unsynchronised(check)
                .to_string()
                .contains("cores 0 and 1 differ by 20 ns")
        );
    }

    #[test]
    fn the_smallest_step_skips_repeats() {
        let values = [5u64, 5, 9, 9, 12, 20];
        let i = Cell::new(0);
        let read = || {
            let v = values[i.get().min(values.len() - 1)];
            i.set(i.get() + 1);
            v
        };
        assert_eq!(smallest_step(read, 5), 3);
        assert_eq!(smallest_step(|| 4, 10), 0);
    }

    #[test]
    fn this_machines_counter_advances_and_its_cores_agree_or_say_why() {
        let a = ticks();
        assert!(ticks() > a || COUNTER.is_none());
        let cores = crate::cores::cores();
        if COUNTER.is_some() && cores >= 2 {
            let check = sync_check(0, 1, 200, 1.0).unwrap();
            assert!(check.bound_ns > 0.0, "{check:?}");
        }
    }
}
