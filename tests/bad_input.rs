//! Bad input beyond the basic error list: sizes and config fields at their limits, a
//! channel whose owner is still initialising, and another user's channel.

mod support;

use std::time::{Duration, Instant};

use salias::{
    Config, Error, FifoFanout, FifoMpsc, PublishError, RawFifoMpsc, SaliasMessage, config::MAX_PUBLISHERS,
    config::MAX_SUBSCRIBERS,
};
use support::{arg, report, role, unique_name};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Tick {
    value: u64,
}

#[test]
fn zero_length_and_maximum_length_raw_messages() {
    let max = 4096 - 16;
    let channel =
        RawFifoMpsc::create(&Config::new(unique_name("limits")).capacity(4096).max_message_size(max)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    publisher.offer(&[]).unwrap();
    assert_eq!(subscriber.try_recv().unwrap().unwrap().len(), 0);
    // A message filling the whole ring needs every byte released, including the 16 of the
    // empty message just read; releases are batched, so hand them back explicitly.
    assert_eq!(publisher.offer(&vec![1; max]), Err(PublishError::Backpressured));
    subscriber.release_all();
    // Twice in a row, so the second one wraps.
    for fill in [1u8, 2] {
        publisher.offer(&vec![fill; max]).unwrap();
        let message = subscriber.try_recv().unwrap().unwrap();
        assert_eq!(message.len(), max);
        assert!(message.iter().all(|&b| b == fill));
    }
    assert_eq!(
        publisher.offer(&vec![0; max + 1]),
        Err(PublishError::MessageTooLarge {
            len: max + 1,
            max: max as u32
        })
    );
}

#[test]
fn most_slots_and_smallest_window() {
    let config = Config::new(unique_name("slots-max"))
        .publishers(MAX_PUBLISHERS)
        .subscribers(MAX_SUBSCRIBERS)
        .capacity(4096);
    let channel = FifoFanout::<Tick>::create(&config).unwrap();
    let publishers: Vec<_> = (0..MAX_PUBLISHERS).map(|_| channel.publisher().unwrap()).collect();
    let mut subscribers: Vec<_> = (0..MAX_SUBSCRIBERS).map(|_| channel.subscriber().unwrap()).collect();
    assert!(matches!(channel.publisher(), Err(Error::NoFreeSlot { slots: 64, .. })));
    for (value, mut publisher) in publishers.into_iter().enumerate() {
        publisher.offer(&Tick { value: value as u64 }).unwrap();
    }
    for subscriber in subscribers.iter_mut() {
        assert_eq!(
            subscriber.drain(usize::MAX, |_, _| {}).unwrap(),
            MAX_PUBLISHERS as usize
        );
    }

    // A window of exactly one frame: one message in flight at a time.
    let tight = FifoMpsc::<Tick>::create(&Config::new(unique_name("window")).publication_window(24)).unwrap();
    let mut publisher = tight.publisher().unwrap();
    let mut subscriber = tight.subscriber().unwrap();
    for value in 0..100 {
        publisher.offer(&Tick { value }).unwrap();
        assert_eq!(publisher.offer(&Tick { value }), Err(PublishError::Backpressured));
        assert_eq!(subscriber.try_recv().unwrap().unwrap().value, value);
    }
}

#[test]
fn connect_while_the_owner_is_still_initialising() {
    let name = unique_name("initialising");
    let [control, _] = salias::__private::shm_object_names(&name);
    let offsets = salias::__private::RawOffsets::new(1, 1);
    // What an owner leaves between creating the object and marking it ready: zeroed
    // memory, state 0, and its own (live) identity as owner.
    let mut bytes = vec![0u8; offsets.len];
    let owner = (std::process::id() as u64) << 32;
    bytes[offsets.owner..offsets.owner + 8].copy_from_slice(&owner.to_ne_bytes());
    let path = format!("/dev/shm{control}");
    std::fs::write(&path, &bytes).unwrap();
    let started = Instant::now();
    let err = FifoMpsc::<Tick>::connect(&name).unwrap_err();
    let waited = started.elapsed();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(err, Error::Initializing { name: name.clone() });
    assert_eq!(
        err.to_string(),
        format!("channel {name:?} is still being created by its owner; retry the connect shortly")
    );
    assert!(
        waited >= Duration::from_secs(1),
        "connect gave the owner time to finish"
    );
}

#[test]
fn another_users_channel_is_refused() {
    const TEST: &str = "another_users_channel_is_refused";
    if role().as_deref() == Some("stranger") {
        let err = FifoMpsc::<Tick>::connect(&arg::<String>("NAME")).unwrap_err();
        report(err);
        return;
    }
    if !support::root_or_skip(TEST, "switching to another user") {
        return;
    }
    let name = unique_name("private");
    let _channel = FifoMpsc::<Tick>::create(&Config::new(&name)).unwrap();
    // Runs a copy where the test binary lies beyond that user's reach.
    let (mut command, _copy) = support::test_binary_as_user(65534);
    command
        .args([TEST, "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env(support::ROLE_VAR, "stranger")
        .env("SALIAS_TEST_NAME", &name);
    let output = command.output().expect("run the test binary as user 65534");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let said = stdout
        .lines()
        .find_map(|l| l.strip_prefix("REPORT "))
        .expect("the stranger reported");
    assert_eq!(
        said,
        format!(
            "shm_open on the shared memory of channel {name:?} failed: Permission denied (os error 13); the channel belongs to another user; ask its owner to create it with wider `permissions`, or run as that user"
        )
    );
}

#[test]
fn wider_permissions_are_applied_exactly() {
    use std::os::unix::fs::PermissionsExt;
    let name = unique_name("perm");
    let _channel = FifoMpsc::<Tick>::create(&Config::new(&name).permissions(0o640)).unwrap();
    let [control, rings] = salias::__private::shm_object_names(&name);
    for object in [control, rings] {
        let mode = std::fs::metadata(format!("/dev/shm{object}"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640, "{object}");
    }
    let default = unique_name("perm-default");
    let _channel = FifoMpsc::<Tick>::create(&Config::new(&default)).unwrap();
    let [control, _] = salias::__private::shm_object_names(&default);
    let mode = std::fs::metadata(format!("/dev/shm{control}"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "owner only by default");
}
