//! `salias`: lists the channels on this machine, shows a channel's live state slot by
//! slot, and removes channels whose owner died without removing them.
//!
//! ```text
//! salias list                     every channel: kind, owner, slots held, backlog
//! salias show NAME...             a channel's live state, slot by slot
//! salias remove-stale [NAME...]   removes the named channels if their owner died;
//!                                 without names, every such channel
//! ```
//!
//! It reads control blocks without connecting: it takes no slot and changes nothing
//! (except `remove-stale`, which removes only what `salias::remove_stale` would).

use std::process::ExitCode;

use salias::{ChannelStatus, SlotHolder};

const USAGE: &str = "usage:
  salias list                     every channel: kind, owner, slots held, backlog
  salias show NAME...             a channel's live state, slot by slot
  salias remove-stale [NAME...]   remove the named channels if their owner died;
                                  without names, every such channel
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match (args.first().map(String::as_str), &args[args.len().min(1)..]) {
        (Some("list"), []) => list(),
        (Some("show"), names) if !names.is_empty() => show(names),
        (Some("remove-stale"), names) => remove_stale(names),
        (Some("help" | "--help" | "-h"), []) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("salias: {problem}");
            ExitCode::FAILURE
        }
    }
}

fn list() -> salias::Result<()> {
    let names = salias::list_channels()?;
    if names.is_empty() {
        println!("no salias channels");
        return Ok(());
    }
    let mut rows = vec![[
        "NAME".to_owned(),
        "KIND".to_owned(),
        "OWNER".to_owned(),
        "PUBLISHERS".to_owned(),
        "SUBSCRIBERS".to_owned(),
        "MAX BACKLOG".to_owned(),
    ]];
    for name in names {
        rows.push(match salias::channel_status(&name) {
            Ok(status) => [
                name,
                status.kind.clone(),
                owner_summary(&status),
                held(status.publishers.iter().map(|p| p.holder)),
                held(status.subscribers.iter().map(|s| s.holder)),
                backlog(
                    &status,
                    status.subscribers.iter().map(|s| s.backlog_bytes).max().unwrap_or(0),
                ),
            ],
            // Listed a moment ago; say what it is now.
            Err(problem) => [
                name,
                format!("({problem})"),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ],
        });
    }
    let widths: Vec<usize> = (0..6)
        .map(|column| rows.iter().map(|row| row[column].chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:width$}"))
            .collect();
        println!("{}", cells.join("  ").trim_end());
    }
    Ok(())
}

fn show(names: &[String]) -> salias::Result<()> {
    for (index, name) in names.iter().enumerate() {
        if index > 0 {
            println!();
        }
        let status = salias::channel_status(name)?;
        if !status.initialised {
            println!(
                "channel {name:?}: its owner, {}, died while creating it; `salias remove-stale {name}` removes it",
                status.owner
            );
            continue;
        }
        let carries = match &status.message_type {
            Some((type_name, size)) => format!("{type_name} ({size} bytes)"),
            None => format!("raw messages of up to {} bytes", status.max_message_size),
        };
        println!(
            "channel {name:?}: {} of {carries}, rings of {} bytes",
            status.kind, status.capacity
        );
        println!("owner: {}", owner_summary(&status));
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
                line += &format!(", backlog {}", backlog(&status, subscriber.backlog_bytes));
            }
            println!("{line}");
        }
    }
    Ok(())
}

fn remove_stale(names: &[String]) -> salias::Result<()> {
    let names = if names.is_empty() {
        salias::list_channels()?
    } else {
        names.to_vec()
    };
    let mut removed = 0;
    for name in &names {
        let owner = salias::channel_status(name).map(|status| status.owner);
        if salias::remove_stale(name)? {
            removed += 1;
            match owner {
                Ok(SlotHolder::Dead { pid }) => println!("removed {name:?}: its owner, pid {pid}, had died"),
                _ => println!("removed {name:?}: its owner had died"),
            }
        } else if names.len() == 1 || !matches!(owner, Ok(SlotHolder::Alive { .. } | SlotHolder::Free)) {
            match owner {
                Ok(SlotHolder::Alive { pid }) => println!("kept {name:?}: its owner, pid {pid}, is running"),
                Ok(SlotHolder::Free) => println!("kept {name:?}: it was kept on purpose (no owner)"),
                _ => println!("kept {name:?}"),
            }
        }
    }
    if names.len() != 1 {
        println!("{removed} stale channel(s) removed");
    }
    Ok(())
}

fn owner_summary(status: &ChannelStatus) -> String {
    match status.owner {
        SlotHolder::Free => "none (kept)".into(),
        SlotHolder::Alive { pid } => format!("pid {pid}"),
        SlotHolder::Dead { pid } => format!("pid {pid}, dead: stale"),
    }
}

/// "held of slots" for a table of slot holders, with dead holders counted apart.
fn held(holders: impl Iterator<Item = SlotHolder>) -> String {
    let (mut alive, mut dead, mut slots) = (0, 0, 0);
    for holder in holders {
        slots += 1;
        match holder {
            SlotHolder::Alive { .. } => alive += 1,
            SlotHolder::Dead { .. } => dead += 1,
            SlotHolder::Free => {}
        }
    }
    if dead > 0 {
        format!("{alive}/{slots} (+{dead} dead)")
    } else {
        format!("{alive}/{slots}")
    }
}

/// Bytes, and messages where the channel's messages have one size.
fn backlog(status: &ChannelStatus, bytes: u64) -> String {
    match status.frame_len() {
        Some(frame) => {
            let messages = bytes / frame as u64;
            let noun = if messages == 1 { "message" } else { "messages" };
            format!("{messages} {noun} ({bytes} bytes)")
        }
        None => format!("{bytes} bytes"),
    }
}
