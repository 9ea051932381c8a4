//! The three commands, over the library's status API: what each prints, and how a problem
//! with one channel is reported while the others are still handled.

use salias::{ChannelStatus, Error, SlotHolder, Trust};

/// How a command that handles several channels ended.
pub(crate) enum Done {
    Clean,
    /// Some channel could not be handled; each problem was reported on stderr.
    WithProblems,
}

fn report(name: &str, problem: &Error) {
    eprintln!("salias: {name:?}: {problem}");
}

pub(crate) fn list(trust: &Trust) -> salias::Result<Done> {
    let names = salias::list_channels()?;
    let mut rows = vec![[
        "NAME".to_owned(),
        "KIND".to_owned(),
        "OWNER".to_owned(),
        "PUBLISHERS".to_owned(),
        "SUBSCRIBERS".to_owned(),
        "MAX BACKLOG".to_owned(),
    ]];
    let mut done = Done::Clean;
    for name in names {
        let row = match salias::channel_status_with(&name, trust) {
            Ok(status) if !status.initialised => [
                name,
                "(creation never finished)".into(),
                owner_summary(&status),
                String::new(),
                String::new(),
                String::new(),
            ],
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
            // Removed since it was listed.
            Err(Error::NotFound { .. }) => continue,
            Err(Error::Initializing { .. }) => [
                name,
                "(being created)".into(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ],
            Err(problem) => {
                report(&name, &problem);
                done = Done::WithProblems;
                continue;
            }
        };
        rows.push(row);
    }
    if rows.len() == 1 {
        println!("no salias channels");
        return Ok(done);
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
    Ok(done)
}

pub(crate) fn show(names: &[String], trust: &Trust) -> salias::Result<Done> {
    let mut done = Done::Clean;
    for (index, name) in names.iter().enumerate() {
        if index > 0 {
            println!();
        }
        match salias::channel_status_with(name, trust) {
            Ok(status) => print_status(name, &status),
            Err(problem) => {
                report(name, &problem);
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
    let carries = match &status.message_type {
        // The type name comes from shared memory: print it escaped.
        Some((type_name, size)) => format!("{} ({size} bytes)", type_name.escape_debug()),
        None => format!("raw messages of up to {} bytes", status.max_message_size),
    };
    println!(
        "channel {name:?}: {} of {carries}, rings of {} bytes",
        status.kind, status.capacity
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

pub(crate) fn remove_stale(named: &[String], trust: &Trust) -> salias::Result<Done> {
    let sweep = named.is_empty();
    let names = if sweep {
        salias::list_channels()?
    } else {
        named.to_vec()
    };
    let (mut removed, mut done) = (0, Done::Clean);
    for name in &names {
        let owner = salias::channel_status_with(name, trust).map(|status| status.owner);
        match salias::remove_stale(name) {
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
