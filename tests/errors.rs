//! Every invalid name, config, type, size and state gets a typed error whose message says
//! what was wrong and how to fix it. Each test asserts the exact error and its sentence.

mod support;

use salias::{
    Bytes, Config, Error, FifoMpsc, PublishError, RawFifoMpsc, ReceiveError, SaliasMessage, config::HugePages,
    error::NameProblem, error::Role,
};
use support::unique_name;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Quote {
    instrument: u64,
    bid: f64,
    ask: f64,
}

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Trade {
    instrument: u64,
    price: f64,
    quantity: u64,
}

/// A type with the same layout as `Quote` but a different name: the fingerprint tells
/// them apart.
#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
#[salias(version = 2)]
struct QuoteV2 {
    instrument: u64,
    bid: f64,
    ask: f64,
}

fn create_err(config: Config) -> Error {
    FifoMpsc::<Quote>::create(&config).expect_err("the config must be refused")
}

fn raw_create_err<C: salias::config::Creates<salias::Bytes>>(config: Config<C>) -> Error {
    RawFifoMpsc::create(&config).expect_err("the config must be refused")
}

#[test]
fn empty_name() {
    let err = create_err(Config::new(""));
    assert_eq!(
        err,
        Error::InvalidName {
            name: String::new(),
            problem: NameProblem::Empty
        }
    );
    assert_eq!(
        err.to_string(),
        "invalid channel name \"\": the name is empty; give the channel a name such as \"quotes\""
    );
}

#[test]
fn over_long_name() {
    let name = "n".repeat(65);
    let err = create_err(Config::new(&name));
    assert_eq!(
        err,
        Error::InvalidName {
            name: name.clone(),
            problem: NameProblem::TooLong { len: 65 }
        }
    );
    assert_eq!(
        err.to_string(),
        format!("invalid channel name {name:?}: it is 65 bytes long, the limit is 64 bytes; choose a shorter name")
    );
    // 64 bytes is fine.
    let longest = format!("{}-{}", std::process::id(), "m".repeat(64)).split_off(0)[..64].to_owned();
    assert!(FifoMpsc::<Quote>::create(&Config::new(&longest)).is_ok());
}

#[test]
fn name_with_slash() {
    let err = create_err(Config::new("a/b"));
    assert_eq!(
        err,
        Error::InvalidName {
            name: "a/b".into(),
            problem: NameProblem::BadChar { ch: '/', at: 1 }
        }
    );
    assert_eq!(
        err.to_string(),
        "invalid channel name \"a/b\": character '/' at byte 1 is not allowed; use only letters, digits, '.', '_' and '-'"
    );
    // A name cannot climb out of the shared-memory namespace either.
    assert!(matches!(
        create_err(Config::new("../etc")),
        Error::InvalidName {
            problem: NameProblem::BadChar { ch: '/', at: 2 },
            ..
        }
    ));
}

#[test]
fn name_with_nul() {
    let err = create_err(Config::new("ab\0c"));
    assert_eq!(
        err,
        Error::InvalidName {
            name: "ab\0c".into(),
            problem: NameProblem::BadChar { ch: '\0', at: 2 }
        }
    );
    assert_eq!(
        err.to_string(),
        "invalid channel name \"ab\\0c\": character '\\0' at byte 2 is not allowed; use only letters, digits, '.', '_' and '-'"
    );
}

#[test]
fn name_starting_with_dot() {
    let err = create_err(Config::new(".hidden"));
    assert_eq!(
        err.to_string(),
        "invalid channel name \".hidden\": it starts with '.' or '-'; start it with a letter, digit or '_'"
    );
}

#[test]
fn capacity_zero() {
    let err = create_err(Config::new(unique_name("cap0")).capacity(0));
    assert_eq!(
        err.to_string(),
        "invalid config `capacity`: it is 0; give each publisher ring a power of two of at least one page, e.g. 1 MiB"
    );
    assert!(matches!(err, Error::InvalidConfig { field: "capacity", .. }));
}

#[test]
fn capacity_not_power_of_two() {
    let err = create_err(Config::new(unique_name("cap3")).capacity(3 << 20));
    assert_eq!(
        err.to_string(),
        "invalid config `capacity`: 3145728 bytes is not a power of two; try 4194304 bytes"
    );
}

