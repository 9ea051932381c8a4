//! Message types described at run time (`MessageType`), as C, C++ and Python programs
//! describe theirs: fingerprinted exactly as the derive fingerprints the same Rust struct,
//! checked at connect both ways, carried by raw-byte handles of exactly their size.

mod support;

use salias::message::{Field, MessageType};
use salias::{
    Config, Error, FifoMpsc, OrderedFanout, PublishError, RawFifoMpsc, RawOrderedFanout, RawOrderedMpsc, SaliasMessage,
};
use support::unique_name;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
#[salias(version = 3)]
struct Quote {
    instrument: u64,
    bid: f64,
    ask: f64,
    venue: [u8; 4],
    size: u32,
}

/// What a C program declaring `struct Quote` with the same fields describes.
fn quote_described() -> MessageType {
    MessageType::new(
        "Quote",
        32,
        8,
        3,
        vec![
            Field::new("instrument", "u64", 0, 8),
            Field::new("bid", "f64", 8, 8),
            Field::new("ask", "f64", 16, 8),
            Field::new("venue", "[u8;4]", 24, 4),
            Field::new("size", "u32", 28, 4),
        ],
    )
    .unwrap()
}

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Pair(u32, [[i16; 2]; 2]);

#[test]
fn a_described_type_is_the_derived_type_with_the_same_fields() {
    let described = quote_described();
    assert_eq!(described, MessageType::of::<Quote>());
    assert_eq!(described.to_string(), MessageType::of::<Quote>().to_string());

    let pair = MessageType::of::<Pair>();
    assert_eq!(
        pair.fields(),
        [Field::new("0", "u32", 0, 4), Field::new("1", "[[i16;2];2]", 4, 8)]
    );
    let again = MessageType::new("Pair", 12, 4, 0, pair.fields().to_vec()).unwrap();
    assert_eq!(again.layout_hash(), pair.layout_hash());
}

#[test]
fn a_different_layout_hashes_differently() {
    let base = quote_described();
    let renamed = {
        let mut fields = base.fields().to_vec();
        fields[1].name = "bid_price".to_owned();
        MessageType::new("Quote", 32, 8, 3, fields).unwrap()
    };
    let retyped = {
        let mut fields = base.fields().to_vec();
        fields[4].ty = "i32".to_owned();
        MessageType::new("Quote", 32, 8, 3, fields).unwrap()
    };
    let other_name = MessageType::new("Quote2", 32, 8, 3, base.fields().to_vec()).unwrap();
    for other in [&renamed, &retyped, &other_name] {
        assert_ne!(other.layout_hash(), base.layout_hash(), "{other:?}");
    }
}

#[test]
fn messages_cross_between_derived_and_described_handles() {
    let name = unique_name("described-cross");
    let channel = RawOrderedFanout::create_typed(&Config::new(&name).publishers(2), &quote_described()).unwrap();
    let rust = OrderedFanout::<Quote>::connect(&name).unwrap();
    let mut raw_subscriber = channel.subscriber().unwrap();
    let mut rust_subscriber = rust.subscriber().unwrap();

    let quote = Quote {
        instrument: 7,
        bid: 1.5,
        ask: 1.75,
        venue: *b"XLON",
        size: 300,
    };
    rust.publisher().unwrap().offer(&quote).unwrap();
    let mut raw_publisher = channel.publisher().unwrap();
    let mut second = quote;
    second.instrument = 8;
    raw_publisher.offer(second.as_bytes()).unwrap();

    for expected in [quote, second] {
        let received = raw_subscriber.try_recv().unwrap().unwrap();
        assert_eq!(Quote::read_from_bytes(&received).unwrap(), expected);
        drop(received);
        assert_eq!(*rust_subscriber.try_recv().unwrap().unwrap(), expected);
    }
    assert_eq!(
        raw_publisher.offer(&[0; 31]),
        Err(PublishError::WrongMessageSize { len: 31, expected: 32 })
    );
}

#[test]
fn a_mismatched_type_is_refused_both_ways() {
    let name = unique_name("described-mismatch");
    let _rust = FifoMpsc::<Quote>::create(&Config::new(&name)).unwrap();
    let mut fields = quote_described().fields().to_vec();
    fields.swap(1, 2);
    fields[1].offset = 8;
    fields[2].offset = 16;
    let swapped = MessageType::new("Quote", 32, 8, 3, fields).unwrap();
    let refused = RawFifoMpsc::connect_typed(&name, &swapped).unwrap_err();
    assert!(matches!(refused, Error::TypeMismatch { .. }), "{refused:?}");
    assert!(RawFifoMpsc::connect_typed(&name, &quote_described()).is_ok());

    let name = unique_name("described-mismatch-back");
    let _described = RawOrderedMpsc::create_typed(&Config::new(&name), &swapped).unwrap();
    let refused = salias::OrderedMpsc::<Quote>::connect(&name).unwrap_err();
    assert!(matches!(refused, Error::TypeMismatch { .. }), "{refused:?}");
    assert!(
        refused.to_string().contains("`Quote` (schema v3, 32 bytes"),
        "{refused}"
    );
    // The kind is checked as for any handle.
    let refused = RawFifoMpsc::connect_typed(&name, &swapped).unwrap_err();
    assert!(matches!(refused, Error::KindMismatch { .. }), "{refused:?}");
}

