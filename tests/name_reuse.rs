//! A channel name can change hands: removed, then created by a new owner. Whatever the old
//! owner or a stale-channel sweep does afterwards touches only the objects it meant, never
//! the new channel's control block or rings.
#![cfg(target_os = "linux")]

mod support;

use salias::{Config, Error, FifoMpsc};
use std::os::unix::fs::MetadataExt;
use support::{Sample, arg, report, role, spawn, unique_name};

/// Device and inode of channel `name`'s control object and rings, as /dev/shm has them now.
fn objects(name: &str) -> Vec<(u64, u64)> {
    salias::__private::shm_object_names(name)
        .iter()
        .map(|object| {
            let meta = std::fs::symlink_metadata(format!("/dev/shm{object}")).unwrap();
            (meta.dev(), meta.ino())
        })
        .collect()
}

#[test]
fn an_old_owners_drop_leaves_the_new_channel_of_its_name_alone() {
    let name = unique_name("reused");
    let old = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let old_objects = objects(&name);
    salias::remove(&name).unwrap();
    let new = FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap();
    let new_objects = objects(&name);
    assert_ne!(old_objects[0], new_objects[0]);
    assert_ne!(old_objects[1], new_objects[1]);

    drop(old);
    assert_eq!(
        objects(&name),
        new_objects,
        "both of the new channel's objects are still there"
    );
    let peer = FifoMpsc::<Sample>::connect(&name).unwrap();
    peer.publisher().unwrap().offer(&Sample::new(0, 0)).unwrap();
    assert_eq!(
        *new.subscriber().unwrap().try_recv().unwrap().unwrap(),
        Sample::new(0, 0)
    );

    drop((peer, new));
    assert!(matches!(
        FifoMpsc::<Sample>::connect(&name),
        Err(Error::NotFound { .. })
    ));
    assert!(support::shm_objects_of(&name).is_empty());
}

#[test]
fn removing_a_stale_channel_never_removes_rings_that_are_not_its_own() {
    const TEST: &str = "removing_a_stale_channel_never_removes_rings_that_are_not_its_own";
    if role().as_deref() == Some("dies") {
        let channel = FifoMpsc::<Sample>::create(&Config::new(arg::<String>("NAME"))).unwrap();
        report("created");
        std::mem::forget(channel);
        // SAFETY: raise has no memory-safety preconditions.
        unsafe { libc::raise(libc::SIGKILL) };
        unreachable!("SIGKILL cannot be caught");
    }
    let name = unique_name("stale-reused");
    let mut owner = spawn(TEST, "dies", &[("NAME", name.clone())]);
    assert_eq!(owner.next_report(), "created");
    let _ = owner.0.wait();
    let stale = objects(&name);
    // Someone replaced the stale channel's rings under its name (a new channel's, say):
    // the sweep must not take them with it.
    let rings = format!("/dev/shm{}", salias::__private::shm_object_names(&name)[1]);
    std::fs::remove_file(&rings).unwrap();
    std::fs::write(&rings, b"someone else's").unwrap();
    assert!(salias::channel::remove_stale(&name).unwrap());
    assert!(matches!(
        FifoMpsc::<Sample>::connect(&name),
        Err(Error::NotFound { .. })
    ));
    assert_ne!(std::fs::symlink_metadata(&rings).unwrap().ino(), stale[1].1);
    assert_eq!(
        std::fs::read(&rings).unwrap(),
        b"someone else's",
        "not its rings: left alone"
    );
    std::fs::remove_file(&rings).unwrap();

    // Its own rings it does remove.
    let name = unique_name("stale-own");
    let mut owner = spawn(TEST, "dies", &[("NAME", name.clone())]);
    assert_eq!(owner.next_report(), "created");
    let _ = owner.0.wait();
    assert_eq!(support::shm_objects_of(&name).len(), 2);
    assert!(salias::channel::remove_stale(&name).unwrap());
    assert!(support::shm_objects_of(&name).is_empty());
}