/// Above the largest power of two there is none to round up to: the error suggests the
/// one below, in debug builds (where the rounding overflowed) and release alike.
#[test]
fn capacity_past_the_largest_power_of_two_is_an_error() {
    for capacity in [usize::MAX, (1 << (usize::BITS - 1)) + 1] {
        let err = create_err(Config::new(unique_name("cap-max")).capacity(capacity));
        assert_eq!(
            err.to_string(),
            format!(
                "invalid config `capacity`: {capacity} bytes is not a power of two; try {} bytes",
                1usize << (usize::BITS - 1)
            )
        );
    }
}

#[test]
fn capacity_not_multiple_of_page() {
    let page = rustix_page_size();
    let err = create_err(Config::new(unique_name("cap-page")).capacity(page / 2));
    assert_eq!(
        err.to_string(),
        format!(
            "invalid config `capacity`: {} bytes is not a multiple of the page size ({page} bytes); use at least {page} bytes",
            page / 2
        )
    );
}

#[test]
fn capacity_not_multiple_of_huge_page() {
    let err = create_err(
        Config::new(unique_name("cap-huge"))
            .capacity(1 << 20)
            .huge_pages(HugePages::Size2MB),
    );
    assert_eq!(
        err.to_string(),
        "invalid config `capacity`: 1048576 bytes is not a multiple of the huge page size (2097152 bytes); use at least 2097152 bytes"
    );
}

fn rustix_page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

#[test]
fn zero_producers() {
    let err = create_err(Config::new(unique_name("p0")).publishers(0));
    assert_eq!(
        err.to_string(),
        "invalid config `publishers`: it is 0; a channel needs at least 1 publisher slot"
    );
}

#[test]
fn too_many_producer_slots() {
    let err = create_err(Config::new(unique_name("p65")).publishers(65));
    assert_eq!(
        err.to_string(),
        "invalid config `publishers`: 65 publisher slots is more than the limit of 64"
    );
}

#[test]
fn mpsc_with_several_subscriber_slots() {
    let err = create_err(Config::new(unique_name("s2")).subscribers(2));
    assert_eq!(
        err.to_string(),
        "invalid config `subscribers`: an Mpsc channel has exactly 1 subscriber slot, not 2; use a Fanout channel for several subscribers"
    );
    let err = create_err(Config::new(unique_name("s0")).subscribers(0));
    assert_eq!(
        err.to_string(),
        "invalid config `subscribers`: it is 0; a channel needs at least 1 subscriber slot"
    );
}

#[test]
fn more_publishers_than_slots() {
    let channel = FifoMpsc::<Quote>::create(&Config::new(unique_name("slots")).publishers(2)).unwrap();
    let _a = channel.publisher().unwrap();
    let b = channel.publisher().unwrap();
    let err = channel.publisher().unwrap_err();
    assert_eq!(
        err,
        Error::NoFreeSlot {
            name: channel.name().to_owned(),
            role: Role::Publisher,
            slots: 2
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "channel {:?} has no free publisher slot (all 2 are in use); drop an unused publisher or create the channel with more slots (`Config::publishers`)",
            channel.name()
        )
    );
    // Dropping a publisher frees its slot.
    drop(b);
    assert!(channel.publisher().is_ok());
}

#[test]
fn second_subscriber_on_mpsc() {
    let channel = FifoMpsc::<Quote>::create(&Config::new(unique_name("sub2"))).unwrap();
    let first = channel.subscriber().unwrap();
    let err = channel.subscriber().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "channel {:?} has no free subscriber slot (all 1 are in use); drop an unused subscriber or create the channel with more slots (`Config::subscribers`, on a Fanout channel: an Mpsc channel has one subscriber)",
            channel.name()
        )
    );
    drop(first);
    assert!(channel.subscriber().is_ok());
}