#[test]
fn layouts_no_channel_can_carry_are_refused_with_the_reason() {
    let field = |name: &str, ty: &str, offset, size| Field::new(name, ty, offset, size);
    let refused = [
        (
            MessageType::new("", 8, 8, 0, vec![field("a", "u64", 0, 8)]),
            "name of 1 to 64",
        ),
        (
            MessageType::new("x".repeat(65), 8, 8, 0, vec![field("a", "u64", 0, 8)]),
            "name of 1 to 64",
        ),
        (
            MessageType::new("Wide", 16, 16, 0, vec![field("a", "u128", 0, 16)]),
            "power of two up to 8",
        ),
        (
            MessageType::new("Odd", 12, 8, 0, vec![field("a", "u64", 0, 12)]),
            "multiple",
        ),
        (
            MessageType::new(
                "Padded",
                16,
                8,
                0,
                vec![field("a", "u32", 0, 4), field("b", "u64", 8, 8)],
            ),
            "bytes 4..8 before field \"b\" are padding",
        ),
        (
            MessageType::new("Tail", 16, 8, 0, vec![field("a", "u64", 0, 8)]),
            "bytes 8..16 after the last field",
        ),
        (
            MessageType::new(
                "Overlap",
                16,
                8,
                0,
                vec![field("a", "u64", 0, 8), field("b", "u64", 4, 8)],
            ),
            "overlaps",
        ),
        (
            MessageType::new("Past", 8, 8, 0, vec![field("a", "u64", 0, 16)]),
            "past the type's 8 bytes",
        ),
        (
            MessageType::new("Spaced", 8, 8, 0, vec![field("a", "[u8; 8]", 0, 8)]),
            "without whitespace",
        ),
        (
            MessageType::new("Unnamed", 8, 8, 0, vec![field("", "u64", 0, 8)]),
            "needs a name",
        ),
    ];
    for (result, expected) in refused {
        let error = result.unwrap_err();
        assert!(matches!(error, Error::InvalidMessageType { .. }), "{error:?}");
        assert!(error.to_string().contains(expected), "{error} lacks {expected:?}");
    }
}

/// A raw claim on a typed channel reserves and commits exactly the type's size: a short
/// commit would put a frame in the ring that every typed subscriber must refuse.
#[test]
fn raw_claims_on_a_typed_channel_are_the_types_size() {
    let name = unique_name("described-claim");
    let channel = RawFifoMpsc::create_typed(&Config::new(&name), &quote_described()).unwrap();
    let mut publisher = channel.publisher().unwrap();
    assert_eq!(
        publisher.claim(16).err(),
        Some(PublishError::WrongMessageSize { len: 16, expected: 32 })
    );
    let claim = publisher.claim(32).unwrap();
    assert_eq!(
        claim.commit_len(8),
        Err(PublishError::WrongMessageSize { len: 8, expected: 32 })
    );
    let mut claim = publisher.claim(32).unwrap();
    claim.copy_from_slice(&[7; 32]);
    claim.commit();
    let mut subscriber = channel.subscriber().unwrap();
    assert_eq!(&*subscriber.try_recv().unwrap().unwrap(), &[7; 32]);
    assert!(subscriber.try_recv().unwrap().is_none());
}

/// A typed channel records its type's fields, so a tool or another language learns the
/// layout of a live channel's messages and can connect with it.
#[test]
fn a_live_channel_tells_its_type_with_its_fields() {
    let derived = unique_name("described-recorded");
    let _channel = FifoMpsc::<Quote>::create(&Config::new(&derived)).unwrap();
    let recorded = salias::status::channel_status(&derived).unwrap().recorded_type.unwrap();
    assert_eq!(recorded.fields.as_deref(), Some(quote_described().fields()));
    let learned = recorded.message_type().unwrap();
    assert_eq!(learned, MessageType::of::<Quote>());
    // What was learned connects as the type it is.
    RawFifoMpsc::connect_typed(&derived, &learned).unwrap();

    let described = unique_name("described-recorded-c");
    let _channel = RawOrderedFanout::create_typed(&Config::new(&described), &quote_described()).unwrap();
    let recorded = salias::status::channel_status(&described)
        .unwrap()
        .recorded_type
        .unwrap();
    assert_eq!(recorded.message_type(), Some(quote_described()));

    // Raw channels record no type at all.
    let raw = unique_name("described-recorded-raw");
    let _channel = RawFifoMpsc::create(&Config::new(&raw)).unwrap();
    assert_eq!(salias::status::channel_status(&raw).unwrap().recorded_type, None);
}

/// A type whose field names exceed the control block's table is recorded by fingerprint
/// alone: connect still checks it, and its fields are reported as unknown, not truncated.
#[test]
fn a_type_too_long_to_tabulate_is_recorded_without_fields() {
    let fields: Vec<_> = (0..40)
        .map(|i| Field::new(format!("{i:0>60}"), "u64", i * 8, 8))
        .collect();
    let wide = MessageType::new("Wide", 320, 8, 0, fields).unwrap();
    let name = unique_name("described-wide");
    let _channel = RawFifoMpsc::create_typed(&Config::new(&name), &wide).unwrap();
    let recorded = salias::status::channel_status(&name).unwrap().recorded_type.unwrap();
    assert_eq!((recorded.fields, recorded.layout_hash), (None, wide.layout_hash()));
    RawFifoMpsc::connect_typed(&name, &wide).unwrap();
}
