//! `salias hz NAME`: a channel's message rate, measured by receiving it. Every `--interval`
//! seconds it prints the window just ended: messages and bytes per second in all and per
//! publisher slot, the inter-arrival time between messages as received here (mean, min,
//! max, standard deviation), and messages missed.
//!
//! It reads as any subscriber does (lossy on Fanout by default, so it never slows the
//! feed), timing each message when it receives it: a backlog received in one burst shows
//! as short inter-arrival times, as `ros2 topic hz` shows a burst.

use std::collections::BTreeMap;
use std::io::Write;
use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use salias::Trust;
use salias::receive::Start;
use serde::Serialize;

use crate::commands::Done;
use crate::tap::{self, Go, Reading, Stopped};

/// What `hz` was asked for.
pub(crate) struct Hz {
    pub interval: Duration,
    pub iterations: Option<NonZeroU64>,
    pub json: bool,
    pub reading: Option<Reading>,
}

/// One window's figures; a `--json` line.
#[derive(Serialize, Default)]
struct Window {
    name: String,
    refresh: u64,
    /// Seconds the window lasted.
    seconds: f64,
    messages: u64,
    bytes: u64,
    /// Messages per second.
    rate: f64,
    /// Bytes per second.
    bytes_rate: f64,
    /// Between consecutive messages received in the window; null with fewer than two.
    interarrival_ns: Option<Spread>,
    publishers: Vec<Slot>,
    /// Messages missed in the window (a lossy reader overrun, sequence numbers lost).
    missed: u64,
}

#[derive(Serialize)]
struct Spread {
    mean: f64,
    min: u64,
    max: u64,
    std: f64,
}

#[derive(Serialize, Default, Clone)]
struct Slot {
    slot: usize,
    messages: u64,
    bytes: u64,
    rate: f64,
    bytes_rate: f64,
}

/// Inter-arrival times, summed as they come (Welford's running variance).
#[derive(Default)]
struct Gaps {
    count: u64,
    mean: f64,
    m2: f64,
    min: u64,
    max: u64,
}

impl Gaps {
    fn add(&mut self, ns: u64) {
        self.min = if self.count == 0 { ns } else { self.min.min(ns) };
        self.max = self.max.max(ns);
        self.count += 1;
        let delta = ns as f64 - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (ns as f64 - self.mean);
    }

    fn spread(&self) -> Option<Spread> {
        (self.count > 0).then(|| Spread {
            mean: self.mean,
            min: self.min,
            max: self.max,
            std: (self.m2 / self.count as f64).sqrt(),
        })
    }
}

pub(crate) fn hz(name: &str, trust: &Trust, asked: &Hz) -> Result<Done, String> {
    let mut opened = tap::open(name, trust, asked.reading, Start::End)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut refresh = 0u64;
    let mut last: Option<Instant> = None;
    loop {
        refresh += 1;
        let started = Instant::now();
        let mut window = Window {
            name: name.to_owned(),
            refresh,
            ..Window::default()
        };
        let mut slots: BTreeMap<usize, Slot> = BTreeMap::new();
        let mut gaps = Gaps::default();
        let stopped = tap::pump(name, &mut opened, Some(started + asked.interval), None, |message| {
            let now = Instant::now();
            if let Some(last) = last {
                gaps.add(u64::try_from(now.duration_since(last).as_nanos()).unwrap_or(u64::MAX));
            }
            last = Some(now);
            let len = message.bytes.len() as u64;
            window.messages += 1;
            window.bytes += len;
            window.missed += message.missed_before;
            let slot = slots.entry(message.slot).or_insert_with(|| Slot {
                slot: message.slot,
                ..Slot::default()
            });
            slot.messages += 1;
            slot.bytes += len;
            Go::On
        })?;
        let seconds = started.elapsed().as_secs_f64();
        window.seconds = seconds;
        window.rate = window.messages as f64 / seconds;
        window.bytes_rate = window.bytes as f64 / seconds;
        window.interarrival_ns = gaps.spread();
        window.publishers = slots
            .into_values()
            .map(|mut slot| {
                slot.rate = slot.messages as f64 / seconds;
                slot.bytes_rate = slot.bytes as f64 / seconds;
                slot
            })
            .collect();
        let printed = if asked.json {
            serde_json::to_string(&window).map_or(Ok(()), |line| writeln!(out, "{line}"))
        } else {
            write!(out, "{}", text(&window))
        };
        if printed.and_then(|()| out.flush()).is_err() {
            // Nobody reads any more.
            return Ok(Done::Clean);
        }
        if stopped == Stopped::Interrupted || asked.iterations.is_some_and(|n| refresh >= n.get()) {
            return Ok(Done::Clean);
        }
    }
}

fn text(window: &Window) -> String {
    let mut text = format!(
        "{}: {} msg/s, {}/s ({} messages in {:.2} s)\n",
        window.name,
        si(window.rate),
        bytes(window.bytes_rate),
        window.messages,
        window.seconds
    );
    match &window.interarrival_ns {
        Some(spread) => {
            text += &format!(
                "  inter-arrival: mean {} min {} max {} std dev {}\n",
                time(spread.mean),
                time(spread.min as f64),
                time(spread.max as f64),
                time(spread.std)
            )
        }
        None => text += "  inter-arrival: fewer than two messages\n",
    }
    for slot in &window.publishers {
        text += &format!(
            "  publisher slot {}: {} msg/s, {}/s\n",
            slot.slot,
            si(slot.rate),
            bytes(slot.bytes_rate)
        );
    }
    if window.missed > 0 {
        text += &format!("  missed {} messages\n", window.missed);
    }
    text
}

/// `value` in the largest of `units` (each `(scale, suffix)`, largest first) that it
/// reaches, or the last: 12.346 M, 3.10 MB, 250 ns.
fn scaled(value: f64, units: &[(f64, &str)]) -> String {
    let (scale, suffix) = units
        .iter()
        .copied()
        .find(|&(scale, _)| value >= scale)
        .unwrap_or(units[units.len() - 1]);
    format!("{:.3}{suffix}", value / scale)
}

/// A rate with an SI prefix: 950.000, 12.346k, 4.560M.
fn si(value: f64) -> String {
    scaled(value, &[(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")])
}

fn bytes(value: f64) -> String {
    scaled(value, &[(1e9, " GB"), (1e6, " MB"), (1e3, " kB"), (1.0, " B")])
}

fn time(ns: f64) -> String {
    scaled(ns, &[(1e9, " s"), (1e6, " ms"), (1e3, " us"), (1.0, " ns")])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_spread_is_the_population_spread() {
        let mut gaps = Gaps::default();
        for ns in [10, 20, 30, 40] {
            gaps.add(ns);
        }
        let spread = gaps.spread().unwrap();
        assert_eq!((spread.min, spread.max), (10, 40));
        assert!((spread.mean - 25.0).abs() < 1e-9);
        assert!((spread.std - 125f64.sqrt()).abs() < 1e-9);
        assert!(Gaps::default().spread().is_none());
    }

    #[test]
    fn figures_are_shown_in_their_largest_unit() {
        assert_eq!(si(12_345_678.0), "12.346M");
        assert_eq!(bytes(950.0), "950.000 B");
        assert_eq!(time(2_500.0), "2.500 us");
        assert_eq!(time(0.0), "0.000 ns");
    }
}