#[test]
fn message_larger_than_maximum() {
    let channel = RawFifoMpsc::create(&Config::new(unique_name("big")).max_message_size(100)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let err = publisher.offer(&[0u8; 101]).unwrap_err();
    assert_eq!(err, PublishError::MessageTooLarge { len: 101, max: 100 });
    assert_eq!(
        err.to_string(),
        "message of 101 bytes is larger than the channel's maximum of 100 bytes; split it or create the channel with a larger `max_message_size`"
    );
    assert!(matches!(
        publisher.claim(101),
        Err(PublishError::MessageTooLarge { len: 101, max: 100 })
    ));
    // Nothing was written: the subscriber finds the ring empty.
    assert!(channel.subscriber().unwrap().try_recv().unwrap().is_none());
    assert_eq!(publisher.offer(&[7u8; 100]), Ok(()));
}

#[test]
fn max_message_size_zero_or_unframeable() {
    let err = raw_create_err(Config::new(unique_name("max0")).max_message_size(0));
    assert_eq!(
        err.to_string(),
        "invalid config `max_message_size`: it is 0; raw channels need a maximum of at least 1 byte"
    );
    let err = raw_create_err(
        Config::new(unique_name("max-big"))
            .capacity(4096)
            .max_message_size(4096),
    );
    assert_eq!(
        err.to_string(),
        "invalid config `capacity`: 4096 bytes cannot hold one largest message (4096 bytes payload, 4112 bytes framed); make it at least 4112 bytes"
    );
}

#[test]
fn publication_window_larger_than_ring() {
    let err = create_err(
        Config::new(unique_name("win"))
            .capacity(1 << 16)
            .publication_window(1 << 17),
    );
    assert_eq!(
        err.to_string(),
        "invalid config `publication_window`: 131072 bytes is larger than the ring capacity (65536 bytes); use at most the capacity"
    );
    let err = create_err(Config::new(unique_name("win-small")).publication_window(16));
    assert_eq!(
        err.to_string(),
        "invalid config `publication_window`: 16 bytes cannot hold one largest message (24 bytes payload, 40 bytes framed); make it at least 40 bytes"
    );
}

#[test]
fn permissions_out_of_range() {
    let err = create_err(Config::new(unique_name("perm")).permissions(0o4755));
    assert_eq!(
        err.to_string(),
        "invalid config `permissions`: 0o4755 has bits outside 0o777; give plain rwx bits such as 0o600"
    );
    let err = create_err(Config::new(unique_name("perm-ro")).permissions(0o444));
    assert_eq!(
        err.to_string(),
        "invalid config `permissions`: 0o444 does not let the owner read and write; include 0o600"
    );
}

#[test]
fn connect_to_missing_name() {
    let name = unique_name("missing");
    let err = FifoMpsc::<Quote>::connect(&name).unwrap_err();
    assert_eq!(err, Error::NotFound { name: name.clone() });
    assert_eq!(
        err.to_string(),
        format!("no channel named {name:?} exists; create it first with `create`, or check the name")
    );
}

#[test]
fn connect_with_wrong_message_type() {
    let name = unique_name("type");
    let _owner = FifoMpsc::<Quote>::create(&Config::new(&name)).unwrap();
    let err = FifoMpsc::<Trade>::connect(&name).unwrap_err();
    let Error::TypeMismatch {
        channel_type,
        requested_type,
        ..
    } = &err
    else {
        panic!("expected a type mismatch, got {err}");
    };
    assert!(
        channel_type.starts_with("`Quote` (schema v0, 24 bytes, align 8, layout "),
        "{channel_type}"
    );
    assert!(
        requested_type.starts_with("`Trade` (schema v0, 24 bytes, align 8, layout "),
        "{requested_type}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "channel {name:?} carries messages of type {channel_type}, but this process asked for {requested_type}; connect with the channel's type, or use the raw-bytes API explicitly"
        )
    );
    // Same layout, other name and schema version: still refused.
    assert!(matches!(
        FifoMpsc::<QuoteV2>::connect(&name),
        Err(Error::TypeMismatch { .. })
    ));
    // Typed channel as raw bytes: refused by `connect`, allowed by the explicit API.
    assert!(matches!(RawFifoMpsc::connect(&name), Err(Error::TypeMismatch { .. })));
    assert!(FifoMpsc::<Quote>::connect(&name).is_ok());
}

#[test]
fn raw_view_of_typed_channel_keeps_the_type_size() {
    let name = unique_name("raw-view");
    let owner = FifoMpsc::<Quote>::create(&Config::new(&name)).unwrap();
    let raw = FifoMpsc::<Bytes>::connect_as_bytes(&name).unwrap();
    let mut publisher = raw.publisher().unwrap();
    let err = publisher.offer(&[1u8; 23]).unwrap_err();
    assert_eq!(err, PublishError::WrongMessageSize { len: 23, expected: 24 });
    assert_eq!(
        err.to_string(),
        "raw message of 23 bytes does not fit this typed channel, whose messages are exactly 24 bytes"
    );
    let quote = Quote {
        instrument: 1,
        bid: 2.0,
        ask: 3.0,
    };
    let bytes: Vec<u8> = [1u64.to_ne_bytes(), 2.0f64.to_ne_bytes(), 3.0f64.to_ne_bytes()].concat();
    publisher.offer(&bytes).unwrap();
    assert_eq!(*owner.subscriber().unwrap().try_recv().unwrap().unwrap(), quote);
}

