//! The `salias` command-line tool and the status API under it, against live channels and
//! a stale one whose owner process was killed for real.

// The library's test helpers (unique names, child roles, the test message type): one copy,
// shared rather than forked.
#[path = "../../tests/support/mod.rs"]
mod support;
mod tool;

use std::time::Duration;

use salias::{Config, Error, FifoFanout, OrderedMpsc, RawFifoMpsc, status::SlotHolder};
use support::{KillOnDrop, Sample, arg, role, spawn, unique_name};
use tool::{salias, stderr, stdout};

#[test]
fn status_reports_slots_positions_and_backlog() {
    let name = unique_name("cli-status");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).publishers(2).subscribers(2)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    for seq in 0..10 {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    for _ in 0..10 {
        subscriber.recv().unwrap();
    }
    drop(subscriber); // gives everything back

    let status = salias::status::channel_status(&name).unwrap();
    let me = SlotHolder::Alive {
        pid: std::process::id(),
    };
    assert_eq!(status.kind, "FifoFanout");
    assert_eq!(status.owner, me);
    assert!(!status.is_stale());
    assert_eq!(
        status.message_type.as_ref().map(|(_, size)| *size),
        Some(size_of::<Sample>())
    );
    assert_eq!(status.publishers.len(), 2);
    assert_eq!(status.publishers[0].holder, me);
    assert_eq!(status.publishers[0].published, 10);
    let frame = status.frame_len().unwrap() as u64;
    assert_eq!(status.publishers[0].position, 10 * frame);
    assert_eq!(status.publishers[1].holder, SlotHolder::Free);
    // The subscriber left: its slot is free and holds nobody back.
    assert_eq!(status.subscribers[0].holder, SlotHolder::Free);
    assert!(status.subscribers[0].cursors.iter().all(Option::is_none));

    // A subscriber that joins now starts at the end: no backlog until more is published.
    let _late = channel.subscriber().unwrap();
    for seq in 10..13 {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    let status = salias::status::channel_status(&name).unwrap();
    let held: Vec<_> = status.subscribers.iter().filter(|s| s.holder == me).collect();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].backlog_bytes, 3 * frame);

    let shown = salias(&["show", &name]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let text = stdout(&shown);
    assert!(text.contains(&format!("channel {name:?}: FifoFanout of")), "{text}");
    assert!(
        text.contains(&format!("slot 0: pid {}, 13 published", std::process::id())),
        "{text}"
    );
    assert!(text.contains("backlog 3 messages"), "{text}");
    assert!(text.contains("slot 1: free"), "{text}");
}

