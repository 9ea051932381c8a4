//! No `Config` value makes salias panic: every builder takes arbitrary values, and what
//! `create` would refuse is an `InvalidConfig` error naming the field and saying what to
//! do. CI runs this in a debug build (overflow checks on) and in a release build.
//!
//! The configs are checked as `create` checks them before it touches shared memory
//! (`__validate`), so a huge but valid ring is never actually reserved.

use std::time::Duration;

use proptest::prelude::*;
use salias::config::{HugePages, RawChannel};
use salias::{Config, Error, FifoMpsc, OrderedFanout, RawFifoFanout, RawOrderedMpsc, SaliasMessage};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Tick {
    seq: u64,
    words: [u64; 7],
}

/// Sizes where arithmetic breaks: 0, 1, powers of two and their neighbours, the extremes.
fn size() -> impl Strategy<Value = usize> {
    prop_oneof![
        any::<usize>(),
        Just(0usize),
        Just(usize::MAX),
        (0u32..usize::BITS).prop_map(|bit| 1usize << bit),
        (0u32..usize::BITS).prop_map(|bit| (1usize << bit).wrapping_sub(1)),
        (0u32..usize::BITS).prop_map(|bit| (1usize << bit).wrapping_add(1)),
    ]
}

fn count() -> impl Strategy<Value = u32> {
    prop_oneof![any::<u32>(), 0u32..=300, Just(u32::MAX)]
}

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        any::<u64>().prop_map(Duration::from_nanos),
        any::<u64>().prop_map(Duration::from_secs),
        Just(Duration::ZERO),
        Just(Duration::MAX),
    ]
}

#[derive(Debug, Clone)]
struct Settings {
    capacity: Option<usize>,
    publishers: Option<u32>,
    subscribers: Option<u32>,
    max_message_size: Option<usize>,
    publication_window: Option<usize>,
    huge_pages: HugePages,
    permissions: Option<u32>,
    tether_timeout: Option<Duration>,
    numa_node: Option<u32>,
    keep: bool,
}

fn settings() -> impl Strategy<Value = Settings> {
    (
        (
            proptest::option::of(size()),
            proptest::option::of(count()),
            proptest::option::of(count()),
            proptest::option::of(size()),
            proptest::option::of(size()),
        ),
        (
            prop_oneof![
                Just(HugePages::None),
                Just(HugePages::Size2MB),
                Just(HugePages::Size1GB)
            ],
            proptest::option::of(any::<u32>()),
            proptest::option::of(duration()),
            proptest::option::of(prop_oneof![0u32..4, any::<u32>()]),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (capacity, publishers, subscribers, max_message_size, publication_window),
                (huge_pages, permissions, tether_timeout, numa_node, keep),
            )| Settings {
                capacity,
                publishers,
                subscribers,
                max_message_size,
                publication_window,
                huge_pages,
                permissions,
                tether_timeout,
                numa_node,
                keep,
            },
        )
}

/// Every builder but `max_message_size`, which only raw channels take.
fn build<C: salias::config::ChannelSettings>(mut config: Config<C>, s: &Settings) -> Config<C> {
    if let Some(bytes) = s.capacity {
        config = config.capacity(bytes);
    }
    if let Some(slots) = s.publishers {
        config = config.publishers(slots);
    }
    if let Some(slots) = s.subscribers {
        config = config.subscribers(slots);
    }
    if let Some(bytes) = s.publication_window {
        config = config.publication_window(bytes);
    }
    if let Some(mode) = s.permissions {
        config = config.permissions(mode);
    }
    if let Some(timeout) = s.tether_timeout {
        config = config.tether_timeout(timeout);
    }
    if let Some(node) = s.numa_node {
        config = config.numa_node(node);
    }
    config.huge_pages(s.huge_pages).keep_on_drop(s.keep)
}

/// An error from a config check is one a user can act on: an invalid field, named in
/// the sentence with what to do, or what the machine cannot give (huge pages, a NUMA
/// node).
fn acceptable(error: &Error) -> Result<(), String> {
    let text = error.to_string();
    match error {
        Error::InvalidConfig { field, reason } if !reason.is_empty() && text.contains(field) => Ok(()),
        Error::Unsupported { .. } | Error::Platform { .. } if !text.is_empty() => Ok(()),
        other => Err(format!("{other:?}")),
    }
}

fn check(result: salias::Result<()>) -> Result<(), TestCaseError> {
    match result {
        Ok(()) => Ok(()),
        Err(error) => acceptable(&error).map_err(TestCaseError::fail),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_config_value_panics(s in settings()) {
        let name = "config-values";
        // Typed, every kind.
        check(FifoMpsc::<Tick>::__validate(&build(Config::new(name), &s)))?;
        check(OrderedFanout::<Tick>::__validate(&build(Config::new(name), &s)))?;
        // Raw, with and without a maximum message size.
        let raw: Config<RawChannel> = match s.max_message_size {
            Some(bytes) => build(Config::new(name), &s).max_message_size(bytes),
            None => build(Config::new(name), &s).max_message_size(4096),
        };
        check(RawFifoFanout::__validate(&raw))?;
        check(RawOrderedMpsc::__validate(&raw))?;
    }
}

/// The property's own check refuses what it should: a panic-free but unhelpful error
/// would fail it, and a plainly invalid field is reported by name.
#[test]
fn an_invalid_field_is_named() {
    let err = FifoMpsc::<Tick>::__validate(&Config::new("config-values").capacity(3000)).unwrap_err();
    assert!(matches!(err, Error::InvalidConfig { field: "capacity", .. }), "{err:?}");
    assert!(acceptable(&err).is_ok());
    let err = RawFifoFanout::__validate(&Config::new("config-values").max_message_size(0)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidConfig {
                field: "max_message_size",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(acceptable(&Error::NotFound { name: "x".into() }).is_err());
}