#[test]
fn connect_with_wrong_mode_or_topology() {
    let name = unique_name("kind");
    let _owner = FifoMpsc::<Quote>::create(&Config::new(&name)).unwrap();
    let says = |kind: &str| {
        format!(
            "channel {name:?} is a FifoMpsc channel, but this process asked for {kind}; connect with the same mode and topology it was created with"
        )
    };
    let err = salias::OrderedMpsc::<Quote>::connect(&name).unwrap_err();
    assert_eq!(
        err,
        Error::KindMismatch {
            name: name.clone(),
            channel_kind: "FifoMpsc".into(),
            requested_kind: "OrderedMpsc".into()
        }
    );
    assert_eq!(err.to_string(), says("OrderedMpsc"));
    assert_eq!(
        salias::FifoFanout::<Quote>::connect(&name).unwrap_err().to_string(),
        says("FifoFanout")
    );
    assert_eq!(
        salias::OrderedFanout::<Quote>::connect(&name).unwrap_err().to_string(),
        says("OrderedFanout")
    );
}

#[test]
fn fanout_with_too_many_subscriber_slots() {
    let err = salias::FifoFanout::<Quote>::create(&Config::new(unique_name("s65")).subscribers(65)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid config `subscribers`: 65 subscriber slots is more than the limit of 64"
    );
}

#[test]
fn connect_to_object_that_is_not_a_channel() {
    let name = unique_name("foreign");
    let [control, _] = salias::__private::shm_object_names(&name);
    let path = format!("/dev/shm{control}");
    std::fs::write(&path, vec![0xABu8; 8192]).unwrap();
    let err = FifoMpsc::<Quote>::connect(&name).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        err,
        Error::NotAChannel {
            name: name.clone(),
            reason: "its state word is 0xabababab".into()
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "the shared-memory object for {name:?} is not a salias channel (its state word is 0xabababab); remove it or choose another name"
        )
    );
}

#[test]
fn create_over_existing_live_channel() {
    let name = unique_name("live");
    let _owner = FifoMpsc::<Quote>::create(&Config::new(&name)).unwrap();
    let err = FifoMpsc::<Quote>::create(&Config::new(&name)).unwrap_err();
    let pid = std::process::id();
    assert_eq!(
        err,
        Error::AlreadyExists {
            name: name.clone(),
            owner_pid: Some(pid)
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "channel {name:?} already exists and is owned by live process {pid}; connect to it instead, or choose another name"
        )
    );
    // The failed create removed nothing: the channel still works.
    assert!(FifoMpsc::<Quote>::connect(&name).is_ok());
}

#[test]
fn kept_channel_outlives_its_owner() {
    let name = unique_name("kept");
    let owner = FifoMpsc::<Quote>::create(&Config::new(&name).keep_on_drop(true)).unwrap();
    owner
        .publisher()
        .unwrap()
        .offer(&Quote {
            instrument: 9,
            bid: 1.0,
            ask: 2.0,
        })
        .unwrap();
    drop(owner);
    let again = FifoMpsc::<Quote>::connect(&name).unwrap();
    assert_eq!(again.subscriber().unwrap().try_recv().unwrap().unwrap().instrument, 9);
    let err = FifoMpsc::<Quote>::create(&Config::new(&name)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "channel {name:?} already exists (kept by an owner that detached); connect to it, or remove it with `salias::remove`"
        )
    );
    salias::remove(&name).unwrap();
    assert_eq!(
        FifoMpsc::<Quote>::connect(&name).unwrap_err(),
        Error::NotFound { name: name.clone() }
    );
    assert_eq!(salias::remove(&name).unwrap_err(), Error::NotFound { name });
}

#[test]
fn owner_drop_removes_the_name() {
    let name = unique_name("drop");
    let owner = FifoMpsc::<Quote>::create(&Config::new(&name)).unwrap();
    let mut publisher = owner.publisher().unwrap();
    drop(owner);
    assert_eq!(FifoMpsc::<Quote>::connect(&name).unwrap_err(), Error::NotFound { name });
    // Handles made before keep working on the mapped memory.
    assert_eq!(
        publisher.offer(&Quote {
            instrument: 1,
            bid: 1.0,
            ask: 1.0
        }),
        Ok(())
    );
}

