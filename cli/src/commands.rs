//! `list`, `show` and `remove-stale`, over the library's status API: what each prints, and how a problem
//! with one channel is reported while the others are still handled.

use salias::{Error, Trust, status::ChannelStatus, status::SlotHolder};

use crate::json::{self, Held, Listed, Shown};
use crate::table;

/// How a command that handles several channels ended.
pub(crate) enum Done {
    Clean,
    /// Some channel could not be handled; each problem was reported on stderr.
    WithProblems,
}

pub(crate) fn report(name: &str, problem: &Error) {
    eprintln!("salias: {}", explain(name, problem));
}

/// What the tool says of `problem` with the channel `name`.
pub(crate) fn explain(name: &str, problem: &Error) -> String {
    match problem {
        // The library's advice names its `create` call; at a prompt, listing is the help.
        Error::NotFound { .. } => format!("{name:?}: {NOT_FOUND}"),
        _ => format!("{name:?}: {problem}"),
    }
}

/// What the tool says of a name that leads to no channel.
const NOT_FOUND: &str = "no channel of that name exists; `salias list` shows the channels there are";

pub(crate) fn list(trust: &Trust, json: bool) -> salias::Result<Done> {
    let names = salias::status::list_channels()?;
    let mut rows = vec![
        ["NAME", "KIND", "OWNER", "PUBLISHERS", "SUBSCRIBERS", "MAX BACKLOG"]
            .map(String::from)
            .to_vec(),
    ];
    let mut done = Done::Clean;
    for name in names {
        let status = match salias::status::channel_status_with(&name, trust) {
            Ok(status) => Some(status),
            // Removed since it was listed.
            Err(Error::NotFound { .. }) => continue,
            Err(Error::Initializing { .. }) => None,
            Err(problem) => {
                report(&name, &problem);
                done = Done::WithProblems;
                continue;
            }
        };
        if json {
            let listed = match &status {
                Some(status) => Listed::ready(status),
                None => Listed::being_created(&name),
            };
            if json::line(&listed).is_err() {
                // Nobody reads any more (a closed pipe): nothing left to do.
                return Ok(done);
            }
            continue;
        }
        let row = match status {
            Some(status) if !status.initialised => {
                vec![name, "(creation never finished)".into(), owner_summary(&status)]
            }
            Some(status) => vec![
                name,
                status.kind.clone(),
                owner_summary(&status),
                Held::of(status.publishers.iter().map(|p| p.holder)).summary(),
                Held::of(status.subscribers.iter().map(|s| s.holder)).summary(),
                backlog(
                    &status,
                    status.subscribers.iter().map(|s| s.backlog_bytes).max().unwrap_or(0),
                ),
            ],
            None => vec![name, "(being created)".into()],
        };
        rows.push(row);
    }
    if json {
        return Ok(done);
    }
    if rows.len() == 1 {
        println!("no salias channels");
        return Ok(done);
    }
    print!("{}", table::render(&rows));
    Ok(done)
}

pub(crate) fn show(names: &[String], trust: &Trust, json: bool) -> salias::Result<Done> {
    let mut done = Done::Clean;
    for (index, name) in names.iter().enumerate() {
        if index > 0 && !json {
            println!();
        }
        // Processes still on a removed channel of this name: best effort (Linux only).
        let removed = salias::status::removed_channel_users(name).unwrap_or_default();
        match salias::status::channel_status_with(name, trust) {
            Ok(status) if json => {
                if json::line(&Shown::new(&status, &removed)).is_err() {
                    return Ok(done);
                }
            }
            Ok(status) => {
                print_status(name, &status);
                print_removed(name, &removed, "beside it, a");
            }
            Err(problem) => {
                report(name, &problem);
                if !json {
                    print_removed(name, &removed, "a");
                }
                done = Done::WithProblems;
            }
        }
    }
    Ok(done)
}

