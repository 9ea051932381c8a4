//! `offer_batch` on raw and typed channels: a batch publishes as many messages as fit, in
//! order, refreshing its view of the room only when some do not fit; a message too large
//! anywhere in the batch publishes nothing; and a batch none of which fits is refused.
//! `offer_packed`, the same for equal-size messages packed back to back.

mod support;

use salias::{Config, FifoMpsc, PublishError, RawFifoMpsc, SaliasMessage};
use support::unique_name;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Tick {
    seq: u64,
    words: [u64; 7],
}

/// One page of ring: 4096 bytes.
const RING: usize = 4096;

/// Offers batches of `width` (`offer(sent)` publishes the batch starting at message `sent`)
/// until one is refused for room; returns how many were published and how many batches
/// were cut short. Each batch publishes between 1 and `width`.
fn fill_until_refused(width: usize, mut offer: impl FnMut(usize) -> Result<usize, PublishError>) -> (usize, usize) {
    let (mut sent, mut short_batches) = (0usize, 0);
    loop {
        match offer(sent) {
            Ok(count) => {
                assert!((1..=width).contains(&count));
                short_batches += usize::from(count < width);
                sent += count;
            }
            Err(PublishError::Backpressured) => return (sent, short_batches),
            Err(other) => panic!("{other}"),
        }
    }
}

#[test]
fn raw_batch_with_one_message_too_large_publishes_nothing() {
    let channel = RawFifoMpsc::create(&Config::new(unique_name("batch-too-large")).max_message_size(64)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let batch = [vec![1u8; 10], vec![2u8; 64], vec![3u8; 65], vec![4u8; 1]];
    assert_eq!(
        publisher.offer_batch(&batch),
        Err(PublishError::MessageTooLarge { len: 65, max: 64 })
    );
    assert_eq!(publisher.published(), 0);
    assert!(subscriber.try_recv().unwrap().is_none());
}

#[test]
fn raw_batches_fill_the_ring_in_order_then_are_refused() {
    let config = Config::new(unique_name("batch-raw-fill"))
        .capacity(RING)
        .max_message_size(100);
    let channel = RawFifoMpsc::create(&config).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    // Lengths 1..=100 over and over, so frames of many sizes meet the end of the room.
    let message = |seq: usize| vec![seq as u8; 1 + seq % 100];
    let (sent, short_batches) = fill_until_refused(16, |sent| {
        let batch: Vec<Vec<u8>> = (sent..sent + 16).map(message).collect();
        publisher.offer_batch(&batch)
    });
    // The room ran out midway through a batch before a whole batch was refused.
    assert!(short_batches >= 1, "no batch was cut short");
    assert_eq!(publisher.published(), sent as u64);
    assert_eq!(publisher.backpressured(), 1);
    let mut received = 0;
    while let Some(frame) = subscriber.try_recv().unwrap() {
        assert_eq!(&*frame, &message(received)[..], "message {received}");
        received += 1;
    }
    assert_eq!(received, sent);
    // Room again: the next batch starts where the last one stopped.
    let batch: Vec<Vec<u8>> = (sent..sent + 4).map(message).collect();
    assert_eq!(publisher.offer_batch(&batch).unwrap(), 4);
    for seq in sent..sent + 4 {
        assert_eq!(&*subscriber.try_recv().unwrap().expect("published"), &message(seq)[..]);
    }
}

#[test]
fn typed_batches_fill_the_ring_in_order_then_are_refused() {
    let channel = FifoMpsc::<Tick>::create(&Config::new(unique_name("batch-typed-fill")).capacity(RING)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let tick = |seq: u64| Tick { seq, words: [!seq; 7] };
    let mut sent = 0u64;
    // 80-byte frames: 51 fit a page, so the fourth batch of 16 is cut short at 3.
    let mut counts = Vec::new();
    loop {
        let batch: Vec<Tick> = (sent..sent + 16).map(tick).collect();
        match publisher.offer_batch(&batch) {
            Ok(count) => {
                counts.push(count);
                sent += count as u64;
            }
            Err(PublishError::Backpressured) => break,
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(counts, [16, 16, 16, 3]);
    let mut received = 0;
    while let Some(message) = subscriber.try_recv().unwrap() {
        assert_eq!(*message, tick(received));
        received += 1;
    }
    assert_eq!(received, sent);
}

#[test]
fn packed_batches_fill_the_ring_in_order_then_are_refused() {
    const SIZE: usize = 24;
    let config = Config::new(unique_name("batch-packed-fill"))
        .capacity(RING)
        .max_message_size(64);
    let channel = RawFifoMpsc::create(&config).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let message = |seq: usize| [seq as u8; SIZE];
    // 7 at a time: the ring's room is not a multiple of 7 frames, so one batch is cut.
    let (sent, short_batches) = fill_until_refused(7, |sent| {
        let packed: Vec<u8> = (sent..sent + 7).flat_map(message).collect();
        publisher.offer_packed(&packed, SIZE)
    });
    assert!(short_batches >= 1, "no batch was cut short");
    assert_eq!((publisher.published(), publisher.backpressured()), (sent as u64, 1));
    let mut received = 0;
    while let Some(frame) = subscriber.try_recv().unwrap() {
        assert_eq!(&*frame, &message(received)[..], "message {received}");
        received += 1;
    }
    assert_eq!(received, sent);
    assert_eq!(publisher.offer_packed(&[], SIZE), Ok(0));
}

#[test]
fn packed_batches_that_are_not_whole_messages_publish_nothing() {
    let channel = RawFifoMpsc::create(&Config::new(unique_name("batch-packed-bad")).max_message_size(64)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let bytes = [7u8; 100];
    assert_eq!(
        publisher.offer_packed(&bytes, 30),
        Err(PublishError::PackedLength { len: 100, size: 30 })
    );
    assert_eq!(
        publisher.offer_packed(&bytes, 0),
        Err(PublishError::PackedLength { len: 100, size: 0 })
    );
    assert_eq!(
        publisher.offer_packed(&bytes, 100),
        Err(PublishError::MessageTooLarge { len: 100, max: 64 })
    );
    let message = PublishError::PackedLength { len: 100, size: 30 }.to_string();
    assert!(
        message.contains("100 bytes") && message.contains("30-byte"),
        "{message}"
    );
    assert_eq!(publisher.published(), 0);
    assert!(subscriber.try_recv().unwrap().is_none());
    // A typed channel's packed messages must be its type's size.
    let name = unique_name("batch-packed-typed");
    let typed = FifoMpsc::<Tick>::create(&Config::new(&name)).unwrap();
    let mut typed_subscriber = typed.subscriber().unwrap();
    let raw = RawFifoMpsc::connect_as_bytes(&name).unwrap();
    let mut raw_publisher = raw.publisher().unwrap();
    assert_eq!(
        raw_publisher.offer_packed(&[0u8; 96], 32),
        Err(PublishError::WrongMessageSize { len: 32, expected: 64 })
    );
    let ticks = [Tick { seq: 1, words: [1; 7] }, Tick { seq: 2, words: [2; 7] }];
    assert_eq!(raw_publisher.offer_packed(ticks.as_bytes(), 64), Ok(2));
    assert_eq!(typed_subscriber.try_recv().unwrap().map(|t| *t), Some(ticks[0]));
    assert_eq!(typed_subscriber.try_recv().unwrap().map(|t| *t), Some(ticks[1]));
}
