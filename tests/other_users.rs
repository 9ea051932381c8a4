//! Channels are files anyone can create under a name: `connect` refuses one that another
//! user made (root included) unless told to trust that user, refuses objects whose mode
//! was widened after creation, and never follows a symlink planted at an object's name.
#![cfg(target_os = "linux")]

mod support;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use salias::{Config, Error, FifoMpsc, Trust, error::TrustProblem};
use support::{
    Sample, TOOL_ROLE, arg, report, role, root_or_skip, run_tool, salias_tool, spawn_as_user, unique_name, wait_all,
};

/// The user the other side runs as (`nobody` on Debian).
const OTHER_UID: u32 = 65534;
const CROSS_USER: &str = "another_users_channel_is_refused_unless_trusted";

fn object_path(name: &str, object: usize) -> String {
    format!("/dev/shm{}", salias::__private::shm_object_names(name)[object])
}

/// As `OTHER_UID`: creates a world-writable channel and waits for one message.
fn other_user_creates() {
    let name: String = arg("NAME");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name).permissions(0o666)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    report("ready");
    let sample = subscriber.recv_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(*sample, Sample::new(7, 0));
    report("received");
    // Stay until the parent has looked at the channel, then remove it.
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
}

#[test]
fn another_users_channel_is_refused_unless_trusted() {
    if role().as_deref() == Some("creator") {
        return other_user_creates();
    }
    if role().as_deref() == Some(TOOL_ROLE) {
        run_tool();
    }
    if !root_or_skip(CROSS_USER, "running a child as another user") {
        return;
    }
    let name = unique_name("victim");
    let mut creator = spawn_as_user(CROSS_USER, "creator", OTHER_UID, &[("NAME", name.clone())]);
    assert_eq!(creator.next_report(), "ready");

    // Root's messages would reach that user: refused, saying whose it is and how to opt in.
    let err = FifoMpsc::<Sample>::connect(&name).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Untrusted {
                problem: TrustProblem::Owner,
                owner_uid: OTHER_UID,
                mode: 0o666,
                caller_uid: 0,
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("user 65534") && text.contains("0o666") && text.contains("Trust::uid(65534)"),
        "{text}"
    );
    println!("connect: {text}");
    assert!(matches!(
        salias::RawFifoMpsc::connect_as_bytes(&name),
        Err(Error::Untrusted { .. })
    ));
    assert!(matches!(
        salias::status::channel_status(&name),
        Err(Error::Untrusted { .. })
    ));
    let refused = salias_tool(CROSS_USER, &["show", &name]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("user 65534"));

    // Opting in: the status names the owner and mode, and messages flow end to end.
    let trust = Trust::uid(OTHER_UID);
    let status = salias::status::channel_status_with(&name, &trust).unwrap();
    assert_eq!((status.owner_uid, status.mode), (OTHER_UID, 0o666));
    let shown = salias_tool(CROSS_USER, &["--trust-uid", "65534", "show", &name]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("objects of user 65534, mode 0666"), "{shown}");
    let channel = FifoMpsc::<Sample>::connect_with(&name, &trust).unwrap();
    channel.publisher().unwrap().offer(&Sample::new(7, 0)).unwrap();
    assert_eq!(creator.next_report(), "received");
    assert!(FifoMpsc::<Sample>::connect_with(&name, &Trust::any_user()).is_ok());
    drop(channel);
    creator.0.stdin.take().unwrap().write_all(b"done\n").unwrap();
    wait_all(vec![("creator", creator)], Duration::from_secs(60));
}

#[test]
fn objects_widened_after_creation_are_refused_unless_allowed() {
    let name = unique_name("widened");
    let _owner = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    for object in [0, 1] {
        let path = object_path(&name, object);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = FifoMpsc::<Sample>::connect(&name).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Untrusted {
                    problem: TrustProblem::WiderMode { recorded: 0o600 },
                    mode: 0o666,
                    ..
                }
            ),
            "{err:?}"
        );
        println!("connect: {err}");
        assert!(FifoMpsc::<Sample>::connect_with(&name, &Trust::default().allow_wider_mode()).is_ok());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(FifoMpsc::<Sample>::connect(&name).is_ok());
    }
}

#[test]
fn a_symlink_at_an_objects_name_is_never_followed() {
    let target = std::env::temp_dir().join(format!("salias-symlink-target-{}", std::process::id()));
    std::fs::write(&target, b"not yours").unwrap();
    // In place of the control object: neither connect nor create follows it.
    let name = unique_name("planted");
    std::os::unix::fs::symlink(&target, object_path(&name, 0)).unwrap();
    let err = FifoMpsc::<Sample>::connect(&name).unwrap_err();
    assert!(
        matches!(&err, Error::NotAChannel { reason, .. } if reason.contains("symbolic link")),
        "{err:?}"
    );
    println!("connect: {err}");
    let err = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap_err();
    assert!(
        matches!(&err, Error::NotAChannel { reason, .. } if reason.contains("symbolic link")),
        "{err:?}"
    );
    assert!(matches!(
        salias::status::channel_status(&name),
        Err(Error::NotAChannel { .. })
    ));
    std::fs::remove_file(object_path(&name, 0)).unwrap();

    // In place of the rings of a live channel.
    let name = unique_name("planted-rings");
    let _owner = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let rings = object_path(&name, 1);
    std::fs::remove_file(&rings).unwrap();
    std::os::unix::fs::symlink(&target, &rings).unwrap();
    let err = FifoMpsc::<Sample>::connect(&name).unwrap_err();
    assert!(
        matches!(&err, Error::NotAChannel { reason, .. } if reason.contains("symbolic link")),
        "{err:?}"
    );
    std::fs::remove_file(&rings).unwrap();
    assert_eq!(
        std::fs::read(&target).unwrap(),
        b"not yours",
        "the target was not touched"
    );
    std::fs::remove_file(&target).unwrap();
}

#[test]
fn a_replaced_ring_object_is_not_the_channels() {
    let name = unique_name("replaced-rings");
    let owner = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let rings = object_path(&name, 1);
    // Same name, same size, same owner: another object all the same.
    std::fs::remove_file(&rings).unwrap();
    let file = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(&rings)
        .unwrap();
    file.set_len(owner.capacity() as u64).unwrap();
    std::fs::set_permissions(&rings, std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = FifoMpsc::<Sample>::connect(&name).unwrap_err();
    assert!(
        matches!(&err, Error::NotAChannel { reason, .. } if reason.contains("not the one its control block recorded")),
        "{err:?}"
    );
    drop(owner);
    assert!(
        std::path::Path::new(&rings).exists(),
        "the owner removes only its own rings"
    );
    std::fs::remove_file(&rings).unwrap();
}