#[test]
fn huge_pages_where_unavailable() {
    let dir = std::env::temp_dir();
    let config = Config::new(unique_name("huge"))
        .capacity(2 << 20)
        .huge_pages(HugePages::Size2MB)
        .hugetlbfs_dir(&dir);
    let err = create_err(config);
    let shown = dir.display();
    if cfg!(all(target_os = "linux", not(salias_portable))) {
        assert_eq!(
            err.to_string(),
            format!(
                "statfs on {shown} failed; it is not a hugetlbfs mount, so huge pages cannot be had there; mount one (`mount -t hugetlbfs -o pagesize=2M none {shown}`) or set SALIAS_HUGETLBFS_DIR"
            )
        );
        let missing = Config::new(unique_name("huge-missing"))
            .capacity(2 << 20)
            .huge_pages(HugePages::Size2MB)
            .hugetlbfs_dir("/nonexistent/hugepages");
        assert_eq!(
            create_err(missing).to_string(),
            "statfs on /nonexistent/hugepages failed: No such file or directory (os error 2); huge pages need a hugetlbfs mount there (`mount -t hugetlbfs -o pagesize=2M none /nonexistent/hugepages`) or SALIAS_HUGETLBFS_DIR pointing at one"
        );
    } else {
        assert!(
            matches!(
                err,
                Error::Unsupported {
                    feature: "huge pages",
                    ..
                }
            ),
            "{err}"
        );
    }
}

#[test]
fn numa_node_that_does_not_exist() {
    let err = create_err(Config::new(unique_name("numa")).numa_node(999));
    if cfg!(all(target_os = "linux", not(salias_portable))) {
        let Error::InvalidConfig { field, reason } = &err else {
            panic!("expected an invalid config, got {err}");
        };
        assert_eq!(*field, "numa_node");
        assert!(
            reason.starts_with("node 999 does not exist on this machine (its nodes: "),
            "{reason}"
        );
        assert!(reason.ends_with("); pick one of those"), "{reason}");
    } else {
        assert!(
            matches!(
                err,
                Error::Unsupported {
                    feature: "NUMA bindings",
                    ..
                }
            ),
            "{err}"
        );
    }
}

#[test]
fn numa_node_zero_binds() {
    let name = unique_name("numa0");
    let result = FifoMpsc::<Quote>::create(&Config::new(&name).numa_node(0));
    if cfg!(all(target_os = "linux", not(salias_portable))) {
        let channel = result.expect("node 0 exists on every Linux machine");
        let mut publisher = channel.publisher().unwrap();
        publisher
            .offer(&Quote {
                instrument: 3,
                bid: 1.0,
                ask: 1.0,
            })
            .unwrap();
        assert_eq!(channel.subscriber().unwrap().try_recv().unwrap().unwrap().instrument, 3);
    } else {
        assert!(result.is_err());
    }
}

#[test]
fn backpressure_is_a_value_and_writes_nothing() {
    let channel = FifoMpsc::<Quote>::create(&Config::new(unique_name("bp")).capacity(rustix_page_size())).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let quote = |i| Quote {
        instrument: i,
        bid: 0.0,
        ask: 0.0,
    };
    let mut sent = 0;
    let err = loop {
        match publisher.offer(&quote(sent)) {
            Ok(()) => sent += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(err, PublishError::Backpressured);
    assert_eq!(
        err.to_string(),
        "the ring is full: subscribers have not released enough space; nothing was written, retry later or use a blocking send"
    );
    assert_eq!(sent, rustix_page_size() as u64 / 40, "a full page of 40-byte frames");
    assert_eq!(publisher.backpressured(), 1);
    assert!(matches!(publisher.claim(), Err(PublishError::Backpressured)));
    assert!(matches!(
        publisher.send_timeout(&quote(0), std::time::Duration::from_millis(20)),
        Err(PublishError::TimedOut)
    ));
    let mut subscriber = channel.subscriber().unwrap();
    let mut received = 0;
    subscriber
        .drain(usize::MAX, |_, q| {
            assert_eq!(q.instrument, received);
            received += 1;
        })
        .unwrap();
    assert_eq!(received, sent);
    assert_eq!(publisher.offer(&quote(sent)), Ok(()));
}

#[test]
fn recv_timeout_on_empty_channel() {
    let channel = FifoMpsc::<Quote>::create(&Config::new(unique_name("timeout"))).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let err = subscriber
        .recv_timeout(std::time::Duration::from_millis(30))
        .err()
        .unwrap();
    assert_eq!(err, ReceiveError::TimedOut);
    assert_eq!(err.to_string(), "the blocking call timed out before it could complete");
}
