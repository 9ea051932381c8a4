//! Throughput: the setups that alternate, the publisher's and the subscriber's loops every
//! transport plugs its calls into, and the parent's run.

use std::time::Duration;

use support::barrier::Barrier;
use support::clock::now_ns;
use support::cores::{Placement, Side};
use support::records::{System, ThroughputBench};
use support::role::Children;
use support::throughput::{Finished, Tally};

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

/// One throughput setup: a system, its API, publishers, subscribers, messages and buffer.
#[derive(Clone, Debug)]
pub struct Setup {
    pub system: System,
    pub api: Api,
    /// Messages per call (1 for the single-message APIs).
    pub batch: usize,
    pub publishers: u32,
    /// Subscribers, each receiving every message (salias: FifoFanout when more than one;
    /// Aeron: one subscription each on the same stream).
    pub subscribers: u32,
    pub messages: u64,
    /// salias / spsc-floor: ring bytes per publisher; iceoryx2: subscriber buffer (samples);
    /// aeron: term length bytes (the publication URI's `term-length`).
    pub param: u64,
    /// Which benchmark the records name.
    pub bench: ThroughputBench,
    /// Marked oversubscribed whatever the count of busy processes (`--headline
    /// --allow-oversubscribed` on a machine with too few cores).
    pub marked_oversubscribed: bool,
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
            subscribers: 1,
            messages,
            param,
            bench: ThroughputBench::Throughput,
            marked_oversubscribed: false,
        }
    }

    /// This setup with `subscribers` subscribers.
    pub fn with_subscribers(self, subscribers: u32) -> Setup {
        Setup { subscribers, ..self }
    }

    /// This setup as a run of the headline grid, every record marked oversubscribed if
    /// `marked`.
    pub fn headline(self, marked: bool) -> Setup {
        Setup {
            bench: ThroughputBench::Headline,
            marked_oversubscribed: marked,
            ..self
        }
    }

    /// The salias kind of this setup: every subscriber sees every message, so more than
    /// one needs a fanout channel.
    pub fn salias_kind(&self) -> &'static str {
        if self.subscribers > 1 { "FifoFanout" } else { "FifoMpsc" }
    }

    /// Processes that spin while the run lasts: every publisher and subscriber. Aeron's
    /// media driver is not one: its thread parks between duty cycles (backoff idle), and
    /// took about 6 % of a core during a 1P1S `try_claim` flood (measured from
    /// /proc/<pid>/task/*/stat on the 2-core AMD EPYC development VM, 2026-12).
    pub fn busy_processes(&self) -> u32 {
        self.publishers + self.subscribers
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
        let shape = format!("{}P{}S", self.publishers, self.subscribers);
        let variant = self.variant();
        match self.system {
            System::Salias => format!(
                "salias {} {shape} ring {} MiB {variant}",
                self.salias_kind(),
                self.param >> 20
            ),
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
            subscribers: self.subscribers,
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

/// One run of `setup`: the subscribers from the last core down, the publishers from the
/// first up.
pub fn throughput_run(setup: &Setup, round: usize, ctx: &mut Ctx) -> Result<Run, RunError> {
    let name = unique_name(system_name(setup.system), round);
    let stream = ctx.stream();
    let _resources = Resources::for_setup(setup, &name)?;
    let barrier = Barrier::create(&name).map_err(RunError::shm(&name))?;
    let mut children = Children::new();
    let mut placement = Placement::new();
    let sides = [
        (Side::Subscriber, "subscriber", setup.subscribers),
        (Side::Publisher, "publisher", setup.publishers),
    ];
    for (side, role, count) in sides {
        for index in 0..count as usize {
            let core = placement.place(side, index);
            let params = setup.params(&name, core, index, ctx, stream);
            roles::spawn(&mut children, setup.system, role, &params)?;
        }
    }
    let total = setup.messages * setup.publishers as u64 * setup.subscribers as u64;
    let reports = roles::collect(&name, &barrier, children, watchdog(total))?;
    let mut tally = Tally::default();
    for report in reports {
        match report {
            Report::Publisher {
                elapsed_ns,
                attempts,
                refused,
            } => tally.add(&Finished::Publisher {
                elapsed_ns,
                attempts,
                refused,
            }),
            Report::Subscriber { elapsed_ns, received } => tally.add(&Finished::Subscriber { elapsed_ns, received }),
            _ => {}
        }
    }
    let rates = tally
        .rates(setup.messages, setup.publishers, setup.subscribers)
        .map_err(|_| RunError::Missing {
            run: name.clone(),
            what: "every publisher's and subscriber's report",
        })?;
    Ok(Run {
        published_per_s: rates.published_per_s,
        delivered_per_s: rates.delivered_per_s,
        refused: rates.refused_fraction,
        placement: placement.to_string(),
    })
}
