//! A /dev/shm too small for a channel, as in a container (Docker's default is 64 MB):
//! `create` reserves every page up front, so a channel that does not fit fails there with
//! the numbers and the fix, leaves nothing behind, and one that fits never dies of SIGBUS.
//! Runs in a private mount namespace with a 64 MiB tmpfs on /dev/shm (root; CI is root).
#![cfg(target_os = "linux")]

mod support;

use std::time::Duration;

use salias::{Config, Error, FifoMpsc, RawFifoMpsc};
use support::{
    Sample, arg, report, role, root_or_skip, shm_objects_of, spawn, spawn_with_private_shm, unique_name, wait_all,
};

const TEST: &str = "channels_are_reserved_at_create_in_a_64_mib_dev_shm";
/// Two rings of 16 MiB: half the private /dev/shm.
const FITS_CAPACITY: usize = 16 << 20;
const FITS_MESSAGES: u64 = 3 * (FITS_CAPACITY as u64 / 64);

fn free_bytes() -> u64 {
    // SAFETY: statvfs writes into the zeroed struct we pass; the path is NUL-terminated.
    unsafe {
        let mut fs: libc::statvfs = std::mem::zeroed();
        assert_eq!(libc::statvfs(c"/dev/shm".as_ptr(), &mut fs), 0);
        fs.f_bavail as u64 * fs.f_frsize as u64
    }
}

fn shm_entries() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Inside the namespace: a channel that does not fit, then one that does, end to end.
fn in_small_shm() {
    let total = {
        // SAFETY: as in `free_bytes`.
        unsafe {
            let mut fs: libc::statvfs = std::mem::zeroed();
            assert_eq!(libc::statvfs(c"/dev/shm".as_ptr(), &mut fs), 0);
            fs.f_blocks as u64 * fs.f_frsize as u64
        }
    };
    assert_eq!(total, 64 << 20, "the private /dev/shm is 64 MiB");
    let (before, free_before) = (shm_entries(), free_bytes());

    // 4 × 64 MiB rings: four times what there is.
    let name = unique_name("too-big");
    let err = RawFifoMpsc::create(&Config::new(&name).capacity(64 << 20).publishers(4)).unwrap_err();
    match &err {
        Error::NoSpace {
            needed,
            available,
            filesystem,
            huge_pages: false,
            ..
        } => {
            assert!(*needed > 4 * (64 << 20), "{err}");
            assert!(*available < *needed && *available <= free_before, "{err}");
            assert_eq!(filesystem, "/dev/shm");
        }
        other => panic!("expected NoSpace, got {other:?}"),
    }
    let text = err.to_string();
    for says in [
        "needs",
        "bytes free",
        "/dev/shm",
        "--shm-size",
        "`capacity`",
        "`publishers`",
    ] {
        assert!(text.contains(says), "{text:?} does not say {says:?}");
    }
    report(format!("error {text}"));
    assert!(
        shm_objects_of(&name).is_empty(),
        "objects left behind: {:?}",
        shm_objects_of(&name)
    );
    assert_eq!(shm_entries(), before, "nothing left in /dev/shm");
    assert_eq!(free_bytes(), free_before, "every reserved page was given back");

    // Two 16 MiB rings fit: a publisher process wraps each ring three times.
    let name = unique_name("fits");
    let channel = FifoMpsc::<Sample>::create(&Config::new(&name).capacity(FITS_CAPACITY).publishers(2)).unwrap();
    assert!(
        free_bytes() <= free_before - 2 * FITS_CAPACITY as u64,
        "the rings are reserved at create"
    );
    let mut subscriber = channel.subscriber().unwrap();
    let publishers: Vec<_> = (0..2)
        .map(|producer| {
            (
                "publisher",
                spawn(
                    TEST,
                    "publisher",
                    &[("NAME", name.clone()), ("PRODUCER", producer.to_string())],
                ),
            )
        })
        .collect();
    let mut check = support::Checker::new(2);
    let mut received = 0;
    while received < 2 * FITS_MESSAGES {
        let sample = subscriber.recv_timeout(Duration::from_secs(60)).unwrap();
        check.check(sample.publisher_slot(), &sample);
        received += 1;
    }
    wait_all(publishers, Duration::from_secs(120));
    report(format!("received {received}"));
}

fn publisher() {
    let name: String = arg("NAME");
    let producer: u64 = arg("PRODUCER");
    let channel = FifoMpsc::<Sample>::connect(&name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..FITS_MESSAGES {
        publisher.send(&Sample::new(producer, seq)).unwrap();
    }
}

#[test]
fn channels_are_reserved_at_create_in_a_64_mib_dev_shm() {
    match role().as_deref() {
        Some("small-shm") => return in_small_shm(),
        Some("publisher") => return publisher(),
        _ => {}
    }
    if !root_or_skip(TEST, "a private mount namespace with its own /dev/shm") {
        return;
    }
    let child = spawn_with_private_shm(TEST, "small-shm", 64, &[]);
    let reports = wait_all(vec![("small-shm", child)], Duration::from_secs(300));
    let reports = &reports[0];
    let error = reports
        .iter()
        .find_map(|r| r.strip_prefix("error "))
        .expect("the error was reported");
    println!("a channel too big for a 64 MiB /dev/shm: {error}");
    assert!(reports.iter().any(|r| r == &format!("received {}", 2 * FITS_MESSAGES)));
}
