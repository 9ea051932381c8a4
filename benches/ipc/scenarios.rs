//! The setups each section runs, in the order they alternate within a round.

use support::records::{Receive, ThroughputBench, oversubscribed};

use crate::cli::Scale;
use crate::msg64::Msg64;
use crate::setup::{Backoff, Kind, Setup};

/// Ring size of the multi-producer stress runs: small, so offers are refused often.
const STRESS_RING: usize = 64 << 10;

/// Share of the scale's messages an oversubscribed throughput run moves: its processes
/// take turns on the cores, so its figure measures the scheduler more than the channel,
/// and at a few M msg/s the full count would take most of a full run's time.
const OVERSUBSCRIBED_SHARE: u64 = 10;

/// Every kind, shape (1P1S, 2P1S, 1P2S, 2P2S; Mpsc kinds have one subscriber), single
/// and batch-16 offers, over each ring size of the scale, and at each size the write
/// floor of its frames; FifoMpsc 1P1S also on 2 MiB huge pages at the scale's
/// `huge_page_rings`. Runs move the scale's messages or `min_laps` laps of their ring,
/// whichever is more; those with more busy processes than cores move a tenth of the
/// scale's messages (at least 20,000).
pub fn throughput(scale: &Scale) -> Vec<Setup> {
    let mut setups = Vec::new();
    for &ring in scale.rings {
        let lapping = scale
            .messages
            .max(scale.min_laps * ring as u64 / size_of::<Msg64>() as u64);
        setups.push(write_floor(
            ThroughputBench::Throughput,
            ring,
            size_of::<Msg64>(),
            lapping,
        ));
        for (publishers, subscribers) in [(1, 1), (2, 1), (1, 2), (2, 2)] {
            for kind in [Kind::FifoMpsc, Kind::FifoFanout, Kind::OrderedMpsc, Kind::OrderedFanout] {
                if kind.is_mpsc() && subscribers > 1 {
                    continue;
                }
                let messages = if oversubscribed(publishers + subscribers) {
                    (scale.messages / OVERSUBSCRIBED_SHARE).max(20_000.min(scale.messages))
                } else {
                    lapping
                };
                // The ring-size goal's setups again on huge pages, where the machine has them.
                let pages: &[bool] = if kind == Kind::FifoMpsc
                    && (publishers, subscribers) == (1, 1)
                    && scale.huge_page_rings.contains(&ring)
                {
                    &[false, true]
                } else {
                    &[false]
                };
                for &huge_pages in pages {
                    for batch in [1, 16] {
                        setups.push(Setup {
                            bench: ThroughputBench::Throughput,
                            kind,
                            publishers,
                            subscribers,
                            ring,
                            batch,
                            messages,
                            size: size_of::<Msg64>(),
                            backoff: Backoff::Spin,
                            receive: Receive::Drain,
                            huge_pages,
                        });
                    }
                }
            }
        }
    }
    setups
}

/// The ring-size check: FIFO 1P1S single and batch-16 offers and the write floor at 1, 4
/// and 64 MiB rings (and on huge pages where the scale has them), whatever the scale (its
/// messages per run follow the scale). The same
/// setups as `throughput`'s at those sizes, alone, for a quick A/B of a hot-path change.
pub fn rings(scale: &Scale) -> Vec<Setup> {
    let every_ring = Scale {
        rings: &[1 << 20, 4 << 20, 64 << 20],
        ..scale.clone()
    };
    throughput(&every_ring)
        .into_iter()
        .filter(|setup| matches!(setup.kind, Kind::FifoMpsc | Kind::WriteFloor) && setup.publishers == 1)
        .collect()
}

/// The ordered check: FifoMpsc, OrderedMpsc and OrderedFanout 1P1S single and batch-16
/// offers at 1 MiB, whatever the scale: what taking a global sequence number costs, beside
/// the FIFO path in the same rounds, for a quick A/B of an ordered-path change.
pub fn order(scale: &Scale) -> Vec<Setup> {
    throughput(&Scale {
        rings: &[1 << 20],
        ..scale.clone()
    })
    .into_iter()
    .filter(|setup| setup.kind != Kind::FifoFanout && setup.publishers == 1 && setup.subscribers == 1)
    .collect()
}

/// The subscriber's two loops: FifoMpsc and OrderedMpsc 1P1S single and batch-16 offers
/// at 1 MiB, each received by `drain(256)` looking again at once and by `recv_batch(256)`
/// with `wait::Batching` (pausing after a batch that caught up), alternated in every round.
pub fn receive(scale: &Scale) -> Vec<Setup> {
    order(scale)
        .into_iter()
        .filter(|setup| setup.kind != Kind::OrderedFanout)
        .flat_map(|setup| {
            [Receive::Drain, Receive::Batching].map(|receive| Setup {
                receive,
                ..setup.clone()
            })
        })
        .collect()
}

/// The message size sweep: raw frames, FIFO 1P1S, a 4 MiB ring (room for 1000 of the
/// largest), and the write floor of each size's frames; fewer messages as they grow, so
/// each run moves a similar number of bytes.
pub fn sizes(scale: &Scale) -> Vec<Setup> {
    let messages = scale.messages;
    let mut setups = Vec::new();
    for size in [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096] {
        let messages = (messages * 64 / size as u64).clamp(messages / 8, messages);
        setups.push(write_floor(ThroughputBench::Size, 4 << 20, size, messages));
        for batch in [1, 16] {
            setups.push(Setup {
                bench: ThroughputBench::Size,
                kind: Kind::RawFifoMpsc,
                publishers: 1,
                subscribers: 1,
                ring: 4 << 20,
                batch,
                messages,
                size,
                backoff: Backoff::Spin,
                receive: Receive::Drain,
                huge_pages: false,
            });
        }
    }
    setups
}

/// Multi-producer stress: more publisher processes than cores, a 64 KiB ring each so
/// offers are refused often (refused publishers yield), every message checked (and the
/// global order, for Ordered).
pub fn stress(scale: &Scale) -> Vec<Setup> {
    let mut setups = Vec::new();
    for kind in [Kind::FifoMpsc, Kind::OrderedMpsc] {
        for publishers in [4, 8] {
            for batch in [1, 16] {
                setups.push(Setup {
                    bench: ThroughputBench::Stress,
                    kind,
                    publishers,
                    subscribers: 1,
                    ring: STRESS_RING,
                    batch,
                    messages: scale.messages / 20,
                    size: size_of::<Msg64>(),
                    backoff: Backoff::Yield,
                    receive: Receive::Drain,
                    huge_pages: false,
                });
            }
        }
    }
    setups
}

/// The write floor of `messages` frames of a `size`-byte message in a `ring`-byte mapping
/// (`write_floor.rs`): one process on the publisher's core, nothing reading.
fn write_floor(bench: ThroughputBench, ring: usize, size: usize, messages: u64) -> Setup {
    Setup {
        bench,
        kind: Kind::WriteFloor,
        publishers: 1,
        subscribers: 0,
        ring,
        batch: 1,
        messages,
        size,
        backoff: Backoff::Spin,
        receive: Receive::Drain,
        huge_pages: false,
    }
}
