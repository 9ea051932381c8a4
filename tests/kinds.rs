//! Every Mode × Topology combination, in one process: what each kind promises beyond
//! moving bytes (late joining, leaving, global order, resuming).

mod support;

use salias::{
    Bytes, Channel, Config, Error, Fanout, Fifo, FifoFanout, FifoMpsc, Mpsc, Ordered, OrderedFanout, OrderedMpsc,
    PublishError, RawFifoFanout, RawFifoMpsc, RawOrderedFanout, RawOrderedMpsc, SaliasMessage, kind::Mode,
    kind::Topology,
};
use support::unique_name;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Tick {
    publisher: u64,
    value: u64,
}

/// A received message prints with `{:?}`: where it came from (the sequence and gap in
/// Ordered mode) and the message itself, or a raw message's bytes.
#[test]
fn received_messages_print_with_debug() {
    let name = unique_name("debug-fifo");
    let channel = FifoMpsc::<Tick>::create(&Config::new(&name)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    channel
        .publisher()
        .unwrap()
        .offer(&Tick { publisher: 0, value: 7 })
        .unwrap();
    let message = subscriber.try_recv().unwrap().unwrap();
    assert_eq!(
        format!("{message:?}"),
        "Received { info: MessageInfo { publisher_slot: 0 }, message: Tick { publisher: 0, value: 7 } }"
    );
    drop(message);

    let name = unique_name("debug-ordered");
    let channel = RawOrderedMpsc::create(&Config::new(&name).max_message_size(8)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    publisher.offer(b"ab").unwrap();
    publisher.publish_gap(2).unwrap();
    publisher.offer(b"cd").unwrap();
    drop(subscriber.try_recv().unwrap().unwrap());
    let message = subscriber.try_recv().unwrap().unwrap();
    assert_eq!(
        format!("{message:?}"),
        "Received { info: MessageInfo { publisher_slot: 0, sequence: 3, gap_before: 2 }, bytes: [99, 100] }"
    );
}

fn round_trip<M: Mode, K: Topology>() {
    let name = unique_name(&format!("{}{}", M::NAME, K::NAME));
    let channel = Channel::<Tick, M, K>::create(&Config::new(&name).publishers(2)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    publisher.offer(&Tick { publisher: 0, value: 1 }).unwrap();
    assert_eq!(subscriber.try_recv().unwrap().unwrap().value, 1);

    let raw_name = format!("{name}-raw");
    let raw = Channel::<Bytes, M, K>::create(&Config::new(&raw_name).max_message_size(64)).unwrap();
    let mut raw_subscriber = raw.subscriber().unwrap();
    raw.publisher().unwrap().offer(b"hello").unwrap();
    assert_eq!(&*raw_subscriber.try_recv().unwrap().unwrap(), b"hello");
    // The same channel through another kind's handle is refused, through its own accepted.
    let other = Channel::<Tick, Ordered, Fanout>::connect(&name);
    if M::ORDERED && K::FANOUT {
        assert!(other.is_ok());
    } else {
        assert!(matches!(other, Err(Error::KindMismatch { .. })), "{other:?}");
    }
}

#[test]
fn every_combination_works_typed_and_raw() {
    round_trip::<Fifo, Mpsc>();
    round_trip::<Fifo, Fanout>();
    round_trip::<Ordered, Mpsc>();
    round_trip::<Ordered, Fanout>();
    // The aliases name the same types.
    let _: Channel<Tick, Fifo, Mpsc> = FifoMpsc::<Tick>::create(&Config::new(unique_name("alias"))).unwrap();
    let _: Channel<Tick, Fifo, Fanout> = FifoFanout::<Tick>::create(&Config::new(unique_name("alias"))).unwrap();
    let _: Channel<Tick, Ordered, Mpsc> = OrderedMpsc::<Tick>::create(&Config::new(unique_name("alias"))).unwrap();
    let _: Channel<Tick, Ordered, Fanout> = OrderedFanout::<Tick>::create(&Config::new(unique_name("alias"))).unwrap();
    let _: Channel<Bytes, Fifo, Mpsc> = RawFifoMpsc::create(&Config::new(unique_name("alias"))).unwrap();
    let _: Channel<Bytes, Fifo, Fanout> = RawFifoFanout::create(&Config::new(unique_name("alias"))).unwrap();
    let _: Channel<Bytes, Ordered, Mpsc> = RawOrderedMpsc::create(&Config::new(unique_name("alias"))).unwrap();
    let _: Channel<Bytes, Ordered, Fanout> = RawOrderedFanout::create(&Config::new(unique_name("alias"))).unwrap();
}

#[test]
fn fanout_subscriber_joins_at_the_current_end() {
    let channel = FifoFanout::<Tick>::create(&Config::new(unique_name("late")).subscribers(4)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    // Nobody subscribed: publishing is not held back, and the messages reach no one.
    for value in 0..100_000 {
        publisher.offer(&Tick { publisher: 0, value }).unwrap();
    }
    let mut late = channel.subscriber().unwrap();
    assert!(
        late.try_recv().unwrap().is_none(),
        "a late subscriber does not see the past"
    );
    publisher
        .offer(&Tick {
            publisher: 0,
            value: 100_000,
        })
        .unwrap();
    assert_eq!(late.try_recv().unwrap().unwrap().value, 100_000);
}

#[test]
fn ordered_late_subscriber_starts_at_the_current_sequence() {
    let channel = OrderedFanout::<Tick>::create(&Config::new(unique_name("late-ordered")).subscribers(2)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for value in 0..10 {
        publisher.offer(&Tick { publisher: 0, value }).unwrap();
    }
    let mut late = channel.subscriber().unwrap();
    assert_eq!(late.next_sequence(), 10);
    publisher
        .offer(&Tick {
            publisher: 0,
            value: 10,
        })
        .unwrap();
    let message = late.try_recv().unwrap().unwrap();
    assert_eq!((message.sequence(), message.value), (10, 10));
}

#[test]
fn leaving_fanout_subscriber_stops_holding_publishers_back() {
    let page = 4096;
    let channel = FifoFanout::<Tick>::create(&Config::new(unique_name("leave")).subscribers(2).capacity(page)).unwrap();
    let mut reader = channel.subscriber().unwrap();
    let idle = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    let tick = Tick { publisher: 0, value: 0 };
    let mut sent = 0;
    while publisher.offer(&tick).is_ok() {
        sent += 1;
    }
    // The reader drains everything, but the idle subscriber still holds the ring full.
    assert_eq!(reader.drain(usize::MAX, |_, _| {}).unwrap(), sent);
    assert_eq!(publisher.offer(&tick), Err(PublishError::Backpressured));
    drop(idle);
    assert_eq!(publisher.offer(&tick), Ok(()));
    assert_eq!(reader.drain(usize::MAX, |_, _| {}).unwrap(), 1);
}

#[test]
fn fanout_subscribers_each_see_every_message() {
    let channel = FifoFanout::<Tick>::create(&Config::new(unique_name("each")).subscribers(8).publishers(2)).unwrap();
    let mut subscribers: Vec<_> = (0..8).map(|_| channel.subscriber().unwrap()).collect();
    assert!(matches!(channel.subscriber(), Err(Error::NoFreeSlot { slots: 8, .. })));
    let mut a = channel.publisher().unwrap();
    let mut b = channel.publisher().unwrap();
    for value in 0..1_000 {
        a.offer(&Tick { publisher: 0, value }).unwrap();
        b.offer(&Tick { publisher: 1, value }).unwrap();
        for subscriber in subscribers.iter_mut() {
            let mut from = Vec::new();
            let got = subscriber
                .drain(usize::MAX, |info, tick| {
                    assert_eq!(tick.value, value);
                    assert_eq!(info.publisher_slot() as u64, tick.publisher);
                    from.push(tick.publisher);
                })
                .unwrap();
            assert_eq!(got, 2);
            from.sort();
            assert_eq!(from, [0, 1]);
        }
    }
}

#[test]
fn subscriber_at_claims_a_chosen_slot() {
    let name = unique_name("at");
    let channel = FifoFanout::<Tick>::create(&Config::new(&name).subscribers(3)).unwrap();
    let second = channel.subscriber_at(2).unwrap();
    assert_eq!(second.slot(), 2);
    let err = channel.subscriber_at(2).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "subscriber slot 2 of channel {name:?} is held by live process {}; pick another slot or let `subscriber()` choose a free one",
            std::process::id()
        )
    );
    let err = channel.subscriber_at(3).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "channel {name:?} has subscriber slots 0 to 2, not 3; create it with more `subscribers` or pick a lower slot"
        )
    );
    assert_eq!(channel.subscriber().unwrap().slot(), 0);
}

#[test]
fn ordered_merges_publishers_by_global_sequence() {
    let channel = OrderedMpsc::<Tick>::create(&Config::new(unique_name("merge")).publishers(3)).unwrap();
    let mut publishers: Vec<_> = (0..3).map(|_| channel.publisher().unwrap()).collect();
    let mut subscriber = channel.subscriber().unwrap();
    // A deterministic interleaving, including batches and claims committed out of the
    // order they were reserved in.
    let mut order = Vec::new();
    for round in 0..200u64 {
        let p = (round * 7 % 3) as usize;
        match round % 3 {
            0 => publishers[p]
                .offer(&Tick {
                    publisher: p as u64,
                    value: round,
                })
                .unwrap(),
            1 => {
                let batch = [Tick {
                    publisher: p as u64,
                    value: round,
                }; 3];
                assert_eq!(publishers[p].offer_batch(&batch).unwrap(), 3);
                order.extend([(p as u64, round); 2]);
            }
            _ => {
                let mut claim = publishers[p].claim().unwrap();
                *claim = Tick {
                    publisher: p as u64,
                    value: round,
                };
                claim.commit();
            }
        }
        order.push((p as u64, round));
    }
    let mut seen = Vec::new();
    let mut next = 0;
    subscriber
        .drain(usize::MAX, |info, tick| {
            assert_eq!(info.sequence(), next, "sequences are gap-free and increasing");
            next += 1;
            seen.push((tick.publisher, tick.value));
        })
        .unwrap();
    assert_eq!(seen, order, "delivered in exactly the order they were committed");
}

#[test]
fn mpsc_subscriber_resumes_where_the_last_one_stopped() {
    let channel = OrderedMpsc::<Tick>::create(&Config::new(unique_name("resume"))).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for value in 0..10 {
        publisher.offer(&Tick { publisher: 0, value }).unwrap();
    }
    let mut first = channel.subscriber().unwrap();
    for value in 0..4 {
        assert_eq!(first.try_recv().unwrap().unwrap().value, value);
    }
    drop(first);
    let mut second = channel.subscriber().unwrap();
    assert_eq!(second.next_sequence(), 4);
    let message = second.try_recv().unwrap().unwrap();
    assert_eq!((message.sequence(), message.value), (4, 4));
}

#[test]
fn abandoned_ordered_claim_leaves_no_gap() {
    let channel = OrderedMpsc::<Tick>::create(&Config::new(unique_name("abandon")).publishers(2)).unwrap();
    let mut a = channel.publisher().unwrap();
    let mut b = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let abandoned = a.claim().unwrap();
    drop(abandoned);
    b.offer(&Tick { publisher: 1, value: 0 }).unwrap();
    a.offer(&Tick { publisher: 0, value: 1 }).unwrap();
    let mut sequences = Vec::new();
    subscriber.drain(10, |info, _| sequences.push(info.sequence())).unwrap();
    assert_eq!(sequences, [0, 1]);
}

/// A message whose name and schema version are set by hand.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
#[salias(name = "PodTick", version = 3)]
struct PodTick {
    value: u64,
    weight: f64,
}

#[test]
fn named_versioned_messages_round_trip_and_keep_their_identity() {
    use salias::Message;
    let fingerprint = PodTick::FINGERPRINT;
    assert_eq!(
        (fingerprint.name, fingerprint.size, fingerprint.schema_version),
        ("PodTick", 16, 3)
    );
    let name = unique_name("pod");
    let channel = FifoMpsc::<PodTick>::create(&Config::new(&name)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    channel
        .publisher()
        .unwrap()
        .offer(&PodTick { value: 7, weight: 0.5 })
        .unwrap();
    assert_eq!(
        *subscriber.try_recv().unwrap().unwrap(),
        PodTick { value: 7, weight: 0.5 }
    );
    // Same layout, other type: still refused.
    assert!(matches!(
        FifoMpsc::<Tick>::connect(&name),
        Err(Error::TypeMismatch { .. })
    ));
}
