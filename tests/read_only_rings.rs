//! Every process maps the rings read-only but the one ring whose publisher slot it holds:
//! a buggy or hostile subscriber cannot scribble over a publisher's frames. Each write is
//! tried in a child process, which the protection kills with SIGSEGV.

mod support;

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use salias::Config;
use support::{Sample, arg, role, spawn, unique_name};

const TEST: &str = "the_rings_of_other_publishers_are_read_only";

/// How a child that sets up `setup` and then writes through ring `ring` ends: `ring` is an
/// index, or `own` / `other` for the ring of its publisher's slot / the other one.
fn write_in_child(name: &str, setup: &str, ring: &str) -> std::process::ExitStatus {
    let args = [
        ("NAME", name.to_owned()),
        ("SETUP", setup.to_owned()),
        ("RING", ring.to_owned()),
    ];
    spawn(TEST, "write", &args)
        .0
        .wait()
        .expect("wait for the writing child")
}

fn faulted(status: std::process::ExitStatus) -> bool {
    // Under AddressSanitizer, whose handler may keep the fault, the child reports it and
    // exits with 1 (a panic exits with 101).
    let sanitized = std::env::var_os("SALIAS_SANITIZER").is_some();
    status.signal() == Some(libc::SIGSEGV) || (sanitized && status.code() == Some(1))
}

/// The child: connects as `SETUP` says, then writes one byte through ring `RING`.
fn write_role() {
    let name: String = arg("NAME");
    let setup: String = arg("SETUP");
    let ring: String = arg("RING");
    // The kernel's own end for a fault: a sanitizer's handler would report and exit
    // instead, which the parent could not tell from a failure.
    // SAFETY: resetting a disposition to the default, before any fault can occur.
    unsafe { libc::signal(libc::SIGSEGV, libc::SIG_DFL) };
    let channel = salias::FifoMpsc::<Sample>::connect(&name).expect("connect");
    let subscriber = channel.subscriber().expect("subscriber");
    let target = |slot: usize| match ring.as_str() {
        "own" => slot,
        "other" => 1 - slot,
        index => index.parse().expect("a ring index"),
    };
    match setup.as_str() {
        "subscriber" => subscriber.write_through_ring_mapping(target(0)),
        "publisher" => {
            let mut publisher = channel.publisher().expect("publisher");
            publisher
                .offer(&Sample::new(0, 1))
                .expect("publish through the writable ring");
            subscriber.write_through_ring_mapping(target(publisher.slot()));
        }
        "publisher-gone" => {
            let mut publisher = channel.publisher().expect("publisher");
            publisher.offer(&Sample::new(0, 1)).expect("publish");
            let slot = publisher.slot();
            drop(publisher);
            subscriber.write_through_ring_mapping(target(slot));
        }
        other => panic!("unknown setup {other}"),
    }
    // Only a write the mapping allowed gets here.
    std::process::exit(0);
}

/// Takes a publisher slot and is killed holding it.
fn die_holding_role() {
    let channel = salias::FifoMpsc::<Sample>::connect(&arg::<String>("NAME")).expect("open");
    let mut publisher = channel.publisher().expect("publisher");
    publisher.offer(&Sample::new(0, 1)).expect("publish");
    println!("REPORT holding");
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn the_rings_of_other_publishers_are_read_only() {
    match role().as_deref() {
        Some("write") => return write_role(),
        Some("die-holding") => return die_holding_role(),
        _ => {}
    }
    let name = unique_name("read-only");
    let channel = salias::FifoMpsc::<Sample>::create(&Config::new(&name).publishers(2)).expect("create");

    // A subscriber alone: every ring is read-only.
    assert!(
        faulted(write_in_child(&name, "subscriber", "0")),
        "a subscriber wrote into ring 0"
    );
    assert!(
        faulted(write_in_child(&name, "subscriber", "1")),
        "a subscriber wrote into ring 1"
    );
    // A publisher writes its own ring (so the faults are the protection, not the hook),
    // and only that one.
    let own = write_in_child(&name, "publisher", "own");
    assert!(own.success(), "a publisher could not write its own ring: {own:?}");
    assert!(
        faulted(write_in_child(&name, "publisher", "other")),
        "a publisher wrote into another ring"
    );
    // Once its publisher left the slot, the process cannot write that ring any more.
    assert!(
        faulted(write_in_child(&name, "publisher-gone", "own")),
        "a ring stayed writable after its publisher left"
    );

    // The child that faulted holding a slot left it to be taken over; so does one killed
    // holding the other. A publisher taking over a dead holder's slot writes that ring,
    // and still no other.
    let mut holder = spawn(TEST, "die-holding", &[("NAME", name.clone())]);
    assert_eq!(holder.next_report(), "holding");
    holder.0.kill().expect("kill the holder");
    holder.0.wait().expect("reap the holder");
    let took_over = write_in_child(&name, "publisher", "own");
    assert!(
        took_over.success(),
        "a publisher that took over a dead holder's slot could not write its ring: {took_over:?}"
    );
    assert!(
        faulted(write_in_child(&name, "publisher", "other")),
        "a taken-over slot's publisher wrote into another ring"
    );
    let mut publisher = channel.publisher().expect("a dead holder's slot");
    publisher
        .offer(&Sample::new(1, 1))
        .expect("this process's publisher writes its ring");
}
