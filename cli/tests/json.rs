//! `salias list --json` and `salias show --json`: one JSON object a line, matching what
//! `salias::status::channel_status` reports.

#[path = "../../tests/support/mod.rs"]
mod support;
mod tool;

use salias::{Config, FifoFanout, OrderedMpsc, RawFifoMpsc, status::ChannelStatus, status::SlotHolder};
use serde_json::{Value, json};
use support::{Sample, unique_name};
use tool::{json_lines, salias, stderr};

fn holder(holder: SlotHolder) -> Value {
    match holder {
        SlotHolder::Free => json!({"state": "free", "pid": null}),
        SlotHolder::Alive { pid } => json!({"state": "alive", "pid": pid}),
        SlotHolder::Dead { pid } => json!({"state": "dead", "pid": pid}),
    }
}

/// What `show --json` must print for `status`, field by field.
fn shown(status: &ChannelStatus) -> Value {
    let messages = |bytes: u64| status.frame_len().map(|frame| bytes / frame as u64);
    json!({
        "name": status.name,
        "initialised": status.initialised,
        "kind": status.kind,
        "message_type": status.message_type.as_ref().map(|(name, size)| json!({"name": name, "size": size})),
        "recorded_type": status.recorded_type.as_ref().map(|t| json!({
            "name": t.name, "size": t.size, "align": t.align,
            "layout_hash": t.layout_hash, "schema_version": t.schema_version,
            "fields": t.fields.as_ref().map(|fields| fields.iter().map(|f| json!({
                "name": f.name, "type": f.ty, "offset": f.offset, "size": f.size,
            })).collect::<Vec<_>>()),
        })),
        "capacity": status.capacity,
        "max_message_size": status.max_message_size,
        "frame_len": status.frame_len(),
        "owner": holder(status.owner),
        "stale": status.is_stale(),
        "owner_uid": status.owner_uid,
        "mode": status.mode,
        "sequence": status.sequence,
        "publishers": status.publishers.iter().enumerate().map(|(slot, p)| json!({
            "slot": slot, "holder": holder(p.holder), "position": p.position,
            "published": p.published, "backpressured": p.backpressured, "pending": p.pending,
        })).collect::<Vec<_>>(),
        "subscribers": status.subscribers.iter().enumerate().map(|(slot, s)| json!({
            "slot": slot, "holder": holder(s.holder), "cursors": s.cursors,
            "backlog_bytes": s.backlog_bytes, "backlog_messages": messages(s.backlog_bytes),
            "kind": s.kind.to_string(), "demoted": s.demoted, "missed": s.missed,
        })).collect::<Vec<_>>(),
        "removed_mapped_by": salias::status::removed_channel_users(&status.name).unwrap(),
    })
}

#[test]
fn show_json_is_the_channel_status() {
    let fanout = unique_name("json-fanout");
    let channel = FifoFanout::<Sample>::create(&Config::new(&fanout).publishers(2).subscribers(2)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let _subscriber = channel.subscriber().unwrap();
    for seq in 0..5 {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    let ordered = unique_name("json-ordered");
    let ordered_channel = OrderedMpsc::<Sample>::create(&Config::new(&ordered)).unwrap();
    ordered_channel.publisher().unwrap().send(&Sample::new(0, 0)).unwrap();
    let raw = unique_name("json-raw");
    let _raw = RawFifoMpsc::create(&Config::new(&raw).max_message_size(100)).unwrap();
    let missing = unique_name("json-missing");

    let output = salias(&["show", "--json", &fanout, &missing, &ordered, &raw]);
    // The missing one is reported on stderr; the others are still shown.
    assert_eq!(output.status.code(), Some(1));
    assert!(matches!(
        salias::status::channel_status(&missing),
        Err(salias::Error::NotFound { .. })
    ));
    assert_eq!(
        stderr(&output).trim(),
        format!("salias: {missing:?}: no channel of that name exists; `salias list` shows the channels there are")
    );
    let printed = json_lines(&output);
    assert_eq!(printed.len(), 3);
    for (line, name) in printed.iter().zip([&fanout, &ordered, &raw]) {
        let status = salias::status::channel_status(name).unwrap();
        assert_eq!(*line, shown(&status), "{name}");
    }
    // The values that tell the kinds apart, spelled out.
    assert_eq!(printed[0]["publishers"][0]["published"], 5);
    assert_eq!(printed[0]["subscribers"][0]["backlog_messages"], 5);
    assert_eq!(printed[0]["subscribers"][1]["cursors"], json!([null, null]));
    assert_eq!(printed[0]["subscribers"][0]["kind"], "tethered");
    assert_eq!(printed[1]["sequence"], 1);
    assert_eq!(printed[0]["recorded_type"]["fields"][1]["type"], "u64");
    assert_eq!(printed[2]["message_type"], Value::Null);
    assert_eq!(printed[2]["subscribers"][0]["backlog_messages"], Value::Null);
    assert_eq!(printed[2]["mode"], 0o600);
}

#[test]
fn list_json_summarises_each_channel() {
    let live = unique_name("json-list-live");
    let channel = FifoFanout::<Sample>::create(&Config::new(&live).publishers(2).subscribers(3)).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let _subscriber = channel.subscriber().unwrap();
    for seq in 0..4 {
        publisher.send(&Sample::new(0, seq)).unwrap();
    }
    let kept = unique_name("json-list-kept");
    drop(RawFifoMpsc::create(&Config::new(&kept).keep_on_drop(true)).unwrap());

    // Every channel on the machine is listed, other tests' too: some may be unreadable
    // (exit code 1, each reported on stderr), but never ours.
    let output = salias(&["list", "--json"]);
    salias::remove(&kept).unwrap(); // before any assertion, so that a failure leaves nothing behind
    let reported = stderr(&output);
    assert!(!reported.contains(&live) && !reported.contains(&kept), "{reported}");
    let printed = json_lines(&output);
    let line = |name: &str| {
        printed
            .iter()
            .find(|line| line["name"] == name)
            .unwrap_or_else(|| panic!("{name} not listed: {printed:?}"))
    };
    let status = salias::status::channel_status(&live).unwrap();
    let frame = status.frame_len().unwrap() as u64;
    assert_eq!(
        *line(&live),
        json!({
            "name": live,
            "state": "ready",
            "kind": "FifoFanout",
            "owner": holder(status.owner),
            "publishers": {"slots": 2, "alive": 1, "dead": 0},
            "subscribers": {"slots": 3, "alive": 1, "dead": 0},
            "max_backlog_bytes": 4 * frame,
            "max_backlog_messages": 4,
        })
    );
    let kept_line = line(&kept);
    assert_eq!(kept_line["owner"], json!({"state": "free", "pid": null}));
    assert_eq!(kept_line["kind"], "FifoMpsc");
    assert_eq!(kept_line["max_backlog_messages"], Value::Null);
    // Every line has the same fields, whatever the channel.
    for line in &printed {
        let mut fields: Vec<&String> = line.as_object().unwrap().keys().collect();
        fields.sort();
        assert_eq!(
            fields,
            [
                "kind",
                "max_backlog_bytes",
                "max_backlog_messages",
                "name",
                "owner",
                "publishers",
                "state",
                "subscribers"
            ],
            "{line}"
        );
    }
}
