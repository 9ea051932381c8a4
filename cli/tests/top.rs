//! `salias top`: refreshes of a channel that publisher and subscriber processes are using,
//! as JSON and as text; a channel that is missing or disappears; Ctrl-C.

#[path = "../../tests/support/mod.rs"]
mod support;
mod tool;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use salias::{Config, FifoFanout, status::SlotHolder};
use serde_json::Value;
use support::{KillOnDrop, Sample, arg, report, role, spawn, unique_name};
use tool::{exit_of, json_lines, salias, stderr, stdout};

/// Messages the publisher process sends.
const TOTAL: u64 = 20_000;

/// The JSON lines of a `salias top` that succeeded.
fn refreshes(output: &Output) -> Vec<Value> {
    assert!(output.status.success(), "{}", stderr(output));
    json_lines(output)
}

fn u64_at(value: &Value, pointer: &str) -> u64 {
    value
        .pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no count at {pointer} in {value}"))
}

/// Every rate of a refresh: null at the first refresh (`known` false); after it a number
/// that is not negative, but for subscriber slots that read nothing (lag null).
fn assert_rates(refresh: &Value, known: bool) {
    for (slots, rates) in [
        ("publishers", &["rate", "rate_bytes", "backpressured_rate"][..]),
        ("subscribers", &["rate", "rate_bytes"][..]),
    ] {
        for slot in refresh[slots].as_array().unwrap() {
            let known = known && !(slots == "subscribers" && slot["lag_bytes"].is_null());
            for rate in rates {
                match (known, slot[rate].as_f64()) {
                    (false, None) => {}
                    (true, Some(value)) => assert!(value >= 0.0, "{slots} {rate}: {refresh}"),
                    _ => panic!("{slots} {rate} should be known: {known}: {refresh}"),
                }
            }
        }
    }
}

/// The cells of a line of a text table: two spaces or more apart.
fn cells(line: &str) -> Vec<String> {
    let cells = line.split("  ").map(str::trim).filter(|c| !c.is_empty());
    cells.map(String::from).collect()
}

