//! One refresh of `top`: each slot of a channel as its status shows it, with rates since the
//! previous refresh. Also the JSON object `top --json` prints (field names in README.md).

use std::time::{Instant, SystemTime};

use salias::{
    status::ChannelStatus, status::PublisherStatus, status::SlotHolder, status::SubscriberKind,
    status::SubscriberStatus,
};
use serde::Serialize;

use crate::json;

/// A channel's status and when it was read.
pub(crate) struct Reading {
    pub(crate) status: ChannelStatus,
    pub(crate) at: Instant,
}

/// What one refresh shows.
#[derive(Serialize)]
pub(crate) struct Refresh<'a> {
    pub(crate) name: &'a str,
    /// 1 for the first refresh.
    pub(crate) refresh: u64,
    /// When the status was read: seconds since the Unix epoch.
    pub(crate) time: f64,
    /// Seconds since the previous refresh read the status; `None` for the first, whose
    /// rates are all unknown.
    pub(crate) seconds: Option<f64>,
    pub(crate) kind: &'a str,
    #[serde(serialize_with = "json::holder")]
    pub(crate) owner: SlotHolder,
    pub(crate) frame_len: Option<usize>,
    pub(crate) sequence: Option<u64>,
    pub(crate) publishers: Vec<PublisherRow>,
    pub(crate) subscribers: Vec<SubscriberRow>,
    #[serde(skip)]
    pub(crate) status: &'a ChannelStatus,
}

/// A publisher slot. A rate is `None` where it cannot be known: at the first refresh, and
/// when the slot changed hands since the previous one.
#[derive(Serialize)]
pub(crate) struct PublisherRow {
    pub(crate) slot: usize,
    #[serde(serialize_with = "json::holder")]
    pub(crate) holder: SlotHolder,
    pub(crate) published: u64,
    pub(crate) position: u64,
    pub(crate) backpressured: u64,
    /// Messages committed per second.
    pub(crate) rate: Option<f64>,
    /// Bytes committed per second.
    pub(crate) rate_bytes: Option<f64>,
    /// Offers refused for lack of room, per second.
    pub(crate) backpressured_rate: Option<f64>,
}

/// A subscriber slot. The lag is what it has not released yet of every publisher's ring,
/// summed. Lag and rates are `None` where the slot reads nothing (a free Fanout slot).
#[derive(Serialize)]
pub(crate) struct SubscriberRow {
    pub(crate) slot: usize,
    #[serde(serialize_with = "json::holder")]
    pub(crate) holder: SlotHolder,
    pub(crate) lag_messages: Option<u64>,
    pub(crate) lag_bytes: Option<u64>,
    /// Messages released per second (typed channels; raw frames differ in size).
    pub(crate) rate: Option<f64>,
    /// Bytes released per second.
    pub(crate) rate_bytes: Option<f64>,
    /// `tethered` or `lossy`, as the slot says.
    #[serde(serialize_with = "json::display")]
    pub(crate) kind: SubscriberKind,
    /// Lossy because it held a publisher back longer than the channel's tether timeout.
    pub(crate) demoted: bool,
    /// Messages (FIFO) or sequence numbers (Ordered) the subscriber reported missing.
    pub(crate) missed: u64,
    /// Of those, per second.
    pub(crate) missed_rate: Option<f64>,
}

impl<'a> Refresh<'a> {
    /// Refresh number `refresh`, of `now`, with rates against `previous`.
    pub(crate) fn new(refresh: u64, now: &'a Reading, previous: Option<&Reading>) -> Refresh<'a> {
        let status = &now.status;
        // A channel removed and made again under the same name starts its counters anew.
        let previous = previous.filter(|before| same_channel(&before.status, status));
        let seconds = previous.map(|before| now.at.duration_since(before.at).as_secs_f64());
        let rates = previous.zip(seconds.filter(|s| *s > 0.0));
        let publishers = status
            .publishers
            .iter()
            .enumerate()
            .map(|(slot, publisher)| {
                let before = rates.and_then(|(before, s)| Some((before.status.publishers.get(slot)?, s)));
                PublisherRow::new(slot, publisher, before)
            })
            .collect();
        let subscribers = status
            .subscribers
            .iter()
            .enumerate()
            .map(|(slot, subscriber)| {
                let before = rates.and_then(|(before, s)| Some((before.status.subscribers.get(slot)?, s)));
                SubscriberRow::new(status, slot, subscriber, before)
            })
            .collect();
        let time = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |since| since.as_secs_f64());
        Refresh {
            name: &status.name,
            refresh,
            time,
            seconds,
            kind: &status.kind,
            owner: status.owner,
            frame_len: status.frame_len(),
            sequence: status.sequence,
            publishers,
            subscribers,
            status,
        }
    }
}

/// Whether two readings are of the one channel: the same owner (alive, or since dead),
/// kind and slots.
fn same_channel(before: &ChannelStatus, now: &ChannelStatus) -> bool {
    let pid = |owner: SlotHolder| match owner {
        SlotHolder::Free => None,
        SlotHolder::Alive { pid } | SlotHolder::Dead { pid } => Some(pid),
    };
    let facts = |status: &ChannelStatus| {
        let slots = (status.publishers.len(), status.subscribers.len());
        (pid(status.owner), status.kind.clone(), slots)
    };
    facts(before) == facts(now)
}

/// `delta` per second over `seconds`.
fn per_second(delta: Option<u64>, seconds: f64) -> Option<f64> {
    delta.map(|delta| delta as f64 / seconds)
}

