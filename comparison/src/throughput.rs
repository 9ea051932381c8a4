//! Throughput: the publisher's and the subscriber's loops, generic over the system's ends,
//! and the parent's run.

use std::time::Duration;

use support::barrier::Barrier;
use support::clock::now_ns;
use support::cores::{Placement, Side};
use support::role::Children;
use support::state::{Bracket, SpeedProbe};
use support::throughput::{Finished, Tally};

use crate::error::RunError;
use crate::message::Msg64;
use crate::parent;
use crate::platform::latency_cores;
use crate::resources::{Ctx, Resources, unique_name};
use crate::roles::{Params, Report, system_name};
use crate::setup::{Api, Setup};
use crate::transport::{POLL_LIMIT, Publish, Subscribe};
use crate::verification::Verifier;

/// What a publisher counted.
struct Published {
    elapsed_ns: u64,
    attempts: u64,
    refused: u64,
}

impl Published {
    /// Reports to the parent, then keeps the process (and so its resources) until the
    /// subscriber has every message.
    fn report(self, barrier: &Barrier) {
        Report::Publisher {
            elapsed_ns: self.elapsed_ns,
            attempts: self.attempts,
            refused: self.refused,
        }
        .send();
        barrier.wait_done(1);
    }
}

/// A throughput publisher: `a.messages` in single offers, or for `offer_batch` in batches
/// of `a.batch` (the SPSC floor's batch is its publication interval, within `offer`); it
/// reports, then keeps its end (and so its resources) until the subscribers are done.
pub fn publish(a: &Params, barrier: &Barrier, mut publisher: impl Publish) {
    let mut published = if a.api == Some(Api::OfferBatch) {
        let mut batch = vec![Msg64::new(a.index, 0); a.batch];
        flood(a, barrier, |seq| {
            let count = (a.messages - seq).min(a.batch as u64) as usize;
            for (i, message) in batch[..count].iter_mut().enumerate() {
                *message = Msg64::new(a.index, seq + i as u64);
            }
            publisher.offer_batch(&batch[..count]) as u64
        })
    } else {
        flood(a, barrier, |seq| u64::from(publisher.offer(&Msg64::new(a.index, seq))))
    };
    let refused = publisher.refused_within();
    published.attempts += refused;
    published.refused += refused;
    published.report(barrier);
}

/// The publisher's loop: after the barrier, `offer(seq)` tries to publish the messages
/// from `seq` on and returns how many it took (0: refused, tried again).
#[inline(always)]
fn flood(a: &Params, barrier: &Barrier, mut offer: impl FnMut(u64) -> u64) -> Published {
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

/// The subscriber's loop: after the barrier, it polls and verifies until every message
/// of every publisher is in, pausing `a.subscriber_pauses` times after a poll that came
/// back short; then the checks, the report, and the word that lets the publishers go.
pub fn subscribe(a: &Params, barrier: &Barrier, mut subscriber: impl Subscribe) {
    let total = a.messages * a.publishers as u64;
    let mut verifier = Verifier::new(a.publishers as usize);
    barrier.arrive_and_wait();
    let started = now_ns();
    while verifier.received() < total {
        let before = verifier.received();
        subscriber.poll(|m| verifier.check(m));
        let got = verifier.received() - before;
        // A poll that came back short caught up with the publishers: with pauses, the
        // subscriber keeps off the line being written until more has gathered.
        if got > 0 && got < POLL_LIMIT as u64 {
            for _ in 0..a.subscriber_pauses {
                std::hint::spin_loop();
            }
        }
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
    /// The speed state around the run.
    pub state: Option<SpeedProbe>,
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
    let bracket = Bracket::open(latency_cores());
    let mut children = Children::new();
    let mut placement = Placement::new();
    let sides = [
        (Side::Subscriber, "subscriber", setup.subscribers),
        (Side::Publisher, "publisher", setup.publishers),
    ];
    for (side, role, count) in sides {
        for index in 0..count as usize {
            let core = placement.place(side, index);
            let params = setup.params(&name, core, index, &ctx.aeron_dir, stream);
            parent::spawn(&mut children, setup.system, role, &params)?;
        }
    }
    let total = setup.messages * setup.publishers as u64 * setup.subscribers as u64;
    let reports = parent::collect(&name, &barrier, children, watchdog(total))?;
    let state = bracket.close();
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
            // The comparison's receive loops do not count their calls.
            Report::Subscriber { elapsed_ns, received } => tally.add(&Finished::Subscriber {
                elapsed_ns,
                received,
                drains: 0,
            }),
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
        state,
    })
}
