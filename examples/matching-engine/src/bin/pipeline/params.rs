//! The parameters of one run, shared by every role; a role process is handed them as JSON.

use std::fmt;
use std::path::PathBuf;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// How a gateway waits for a planned time (see `clock::wait_until`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GatewayWait {
    /// Sleep until 30 µs before the planned time, then `sched_yield` until it.
    Yield,
    /// Sleep until the planned time (timer slack 1 ns), spinning only the last microsecond.
    Sleep,
}

/// How an idle subscriber waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubscriberWait {
    /// Yield a few times, then sleep until the engine's next publish wakes it.
    Futex,
    /// Yield a few times, then sleep 5 µs at a time and look again; nobody wakes it.
    Nap,
}

/// The names on the command line, which are also what is printed and recorded.
fn value_name(value: &impl ValueEnum) -> String {
    value
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_owned())
}

impl fmt::Display for GatewayWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&value_name(self))
    }
}

impl fmt::Display for SubscriberWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&value_name(self))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub gateways: u32,
    pub subscribers: u32,
    /// Offered load, requests per second over all gateways.
    pub rate: f64,
    pub duration_ms: u64,
    pub warmup_ms: u64,
    pub seed: u64,
    pub gateway_cores: Vec<usize>,
    pub engine_core: usize,
    pub subscriber_cores: Vec<usize>,
    pub gateway_wait: GatewayWait,
    pub subscriber_wait: SubscriberWait,
    /// SCHED_RR priority for every role.
    pub realtime: Option<u32>,
    pub record: Option<PathBuf>,
    /// salias: the order feed (`OrderedFanout`) recorded to this MCAP file.
    pub record_feed: Option<PathBuf>,
}

impl Params {
    pub fn per_gateway(&self) -> usize {
        ((self.rate * self.duration_ms as f64 / 1000.0) / f64::from(self.gateways)).ceil() as usize
    }

    pub fn total(&self) -> u64 {
        self.per_gateway() as u64 * u64::from(self.gateways)
    }

    pub fn interval_ns(&self) -> f64 {
        1e9 / self.rate
    }

    pub fn gateway_core(&self, g: u32) -> usize {
        self.gateway_cores[g as usize % self.gateway_cores.len()]
    }

    pub fn subscriber_core(&self, s: u32) -> usize {
        self.subscriber_cores[s as usize % self.subscriber_cores.len()]
    }

    pub fn placement(&self) -> String {
        let mut parts: Vec<String> = (0..self.gateways)
            .map(|g| format!("gateway{g}@{}", self.gateway_core(g)))
            .collect();
        parts.push(format!("engine@{}", self.engine_core));
        parts.extend((0..self.subscribers).map(|s| format!("subscriber{s}@{}", self.subscriber_core(s))));
        let scheduling = match self.realtime {
            Some(priority) => format!("every role SCHED_RR {priority}"),
            None => "every role SCHED_OTHER".into(),
        };
        format!(
            "{} (gateways wait by: {}; idle subscriber waits: {}; {scheduling})",
            parts.join(" "),
            self.gateway_wait,
            self.subscriber_wait
        )
    }
}