impl PublisherRow {
    fn new(slot: usize, now: &PublisherStatus, before: Option<(&PublisherStatus, f64)>) -> PublisherRow {
        // Counters belong to the slot: a new holder may start them again.
        let before = before.filter(|(before, _)| before.holder == now.holder);
        let rate = |counter: fn(&PublisherStatus) -> u64| {
            before.and_then(|(before, seconds)| per_second(counter(now).checked_sub(counter(before)), seconds))
        };
        PublisherRow {
            slot,
            holder: now.holder,
            published: now.published,
            position: now.position,
            backpressured: now.backpressured,
            rate: rate(|p| p.published),
            rate_bytes: rate(|p| p.position),
            backpressured_rate: rate(|p| p.backpressured),
        }
    }
}

impl SubscriberRow {
    fn new(
        status: &ChannelStatus,
        slot: usize,
        now: &SubscriberStatus,
        before: Option<(&SubscriberStatus, f64)>,
    ) -> SubscriberRow {
        let reading = now.cursors.iter().any(Option::is_some);
        let before = before.filter(|(before, _)| before.holder == now.holder);
        let before = before.filter(|_| reading);
        let rate_bytes = before.and_then(|(before, seconds)| per_second(released(before, now), seconds));
        let missed_rate =
            before.and_then(|(before, seconds)| per_second(now.missed.checked_sub(before.missed), seconds));
        SubscriberRow {
            slot,
            holder: now.holder,
            lag_messages: reading.then(|| json::messages(status, now.backlog_bytes)).flatten(),
            lag_bytes: reading.then_some(now.backlog_bytes),
            rate: rate_bytes
                .zip(status.frame_len())
                .map(|(rate, frame)| rate / frame as f64),
            rate_bytes,
            kind: now.kind,
            demoted: now.demoted,
            missed: now.missed,
            missed_rate,
        }
    }
}

/// Bytes the slot released between two readings, over every ring; `None` when a cursor
/// went back or a ring started or stopped being read (the slot changed hands).
fn released(before: &SubscriberStatus, now: &SubscriberStatus) -> Option<u64> {
    if before.cursors.len() != now.cursors.len() {
        return None;
    }
    before
        .cursors
        .iter()
        .zip(&now.cursors)
        .map(|pair| match pair {
            (Some(before), Some(now)) => now.checked_sub(*before),
            (None, None) => Some(0),
            _ => None,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use salias::{Config, FifoFanout, SaliasMessage};
    use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

    use super::*;

    #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
    #[repr(C)]
    struct Tick {
        seq: u64,
    }

    fn read(name: &str, at: Instant) -> Reading {
        Reading {
            status: salias::status::channel_status(name).unwrap(),
            at,
        }
    }

    #[test]
    fn rates_are_the_counts_moved_over_the_seconds_between_readings() {
        let name = format!("cli-unit-rates-{}", std::process::id());
        let channel = FifoFanout::<Tick>::create(&Config::new(&name).publishers(2).subscribers(2)).unwrap();
        let mut publisher = channel.publisher().unwrap();
        let mut subscriber = channel.subscriber().unwrap();
        let start = Instant::now();
        let first = read(&name, start);
        for seq in 0..10 {
            publisher.offer(&Tick { seq }).unwrap();
        }
        for _ in 0..4 {
            drop(subscriber.recv().unwrap());
        }
        assert!(subscriber.try_recv().unwrap().is_some()); // the fifth, held: nothing released
        let second = read(&name, start + Duration::from_secs(2));
        let frame = first.status.frame_len().unwrap() as f64;

        let at_first = Refresh::new(1, &first, None);
        assert_eq!((at_first.seconds, at_first.publishers[0].rate), (None, None));
        let refresh = Refresh::new(2, &second, Some(&first));
        assert_eq!(refresh.seconds, Some(2.0));
        let held = &refresh.publishers[0];
        assert_eq!(
            (held.published, held.rate, held.rate_bytes),
            (10, Some(5.0), Some(5.0 * frame))
        );
        assert_eq!(held.backpressured_rate, Some(0.0));
        // A free publisher slot moved nothing; a free Fanout subscriber slot reads nothing.
        assert_eq!(refresh.publishers[1].rate, Some(0.0));
        let (reading, idle) = (&refresh.subscribers[0], &refresh.subscribers[1]);
        assert_eq!((idle.rate, idle.lag_bytes, idle.lag_messages), (None, None, None));
        // Releases are batched: receiving alone moved no cursor yet, so it lags by all ten.
        assert_eq!((reading.rate, reading.lag_messages), (Some(0.0), Some(10)));
        assert_eq!(reading.lag_bytes, Some(10 * frame as u64));

        // After releasing everything: ten messages over two seconds.
        while subscriber.try_recv().unwrap().is_some() {}
        let third = read(&name, start + Duration::from_secs(4));
        let refresh = Refresh::new(3, &third, Some(&first));
        assert_eq!(refresh.seconds, Some(4.0));
        let reading = &refresh.subscribers[0];
        assert_eq!((reading.rate, reading.rate_bytes), (Some(2.5), Some(2.5 * frame)));
        assert_eq!((reading.lag_messages, reading.lag_bytes), (Some(0), Some(0)));
        assert_eq!((reading.kind, reading.demoted), (SubscriberKind::Tethered, false));
        assert_eq!((reading.missed, reading.missed_rate), (0, Some(0.0)));
        assert_eq!(idle.missed_rate, None);
    }
}
