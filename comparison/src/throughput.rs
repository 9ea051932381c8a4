//! Throughput: the setups that alternate, the publisher's and the subscriber's loops every
//! transport plugs its calls into, and the parent's run.

use std::time::Duration;

use support::barrier::Barrier;
use support::clock::now_ns;
use support::cores::{Placement, Side};
use support::records::System;
use support::role::Children;

use crate::error::RunError;
use crate::resources::{Ctx, Resources, unique_name};
use crate::roles::{self, Params, Report, system_name};
use crate::verification::Verifier;

/// Most messages a subscriber takes per poll.
pub const POLL_LIMIT: usize = 256;
/// Messages per `offer_batch`, and the SPSC floor's publication interval.
pub const BATCH: usize = 16;

/// How a publisher hands over its messages: the records' names. `Offer` is salias or
/// Aeron `offer`, `OfferBatch` salias `offer_batch` of [`BATCH`], `TryClaim` Aeron's claim,
/// write and commit, `LoanUninit` iceoryx2's `loan_uninit` → `write_payload` → `send`
/// retried by the application, `LoanUninitBlock` the same with iceoryx2's blocking send,
/// `Batch` the SPSC floor publishing its tail every [`BATCH`] messages.
pub use support::records::Api;

/// One throughput setup: a system, its API, publishers, messages and buffer.
#[derive(Clone, Debug)]
pub struct Setup {
    pub system: System,
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
    pub fn new(system: System, api: Api, publishers: u32, messages: u64, param: u64) -> Setup {
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

    /// The API with its batch, as the summary names it: `offer_batch16`.
    pub fn variant(&self) -> String {
        if self.batch > 1 {
            format!("{}{}", self.api.name(), self.batch)
        } else {
            self.api.name().to_owned()
        }
    }

    /// A caption for people: `salias FifoMpsc 1P1S ring 1 MiB offer`.
    pub fn label(&self) -> String {
        let shape = format!("{}P1S", self.publishers);
        let variant = self.variant();
        match self.system {
            System::Salias => format!("salias FifoMpsc {shape} ring {} MiB {variant}", self.param >> 20),
            System::Aeron => format!("aeron ipc {shape} term {} MiB {variant}", self.param >> 20),
            System::Iceoryx2 => format!("iceoryx2 {shape} buffer {} {variant}", self.param),
            System::SpscFloor | System::Floor | System::MessageFloor => {
                format!("spsc-floor {shape} ring {} MiB {variant}", self.param >> 20)
            }
        }
    }

    /// What process `index` of this setup's run `name` is told.
    pub fn params(&self, name: &str, core: usize, index: usize, ctx: &Ctx, stream: i32) -> Params {
        Params {
            name: name.to_owned(),
            core,
            api: Some(self.api),
            batch: self.batch,
            publishers: self.publishers,
            messages: self.messages,
            param: self.param,
            index: index as u64,
            aeron_dir: ctx.aeron_dir.clone(),
            stream,
            plan: None,
        }
    }
}

/// What a publisher counted.
pub struct Published {
    pub elapsed_ns: u64,
    pub attempts: u64,
    pub refused: u64,
}

impl Published {
    /// Reports to the parent, then keeps the process (and so its resources) until the
    /// subscriber has every message.
    pub fn report(self, barrier: &Barrier) {
        Report::Publisher {
            elapsed_ns: self.elapsed_ns,
            attempts: self.attempts,
            refused: self.refused,
        }
        .send();
        barrier.wait_done(1);
    }
}

/// The publisher's loop: after the barrier, `offer(seq)` tries to publish the messages
/// from `seq` on and returns how many it took (0: refused, tried again).
#[inline(always)]
pub fn flood(a: &Params, barrier: &Barrier, mut offer: impl FnMut(u64) -> u64) -> Published {
    let (mut attempts, mut refused, mut seq) = (0u64, 0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while seq < a.messages {
        attempts += 1;
        match offer(seq) {
            0 => {
                refused += 1;
                std::hint::spin_loop();
            }
            taken => seq += taken,
        }
    }
    Published {
        elapsed_ns: now_ns() - started,
        attempts,
        refused,
    }
}

/// The subscriber's loop: after the barrier, `poll` hands what it received to the
/// verifier until every message of every publisher is in; then the checks, the report,
/// and the word that lets the publishers go.
#[inline(always)]
pub fn drain(a: &Params, barrier: &Barrier, mut poll: impl FnMut(&mut Verifier)) {
    let total = a.messages * a.publishers as u64;
    let mut verifier = Verifier::new(a.publishers as usize);
    barrier.arrive_and_wait();
    let started = now_ns();
    while verifier.received() < total {
        poll(&mut verifier);
    }
    let elapsed_ns = now_ns() - started;
    verifier.finish(a.publishers as u64, a.messages);
    Report::Subscriber {
        elapsed_ns,
        received: verifier.received(),
    }
    .send();
    barrier.done();
}

/// One throughput run's figures.
pub struct Run {
    pub published_per_s: f64,
    pub delivered_per_s: f64,
    /// Refused attempts over all attempts.
    pub refused: f64,
    pub placement: String,
}

/// How long a run of `messages` may take before it counts as hung: a minute to start
/// and end, plus 1 µs a message (10 times the slowest rate seen).
pub fn watchdog(messages: u64) -> Duration {
    Duration::from_secs(60) + Duration::from_micros(messages)
}

/// One run of `setup`: the subscriber on the last core, the publishers from the first.
pub fn throughput_run(setup: &Setup, round: usize, ctx: &mut Ctx) -> Result<Run, RunError> {
    let name = unique_name(system_name(setup.system), round);
    let stream = ctx.stream();
    let _resources = Resources::for_setup(setup, &name)?;
    let barrier = Barrier::create(&name).map_err(RunError::shm(&name))?;
    let mut children = Children::new();
    let mut placement = Placement::new();
    let core = placement.place(Side::Subscriber, 0);
    roles::spawn(
        &mut children,
        setup.system,
        "subscriber",
        &setup.params(&name, core, 0, ctx, stream),
    )?;
    for p in 0..setup.publishers as usize {
        let core = placement.place(Side::Publisher, p);
        roles::spawn(
            &mut children,
            setup.system,
            "publisher",
            &setup.params(&name, core, p, ctx, stream),
        )?;
    }
    let total = setup.messages * setup.publishers as u64;
    let reports = roles::collect(&name, &barrier, children, watchdog(total))?;
    let (mut publish_ns, mut deliver_ns, mut attempts, mut refused) = (0u64, 0u64, 0u64, 0u64);
    for report in reports {
        match report {
            Report::Publisher {
                elapsed_ns,
                attempts: a,
                refused: r,
            } => {
                publish_ns = publish_ns.max(elapsed_ns);
                attempts += a;
                refused += r;
            }
            Report::Subscriber { elapsed_ns, .. } => deliver_ns = deliver_ns.max(elapsed_ns),
            _ => {}
        }
    }
    if publish_ns == 0 || deliver_ns == 0 {
        let what = "a publisher's and a subscriber's time";
        return Err(RunError::Missing { run: name, what });
    }
    let published = total as f64;
    Ok(Run {
        published_per_s: published / (publish_ns as f64 / 1e9),
        delivered_per_s: published / (deliver_ns as f64 / 1e9),
        refused: refused as f64 / attempts.max(1) as f64,
        placement: placement.to_string(),
    })
}
