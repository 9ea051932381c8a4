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
//! It reads control blocks without connecting and takes no slot; only `remove-stale`
//! changes anything, and only what `salias::remove_stale` would. A problem with one
//! channel is reported and the others are still handled; the exit code is then 1.
//!
//! Like `connect`, it reads only channels of its own user unless told to trust others
//! with `--trust-uid UID` (repeatable) or `--trust-any-user`.

use std::process::ExitCode;

use salias::{ChannelStatus, Error, SlotHolder, Trust};

const USAGE: &str = "usage:
  salias [TRUST] list                     every channel: kind, owner, slots held, backlog
  salias [TRUST] show NAME...             a channel's live state, slot by slot
  salias [TRUST] remove-stale [NAME...]   remove the named channels if their owner died;
                                          without names, every such channel
TRUST (channels of other users are refused without it):
  --trust-uid UID                         also read channels of user UID (repeatable)
  --trust-any-user                        read channels of every user
";

fn main() -> ExitCode {
    let mut args = Vec::new();
    for arg in std::env::args_os().skip(1) {
        match arg.into_string() {
            Ok(arg) => args.push(arg),
            Err(arg) => {
                eprintln!("salias: {arg:?} is not valid UTF-8; channel names are A-Z a-z 0-9 . _ -");
                return ExitCode::from(2);
            }
        }
    }
    let (trust, args) = match take_trust(args) {
        Ok(split) => split,
        Err(problem) => {
            eprintln!("salias: {problem}");
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let outcome = match (args.first().map(String::as_str), &args[args.len().min(1)..]) {
        (Some("list"), []) => list(&trust),
        (Some("show"), names) if !names.is_empty() => show(names, &trust),
        (Some("remove-stale"), names) => remove_stale(names, &trust),
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
        Ok(Done::Clean) => ExitCode::SUCCESS,
        Ok(Done::WithProblems) => ExitCode::FAILURE,
        Err(problem) => {
            eprintln!("salias: {problem}");
            ExitCode::FAILURE
        }
    }
}

/// Takes the trust options out of `args`, wherever they stand.
fn take_trust(args: Vec<String>) -> Result<(Trust, Vec<String>), String> {
    let mut trust = Trust::current_user();
    let mut rest = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--trust-any-user" => trust = Trust::any_user(),
            "--trust-uid" => {
                let value = args
                    .next()
                    .ok_or("--trust-uid needs a user id, e.g. --trust-uid 1000")?;
                let uid = value
                    .parse()
                    .map_err(|_| format!("--trust-uid takes a numeric user id, not {value:?}"))?;
                trust = trust.and_uid(uid);
            }
            _ => rest.push(arg),
        }
    }
    Ok((trust, rest))
}

/// How a command that handles several channels ended.
enum Done {
    Clean,
    /// Some channel could not be handled; each problem was reported on stderr.
    WithProblems,
}

fn report(name: &str, problem: &Error) {
    eprintln!("salias: {name:?}: {problem}");
}

fn list(trust: &Trust) -> salias::Result<Done> {
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

fn show(names: &[String], trust: &Trust) -> salias::Result<Done> {
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

fn remove_stale(named: &[String], trust: &Trust) -> salias::Result<Done> {
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
