//! Throughput: the setups that alternate, the shared objects of a run, and one run.

use std::io::BufRead;
use std::sync::atomic::{AtomicU64, Ordering};

use salias::{Channel, Config, Fifo, Mpsc};

use crate::baselines::{SPSC_SLOTS_OFFSET, spsc_path};
use crate::message::Msg64;
use crate::platform::{core_for, interrupted};
use crate::roles::{ChildArgs, spawn_role};
use crate::shm::{Barrier, ShmFile};
use crate::transports::iceoryx2 as ice;

pub const POLL_LIMIT: usize = 256;
pub const BATCH: usize = 16;

/// How a publisher hands over its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// salias `offer` or Aeron `offer`: one message, copied in.
    Offer,
    /// salias `offer_batch` of [`BATCH`] messages.
    OfferBatch,
    /// Aeron `try_claim` + write + `commit`.
    TryClaim,
    /// iceoryx2 `loan_uninit` → `write_payload` → `send`, retried by the application.
    LoanUninit,
    /// The same with iceoryx2's own blocking send (`RetryUntilDelivered`).
    LoanUninitBlock,
    /// The SPSC floor: the tail published every [`BATCH`] messages.
    Batch,
}

impl Api {
    /// The name in the raw records.
    pub fn name(self) -> &'static str {
        match self {
            Api::Offer => "offer",
            Api::OfferBatch => "offer_batch",
            Api::TryClaim => "try_claim",
            Api::LoanUninit => "loan_uninit",
            Api::LoanUninitBlock => "loan_uninit_block",
            Api::Batch => "batch",
        }
    }
}

/// One throughput setup: a system, its API, publishers, messages and buffer.
#[derive(Clone, Debug)]
pub struct Setup {
    pub system: &'static str,
    pub api: Api,
    /// Messages per call (1 for the single-message APIs).
    pub batch: usize,
    pub publishers: u32,
    pub messages: u64,
    /// salias / spsc-floor: ring bytes per publisher; iceoryx2: subscriber buffer (samples);
    /// aeron: term length bytes (informational; the URI carries it).
    pub param: u64,
}

impl Setup {
    /// A setup of a single-message API, or of a batching one with [`BATCH`].
    pub fn new(system: &'static str, api: Api, publishers: u32, messages: u64, param: u64) -> Setup {
        let batch = if matches!(api, Api::OfferBatch | Api::Batch) {
            BATCH
        } else {
            1
        };
        Setup {
            system,
            api,
            batch,
            publishers,
            messages,
            param,
        }
    }

    /// The API with its batch, as the summary and the children name it: `offer_batch16`.
    pub fn variant(&self) -> String {
        if self.batch > 1 {
            format!("{}{}", self.api.name(), self.batch)
        } else {
            self.api.name().to_owned()
        }
    }

    pub fn label(&self) -> String {
        let shape = format!("{}P1S", self.publishers);
        let variant = self.variant();
        match self.system {
            "salias" => format!("salias FifoMpsc {shape} ring {} MiB {variant}", self.param >> 20),
            "aeron" => format!("aeron ipc {shape} term {} MiB {variant}", self.param >> 20),
            "iceoryx2" => format!("iceoryx2 {shape} buffer {} {variant}", self.param),
            _ => format!("spsc-floor {shape} ring {} MiB {variant}", self.param >> 20),
        }
    }

    /// What publisher or subscriber `index` of this setup is told.
    pub fn child_args(&self, index: usize, aeron_dir: &str, stream: i32) -> ChildArgs {
        ChildArgs {
            system: self.system.into(),
            variant: self.variant(),
            publishers: self.publishers,
            messages: self.messages,
            param: self.param,
            index: index as u64,
            extra: aeron_dir.into(),
            stream,
            rest: Vec::new(),
        }
    }
}

/// Shared objects a run's parent creates and holds until the children are done.
pub enum Resources {
    Salias(#[allow(dead_code)] Vec<Box<dyn std::any::Any>>),
    Ice(
        #[allow(dead_code)] Vec<ice::Factory>,
        #[allow(dead_code)] iceoryx2::prelude::Node<iceoryx2::prelude::ipc::Service>,
    ),
    Spsc(#[allow(dead_code)] ShmFile),
    None,
}

pub fn unique_name(tag: &str, round: usize) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "cmp-{tag}-{}-{round}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

pub struct Ctx {
    pub aeron_dir: String,
    pub next_stream: i32,
}

impl Ctx {
    pub fn stream(&mut self) -> i32 {
        self.next_stream += 2;
        self.next_stream
    }
}

pub struct Run {
    pub published_per_s: f64,
    pub delivered_per_s: f64,
    pub refused: f64,
    pub placement: String,
}

/// The shared objects of a throughput or open-loop run (Aeron's come from its driver).
pub fn create_resources(setup: &Setup, name: &str) -> Resources {
    match setup.system {
        "salias" => {
            let config = Config::new(name)
                .capacity(setup.param as usize)
                .publishers(setup.publishers)
                .subscribers(1);
            let channel: Box<dyn std::any::Any> = Box::new(Channel::<Msg64, Fifo, Mpsc>::create(&config).unwrap());
            Resources::Salias(vec![channel])
        }
        "iceoryx2" => {
            ice::quiet();
            let node = ice::node();
            let service = ice::throughput_service(&node, name, setup.publishers, setup.param, true);
            Resources::Ice(vec![service], node)
        }
        "spsc-floor" => Resources::Spsc(ShmFile::create(
            &spsc_path(name),
            SPSC_SLOTS_OFFSET + setup.param as usize,
        )),
        _ => Resources::None,
    }
}

pub fn throughput_run(setup: &Setup, round: usize, ctx: &mut Ctx) -> Run {
    let name = unique_name(setup.system, round);
    let stream = ctx.stream();
    let resources = create_resources(setup, &name);
    let barrier = Barrier::create(&name);
    let mut children = Vec::new();
    let mut placement = Vec::new();
    let core = core_for("subscriber", 0);
    placement.push(format!("S0@{core}"));
    children.push(spawn_role(
        "subscriber",
        &name,
        core,
        &setup.child_args(0, &ctx.aeron_dir, stream).to_args(),
    ));
    for p in 0..setup.publishers as usize {
        let core = core_for("publisher", p);
        placement.push(format!("P{p}@{core}"));
        children.push(spawn_role(
            "publisher",
            &name,
            core,
            &setup.child_args(p, &ctx.aeron_dir, stream).to_args(),
        ));
    }
    barrier.release_when(setup.publishers as u64 + 1, &mut children);
    let (mut publish_ns, mut deliver_ns, mut attempts, mut refused) = (0u64, 0u64, 0u64, 0u64);
    for mut child in children {
        let stdout = child.stdout.take().unwrap();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.first() != Some(&"RESULT") {
                continue;
            }
            let elapsed: u64 = words[4].parse().unwrap();
            if words[1] == "publisher" {
                publish_ns = publish_ns.max(elapsed);
                attempts += words[6].parse::<u64>().unwrap();
                refused += words[8].parse::<u64>().unwrap();
            } else {
                deliver_ns = deliver_ns.max(elapsed);
            }
        }
        assert!(
            child.wait().unwrap().success(),
            "a benchmark process failed{}: {}",
            interrupted(),
            setup.label()
        );
    }
    drop(barrier);
    drop(resources);
    let published = setup.messages as f64 * setup.publishers as f64;
    Run {
        published_per_s: published / (publish_ns as f64 / 1e9),
        delivered_per_s: published / (deliver_ns as f64 / 1e9),
        refused: refused as f64 / attempts.max(1) as f64,
        placement: placement.join(" "),
    }
}