fn print_status(name: &str, status: &ChannelStatus) {
    if !status.initialised {
        println!(
            "channel {name:?}: its owner, {}, died while creating it; `salias remove-stale {name}` removes it",
            status.owner
        );
        return;
    }
    println!(
        "channel {name:?}: {} of {}, rings of {} bytes",
        status.kind,
        carries(status),
        status.capacity
    );
    println!(
        "owner: {}; objects of user {}, mode {:04o}",
        owner_summary(status),
        status.owner_uid,
        status.mode
    );
    if status.is_stale() {
        println!("  its owner died without removing it: `salias remove-stale {name}` removes it");
    }
    if let Some(taken) = status.sequence {
        println!("global sequence: {taken} numbers taken");
    }
    println!("publishers:");
    for (slot, publisher) in status.publishers.iter().enumerate() {
        let mut line = format!("  slot {slot}: {}", publisher.holder);
        if publisher.holder != SlotHolder::Free || publisher.published > 0 {
            line += &format!(
                ", {} published, {} offers refused for lack of room, position {} bytes",
                publisher.published, publisher.backpressured, publisher.position
            );
        }
        if let Some(number) = publisher.pending {
            line += &format!(", taking number {number}");
        }
        println!("{line}");
    }
    println!("subscribers:");
    for (slot, subscriber) in status.subscribers.iter().enumerate() {
        let mut line = format!("  slot {slot}: {}", subscriber.holder);
        if subscriber.cursors.iter().any(Option::is_some) {
            line += &format!(", backlog {}", backlog(status, subscriber.backlog_bytes));
        }
        println!("{line}");
    }
}

/// Says which processes still use a removed channel of this name (`removed`, their pids).
fn print_removed(name: &str, removed: &[u32], which: &str) {
    if removed.is_empty() {
        return;
    }
    let pids: Vec<String> = removed.iter().map(u32::to_string).collect();
    println!(
        "{which} removed channel {name:?} is still mapped by pid {}: those handles reach nobody who connects now (their `name_state()` says so); restart or reconnect them",
        pids.join(", ")
    );
}

/// What a channel carries: "Tick (8 bytes)" or "raw messages of up to 100 bytes".
pub(crate) fn carries(status: &ChannelStatus) -> String {
    match &status.message_type {
        // The type name comes from shared memory: print it escaped.
        Some((type_name, size)) => format!("{} ({size} bytes)", type_name.escape_debug()),
        None => format!("raw messages of up to {} bytes", status.max_message_size),
    }
}

pub(crate) fn remove_stale(named: &[String], trust: &Trust) -> salias::Result<Done> {
    let sweep = named.is_empty();
    let names = if sweep {
        salias::status::list_channels()?
    } else {
        named.to_vec()
    };
    let (mut removed, mut done) = (0, Done::Clean);
    for name in &names {
        let owner = salias::status::channel_status_with(name, trust).map(|status| status.owner);
        match salias::channel::remove_stale(name) {
            Ok(true) => {
                removed += 1;
                match owner {
                    Ok(SlotHolder::Dead { pid }) => println!("removed {name:?}: its owner, pid {pid}, had died"),
                    _ => println!("removed {name:?}: its creation never finished and its creator is gone"),
                }
            }
            // A sweep names only what it removes.
            Ok(false) if sweep => {}
            Ok(false) => match owner {
                Ok(SlotHolder::Alive { pid }) => println!("kept {name:?}: its owner, pid {pid}, is running"),
                Ok(SlotHolder::Free) => println!("kept {name:?}: it was kept on purpose and has no owner"),
                _ => println!("kept {name:?}: it is being created"),
            },
            // Removed by someone else since it was listed.
            Err(Error::NotFound { .. }) if sweep => {}
            Err(problem) => {
                report(name, &problem);
                done = Done::WithProblems;
            }
        }
    }
    if sweep {
        println!("{removed} stale channel(s) removed");
    }
    Ok(done)
}

pub(crate) fn owner_summary(status: &ChannelStatus) -> String {
    match status.owner {
        SlotHolder::Free => "none (kept)".into(),
        SlotHolder::Alive { pid } => format!("pid {pid}"),
        SlotHolder::Dead { pid } => format!("pid {pid}, dead: stale"),
    }
}

/// Bytes, and messages where the channel's messages have one size.
fn backlog(status: &ChannelStatus, bytes: u64) -> String {
    match json::messages(status, bytes) {
        Some(messages) => {
            let noun = if messages == 1 { "message" } else { "messages" };
            format!("{messages} {noun} ({bytes} bytes)")
        }
        None => format!("{bytes} bytes"),
    }
}
