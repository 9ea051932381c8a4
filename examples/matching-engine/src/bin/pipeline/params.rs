//! The parameters of one run, shared by every role, and how a child gets them.

use std::path::PathBuf;

#[derive(Clone, Debug)]
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
    /// How a gateway waits for a planned time: "yield" or "sleep" (see `wait_until`).
    pub gateway_wait: String,
    /// How an idle subscriber waits: "futex" (yield a few times, then sleep until the
    /// engine's next publish wakes it) or "nap" (yield a few times, then sleep 5 µs at a
    /// time and look again; the engine never wakes anyone).
    pub subscriber_wait: String,
    /// SCHED_RR priority for every role.
    pub realtime: Option<u32>,
    pub record: Option<PathBuf>,
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

    /// The arguments a child needs to rebuild these parameters.
    pub fn to_args(&self) -> Vec<String> {
        let list = |cores: &[usize]| cores.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        let mut args = vec![
            "--gateways".into(),
            self.gateways.to_string(),
            "--subscribers".into(),
            self.subscribers.to_string(),
            "--rate".into(),
            self.rate.to_string(),
            "--duration-ms".into(),
            self.duration_ms.to_string(),
            "--warmup-ms".into(),
            self.warmup_ms.to_string(),
            "--seed".into(),
            self.seed.to_string(),
            "--gateway-cores".into(),
            list(&self.gateway_cores),
            "--engine-core".into(),
            self.engine_core.to_string(),
            "--subscriber-cores".into(),
            list(&self.subscriber_cores),
            "--gateway-wait".into(),
            self.gateway_wait.clone(),
            "--subscriber-wait".into(),
            self.subscriber_wait.clone(),
        ];
        if let Some(priority) = self.realtime {
            args.push("--realtime".into());
            args.push(priority.to_string());
        }
        if let Some(dir) = &self.record {
            args.push("--record".into());
            args.push(dir.display().to_string());
        }
        args
    }
}
