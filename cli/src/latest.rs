//! `salias latest NAME`: the latest message each publisher of a Fanout channel committed,
//! read without subscribing (`Channel::latest_into`): no slot is taken and no publisher
//! waits. A line per publisher slot that has sent one, as `echo` prints messages.

use salias::kind::{Fanout, Fifo, Mode, Ordered};
use salias::receive::MessageInfo;
use salias::{Bytes, Channel, Trust};
use serde_json::json;

use crate::commands::{Done, explain};
use crate::render::{Render, hex};

/// One publisher's latest message: its slot, sequence number (Ordered) and bytes.
type Latest = (usize, Option<u64>, Vec<u8>);

pub(crate) fn latest(name: &str, trust: &Trust, json: bool) -> Result<Done, String> {
    let status = salias::status::channel_status_with(name, trust).map_err(|e| explain(name, &e))?;
    let found = match status.kind.as_str() {
        "FifoFanout" => read::<Fifo>(name, trust, |_| None),
        "OrderedFanout" => read::<Ordered>(name, trust, |info| Some(info.sequence())),
        kind @ ("FifoMpsc" | "OrderedMpsc") => {
            return Err(format!(
                "{name:?} is {kind}: an Mpsc channel's messages are its one subscriber's, and its publishers say nothing of what they overwrite, so there is no latest value to read without subscribing; `salias echo` reads it through that slot"
            ));
        }
        other => {
            return Err(format!(
                "{name:?} is of a kind this tool does not know ({other}); use the salias tool of the version that made it"
            ));
        }
    }
    .map_err(|e| explain(name, &e))?;
    if found.is_empty() {
        eprintln!("salias: {name:?}: no publisher has sent a message the ring still holds");
    }
    let render = Render::new(status.recorded_type.as_ref());
    for (slot, sequence, bytes) in found {
        if json {
            let mut object = json!({ "slot": slot, "sequence": sequence, "len": bytes.len() });
            match render.json(&bytes) {
                Some(fields) => object["fields"] = fields,
                None => object["hex"] = hex(&bytes).into(),
            }
            println!("{object}");
        } else {
            let sequence = sequence.map(|s| format!(" sequence {s}")).unwrap_or_default();
            println!("slot {slot}{sequence} len {}: {}", bytes.len(), render.text(&bytes));
        }
    }
    Ok(Done::Clean)
}

/// Every publisher slot's latest message, in slot order.
fn read<M: Mode>(
    name: &str,
    trust: &Trust,
    sequence: fn(&MessageInfo<M>) -> Option<u64>,
) -> salias::Result<Vec<Latest>> {
    let channel = Channel::<Bytes, M, Fanout>::connect_as_bytes_with(name, trust)?;
    let mut buffer = vec![0; channel.max_message_size()];
    let mut found = Vec::new();
    for slot in 0..channel.publishers() as usize {
        if let Some(copied) = channel.latest_into(slot, &mut buffer)? {
            found.push((slot, sequence(&copied.info()), buffer[..*copied].to_vec()));
        }
    }
    Ok(found)
}