#[test]
fn top_json_follows_a_publisher_and_a_subscriber_process() {
    const TEST: &str = "top_json_follows_a_publisher_and_a_subscriber_process";
    match role().as_deref() {
        Some("subscriber") => {
            let channel = FifoFanout::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut subscriber = channel.subscriber().unwrap();
            report("ready");
            for seq in 0..TOTAL {
                assert_eq!(*subscriber.recv().unwrap(), Sample::new(0, seq));
            }
            // Finding nothing more, it releases everything it read: no lag left.
            assert!(subscriber.try_recv().unwrap().is_none());
            report("received");
            std::thread::sleep(Duration::from_secs(60)); // until killed
            return;
        }
        Some("publisher") => {
            let channel = FifoFanout::<Sample>::connect(&arg::<String>("NAME")).unwrap();
            let mut publisher = channel.publisher().unwrap();
            report("joined");
            for seq in 0..TOTAL {
                publisher.send(&Sample::new(0, seq)).unwrap();
                if seq % 500 == 0 {
                    // Paced, so that the refreshes below may see it at work.
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            report("sent");
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        _ => {}
    }
    let name = unique_name("top-json");
    let _channel = FifoFanout::<Sample>::create(&Config::new(&name).publishers(1).subscribers(2)).unwrap();
    let mut subscriber = spawn(TEST, "subscriber", &[("NAME", name.clone())]);
    assert_eq!(subscriber.next_report(), "ready");
    let mut publisher = spawn(TEST, "publisher", &[("NAME", name.clone())]);
    assert_eq!(publisher.next_report(), "joined");
    let pids = (publisher.0.id(), subscriber.0.id());

    let watched = refreshes(&salias(&[
        "top",
        &name,
        "--json",
        "--iterations",
        "2",
        "--interval",
        "0.1",
    ]));
    assert_eq!(watched.len(), 2, "{watched:?}");
    for (index, refresh) in watched.iter().enumerate() {
        assert_eq!(refresh["name"], name.as_str());
        assert_eq!(u64_at(refresh, "/refresh"), index as u64 + 1);
        assert_eq!(refresh["kind"], "FifoFanout");
        assert_eq!(refresh["owner"]["pid"], std::process::id());
        assert_eq!(refresh["publishers"][0]["slot"], 0);
        assert_eq!(refresh["publishers"][0]["holder"]["state"], "alive");
        assert_eq!(refresh["publishers"][0]["holder"]["pid"], pids.0);
        assert_eq!(refresh["subscribers"][0]["holder"]["pid"], pids.1);
        assert_eq!(refresh["subscribers"][0]["kind"], "tethered");
        assert_eq!(refresh["subscribers"][0]["demoted"], false);
        assert_eq!(refresh["subscribers"][0]["missed"], 0);
        assert_eq!(refresh["subscribers"][1]["holder"]["state"], "free");
        assert!(refresh["subscribers"][1]["lag_bytes"].is_null(), "{refresh}");
        assert!(u64_at(refresh, "/publishers/0/published") <= TOTAL);
        assert_rates(refresh, index > 0);
    }
    let [first, second] = &watched[..] else { unreachable!() };
    assert!(first["seconds"].is_null());
    assert!(second["seconds"].as_f64().is_some_and(|s| s > 0.0), "{second}");
    for counter in ["published", "position", "backpressured"] {
        let pointer = format!("/publishers/0/{counter}");
        assert!(
            u64_at(second, &pointer) >= u64_at(first, &pointer),
            "{counter}: {watched:?}"
        );
    }

    // Once everything is sent and received, the counts are exact.
    assert_eq!(publisher.next_report(), "sent");
    assert_eq!(subscriber.next_report(), "received");
    let last = refreshes(&salias(&["top", &name, "--json", "--iterations", "1"]));
    let frame = salias::status::channel_status(&name).unwrap().frame_len().unwrap() as u64;
    assert_eq!(u64_at(&last[0], "/frame_len"), frame);
    assert_eq!(u64_at(&last[0], "/publishers/0/published"), TOTAL);
    assert_eq!(u64_at(&last[0], "/publishers/0/position"), TOTAL * frame);
    assert_eq!(u64_at(&last[0], "/subscribers/0/lag_messages"), 0);
    assert_eq!(u64_at(&last[0], "/subscribers/0/lag_bytes"), 0);
}

#[test]
fn top_text_has_the_columns() {
    let name = unique_name("top-text");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name).subscribers(1)).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    for seq in 0..3 {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    for _ in 0..3 {
        drop(subscriber.recv().unwrap());
    }
    assert!(subscriber.try_recv().unwrap().is_none()); // releases all three

    // Not a terminal: the refreshes are appended, without terminal control codes.
    let shown = salias(&["top", &name, "--iterations", "2", "--interval", "0.05"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let text = stdout(&shown);
    assert!(!text.contains('\x1b'), "{text:?}");
    let me = std::process::id();
    let heading = format!("channel {name:?}: FifoFanout of Sample (64 bytes), owner pid {me}");
    assert_eq!(text.matches(&heading).count(), 2, "{text}");
    assert!(text.contains("refresh 1, rates from the next refresh on"), "{text}");
    let (_, second) = text
        .split_once("refresh 2, rates over the last ")
        .unwrap_or_else(|| panic!("no second refresh:\n{text}"));
    let rows: Vec<Vec<String>> = second.lines().skip(1).filter(|l| !l.is_empty()).map(cells).collect();
    let me = format!("pid {me}");
    assert_eq!(
        rows,
        [
            &[
                "PUBLISHER",
                "HOLDER",
                "PUBLISHED",
                "MSG/S",
                "BYTES/S",
                "REFUSED",
                "REFUSED/S"
            ][..],
            // Nothing moved between the two refreshes: rates of 0.
            &["0", &me, "3", "0", "0", "0", "0"],
            &[
                "SUBSCRIBER",
                "HOLDER",
                "KIND",
                "MSG/S",
                "BYTES/S",
                "LAG MSGS",
                "LAG BYTES",
                "MISSED",
                "MISSED/S"
            ],
            &["0", &me, "tethered", "0", "0", "0", "0", "0", "0"],
        ],
        "{text}"
    );
}

#[test]
fn top_shows_lossy_and_demoted_subscribers_and_their_losses() {
    let name = unique_name("top-lossy");
    let config = Config::new(&name)
        .capacity(4096)
        .subscribers(3)
        .tether_timeout(Duration::from_millis(1));
    let channel = FifoFanout::<Sample>::create(&config).unwrap();
    let mut lossy = channel.lossy_subscriber().unwrap();
    // Tethered, and never receives: the publisher demotes it after the timeout.
    let stuck = channel.subscriber().unwrap();
    let mut publisher = channel.publisher().unwrap();
    let total = 4 * 4096 / salias::status::channel_status(&name).unwrap().frame_len().unwrap() as u64;
    for seq in 0..total {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    // Overrun: it counts what it missed on its first receive.
    assert!(lossy.try_recv().unwrap().is_some());
    assert!(lossy.missed() > 0);

    let refresh = &refreshes(&salias(&["top", &name, "--json", "--iterations", "1"]))[0];
    assert_eq!(u64_at(refresh, "/publishers/0/published"), total);
    let slot = |index: usize| &refresh["subscribers"][index];
    let (lossy_slot, stuck_slot) = (slot(lossy.slot()), slot(stuck.slot()));
    assert_eq!(lossy_slot["kind"], "lossy", "{refresh}");
    assert_eq!(lossy_slot["demoted"], false);
    assert_eq!(lossy_slot["missed"], lossy.missed());
    assert_eq!(stuck_slot["kind"], "lossy", "{refresh}");
    assert_eq!(stuck_slot["demoted"], true);
    assert_eq!(slot(2)["holder"]["state"], "free");

    let text = stdout(&salias(&["top", &name, "--iterations", "1"]));
    // KIND is the third cell, MISSED the eighth.
    let row = |slot: usize| -> Vec<String> {
        let row = text.lines().skip_while(|l| !l.starts_with("SUBSCRIBER")).nth(slot + 1);
        let row = row.unwrap_or_else(|| panic!("no row for subscriber slot {slot}:\n{text}"));
        cells(row)
    };
    let (lossy_row, stuck_row) = (row(lossy.slot()), row(stuck.slot()));
    assert_eq!(
        (&*lossy_row[2], &*lossy_row[7]),
        ("lossy", &*lossy.missed().to_string()),
        "{text}"
    );
    assert_eq!(stuck_row[2], "lossy (demoted)", "{text}");
    assert_eq!(row(2)[2], "-", "{text}");
}

#[test]
fn on_a_terminal_top_redraws_the_screen() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let name = unique_name("top-terminal");
    let _channel = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let (mut leader, mut follower) = (-1, -1);
    // SAFETY: openpty writes the two descriptors it opens into the two ints, and reads no
    // name, settings or size (all null).
    let opened = unsafe {
        libc::openpty(
            &mut leader,
            &mut follower,
            std::ptr::null_mut(),
            // Mutable on macOS, const on Linux: a null `*mut` serves both.
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened for this test and nothing else owns them.
    let (leader, follower) = unsafe { (OwnedFd::from_raw_fd(leader), OwnedFd::from_raw_fd(follower)) };
    let mut top = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_salias"))
            .args(["top", &name, "--iterations", "2", "--interval", "0.05"])
            .stdout(Stdio::from(follower)) // the Command, and with it this end, is dropped here
            .spawn()
            .expect("start salias top"),
    );
    let mut screen = Vec::new();
    // Ends with EIO once the tool exited and the terminal's other end is closed.
    let _ = std::io::Read::read_to_end(&mut std::fs::File::from(leader), &mut screen);
    assert_eq!(exit_of(&mut top.0).code(), Some(0));
    let screen = String::from_utf8_lossy(&screen);
    // Cleared once, then each refresh drawn from the top left, each line cleared to its
    // end and everything below the last line cleared.
    assert!(screen.starts_with("\x1b[2J\x1b[H"), "{screen:?}");
    assert_eq!(screen.matches("\x1b[2J").count(), 1, "{screen:?}");
    assert_eq!(screen.matches("\x1b[H").count(), 2, "{screen:?}");
    assert_eq!(screen.matches("\x1b[J").count(), 2, "{screen:?}");
    assert!(screen.ends_with("\x1b[J"), "{screen:?}");
    for drawn in screen.split("\x1b[H").skip(1) {
        assert!(drawn.starts_with(&format!("channel {name:?}")), "{drawn:?}");
        let lines: Vec<&str> = drawn.trim_end_matches("\x1b[J").lines().collect();
        assert!(lines.iter().all(|line| line.ends_with("\x1b[K")), "{lines:?}");
        assert!(lines.iter().any(|line| line.starts_with("SUBSCRIBER")), "{lines:?}");
    }
}

#[test]
fn top_on_a_missing_channel_is_a_clear_error() {
    let missing = unique_name("top-missing");
    let shown = salias(&["top", &missing, "--iterations", "1"]);
    assert_eq!(shown.status.code(), Some(1));
    assert_eq!(
        stderr(&shown).trim(),
        format!("salias: {missing:?}: no channel of that name exists; `salias list` shows the channels there are")
    );
    assert!(stdout(&shown).is_empty());

    for (args, says) in [
        (&["--interval", "0"][..], "from 0.01 to 86400"),
        (&["--interval", "1e30"][..], "from 0.01 to 86400"),
        (&["--interval", "NaN"][..], "from 0.01 to 86400"),
        (&["--interval", "soon"][..], "expected seconds between refreshes"),
        (&["--iterations", "0"][..], "at least 1"),
    ] {
        let refused = salias(&[&["top", &missing][..], args].concat());
        assert_eq!(refused.status.code(), Some(2), "{args:?}");
        assert!(stderr(&refused).contains(says), "{args:?}: {}", stderr(&refused));
    }
}

/// Starts `salias top --json NAME` until stopped, and returns it once it printed its first
/// refresh.
fn watching(name: &str) -> (KillOnDrop, impl BufRead) {
    let mut top = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_salias"))
            .args(["top", name, "--json", "--interval", "0.02"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start salias top"),
    );
    let mut lines = BufReader::new(top.0.stdout.take().unwrap());
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    let first: Value = serde_json::from_str(&first).unwrap_or_else(|e| panic!("{e}: {first}"));
    assert_eq!(first["name"], name);
    (top, lines)
}

#[test]
fn a_channel_that_disappears_ends_top_with_a_clear_error() {
    let name = unique_name("top-gone");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let (mut top, _lines) = watching(&name);
    drop(channel); // removes it
    let status = exit_of(&mut top.0);
    assert_eq!(status.code(), Some(1));
    let mut said = String::new();
    std::io::Read::read_to_string(&mut top.0.stderr.take().unwrap(), &mut said).unwrap();
    assert!(
        said.starts_with(&format!("salias: {name:?}: the channel disappeared after ")),
        "{said}"
    );
    assert!(said.contains("it was removed"), "{said}");
}

#[test]
fn ctrl_c_ends_top_cleanly() {
    let name = unique_name("top-interrupt");
    let channel = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let (mut top, mut lines) = watching(&name);
    let pid = i32::try_from(top.0.id()).unwrap();
    // SAFETY: kill sends a signal to the tool process this test started; no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = exit_of(&mut top.0);
    assert_eq!(status.code(), Some(0), "{status}");
    // Whatever it printed up to then is whole lines of JSON.
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut lines, &mut rest).unwrap();
    for line in rest.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    let owner = salias::status::channel_status(&name).unwrap().owner;
    assert_eq!(
        owner,
        SlotHolder::Alive {
            pid: std::process::id()
        }
    );
    drop(channel);
}

#[test]
fn a_reader_that_goes_away_ends_top_cleanly() {
    let name = unique_name("top-pipe");
    let _channel = FifoFanout::<Sample>::create(&Config::new(&name)).unwrap();
    let (mut top, lines) = watching(&name);
    drop(lines); // as `salias top NAME --json | head -1` does
    assert_eq!(exit_of(&mut top.0).code(), Some(0));
    let mut said = String::new();
    std::io::Read::read_to_string(&mut top.0.stderr.take().unwrap(), &mut said).unwrap();
    assert_eq!(said, "", "no panic, no message");
}