#[test]
fn ordered_and_raw_channels_show_their_kind() {
    let ordered_name = unique_name("cli-ordered");
    let ordered = OrderedMpsc::<Sample>::create(&Config::new(&ordered_name)).unwrap();
    let mut publisher = ordered.publisher().unwrap();
    for seq in 0..5 {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    let status = salias::status::channel_status(&ordered_name).unwrap();
    assert_eq!(status.kind, "OrderedMpsc");
    assert_eq!(status.sequence, Some(5));
    assert_eq!(status.publishers[0].pending, None);
    // Nobody has subscribed yet: an Mpsc slot keeps its place, so all five wait.
    assert_eq!(status.subscribers[0].holder, SlotHolder::Free);
    assert_eq!(
        status.subscribers[0].backlog_bytes,
        5 * status.frame_len().unwrap() as u64
    );

    let raw_name = unique_name("cli-raw");
    let _raw = RawFifoMpsc::create(&Config::new(&raw_name).max_message_size(100)).unwrap();
    let status = salias::status::channel_status(&raw_name).unwrap();
    assert_eq!((status.frame_len(), status.message_type), (None, None));
    assert_eq!(status.max_message_size, 100);
    let text = stdout(&salias(&["show", &ordered_name, &raw_name]));
    assert!(text.contains("global sequence: 5 numbers taken"), "{text}");
    assert!(text.contains("raw messages of up to 100 bytes"), "{text}");
}

#[test]
fn list_and_remove_stale_after_the_owner_is_killed() {
    const TEST: &str = "list_and_remove_stale_after_the_owner_is_killed";
    if role().as_deref() == Some("owner") {
        let _channel = FifoFanout::<Sample>::create(&Config::new(arg::<String>("NAME"))).unwrap();
        support::report("created");
        std::thread::sleep(Duration::from_secs(60)); // until killed
        return;
    }
    let live = unique_name("cli-live");
    let _channel = FifoFanout::<Sample>::create(&Config::new(&live)).unwrap();
    let kept = unique_name("cli-kept");
    drop(FifoFanout::<Sample>::create(&Config::new(&kept).keep_on_drop(true)).unwrap());
    let stale = [unique_name("cli-stale"), unique_name("cli-stale")];
    let mut owner_pids = Vec::new();
    for name in &stale {
        let mut owner: KillOnDrop = spawn(TEST, "owner", &[("NAME", name.clone())]);
        assert_eq!(owner.next_report(), "created");
        owner_pids.push(owner.0.id());
        drop(owner); // SIGKILL, and reaped
    }

    let names = salias::status::list_channels().unwrap();
    for name in [&live, &kept, &stale[0], &stale[1]] {
        assert!(names.contains(name), "{name} not in {names:?}");
    }
    let status = salias::status::channel_status(&stale[0]).unwrap();
    assert_eq!(status.owner, SlotHolder::Dead { pid: owner_pids[0] });
    assert!(status.is_stale());
    assert_eq!(salias::status::channel_status(&kept).unwrap().owner, SlotHolder::Free);

    let listed = stdout(&salias(&["list"]));
    let line = |name: &str| {
        listed
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} not listed:\n{listed}"))
            .to_owned()
    };
    assert!(
        line(&stale[0]).contains(&format!("pid {}, dead: stale", owner_pids[0])),
        "{listed}"
    );
    assert!(line(&live).contains(&format!("pid {}", std::process::id())), "{listed}");
    assert!(line(&kept).contains("none (kept)"), "{listed}");

    // Only the stale ones go; the live and the kept one stay. (Named, so the test never
    // touches channels other than its own.)
    let removal = salias(&["remove-stale", &live, &kept, &stale[0], &stale[1]]);
    assert!(removal.status.success(), "{}", stderr(&removal));
    let said = stdout(&removal);
    assert!(
        said.contains(&format!(
            "kept {live:?}: its owner, pid {}, is running",
            std::process::id()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!("kept {kept:?}: it was kept on purpose")),
        "{said}"
    );
    for (name, pid) in stale.iter().zip(&owner_pids) {
        assert!(
            said.contains(&format!("removed {name:?}: its owner, pid {pid}, had died")),
            "{said}"
        );
        assert!(matches!(
            FifoFanout::<Sample>::connect(name),
            Err(Error::NotFound { .. })
        ));
    }
    assert!(salias::status::channel_status(&live).is_ok());
    salias::remove(&kept).unwrap();
}

#[test]
fn bad_commands_and_names_are_clear_errors() {
    let usage = salias(&["frobnicate"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(stderr(&usage).contains("usage:"), "{}", stderr(&usage));
    assert_eq!(salias(&["show"]).status.code(), Some(2));

    // One name that is not there: reported, and the other still shown.
    let missing = unique_name("cli-missing");
    let present = unique_name("cli-present");
    let _channel = RawFifoMpsc::create(&Config::new(&present)).unwrap();
    let shown = salias(&["show", &missing, &present]);
    assert_eq!(shown.status.code(), Some(1));
    // The tool's advice, not the library's (which names its `create` call).
    assert!(matches!(
        salias::status::channel_status(&missing),
        Err(Error::NotFound { .. })
    ));
    let not_found =
        format!("salias: {missing:?}: no channel of that name exists; `salias list` shows the channels there are");
    assert_eq!(stderr(&shown).trim(), not_found);
    assert!(
        stdout(&shown).contains(&format!("channel {present:?}: FifoMpsc")),
        "{}",
        stdout(&shown)
    );
    let removal = salias(&["remove-stale", &missing]);
    assert_eq!(removal.status.code(), Some(1));
    assert_eq!(stderr(&removal).trim(), not_found);
    assert!(matches!(
        salias::status::channel_status("bad/name"),
        Err(Error::InvalidName { .. })
    ));

    let help = salias(&["help"]);
    assert!(help.status.success() && stdout(&help).contains("remove-stale"));
}

/// A channel removed while a process still uses it: `show` says which processes are left
/// on it, beside a new channel of the same name and when nothing is at the name any more.
#[test]
fn show_names_the_processes_left_on_a_removed_channel() {
    let name = unique_name("removed");
    let old = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let subscriber = old.subscriber().unwrap();
    salias::remove(&name).unwrap();
    let me = std::process::id();
    let gone = salias(&["show", &name]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        stdout(&gone).contains(&format!("a removed channel {name:?} is still mapped by pid {me}")),
        "{}",
        stdout(&gone)
    );
    let new = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let beside = salias(&["show", &name]);
    assert!(beside.status.success(), "{}", stderr(&beside));
    assert!(
        stdout(&beside).contains(&format!(
            "beside it, a removed channel {name:?} is still mapped by pid {me}"
        )),
        "{}",
        stdout(&beside)
    );
    let json = salias(&["show", "--json", &name]);
    let line: serde_json::Value = serde_json::from_str(stdout(&json).lines().next().unwrap()).unwrap();
    assert_eq!(line["removed_mapped_by"], serde_json::json!([me]));
    drop((subscriber, old)); // the last handles on the removed channel
    let after = salias(&["show", &name]);
    assert!(!stdout(&after).contains("removed channel"), "{}", stdout(&after));
    drop(new);
}
