//! `salias top NAME`: a channel's slots, refreshed at an interval, with rates since the
//! previous refresh. Reads the status only (takes no slot), like `show`.
//!
//! On a terminal each refresh redraws the screen; otherwise (a pipe, a file) the refreshes
//! are appended, as text blocks or, with `--json`, one JSON object a line. It stops after
//! `--iterations` refreshes, on Ctrl-C, or when nobody reads its output any more, each a
//! clean end (exit code 0); a channel that cannot be read, or that disappears while
//! watched, is reported on stderr (exit code 1).

mod refresh;
mod text;

use std::io::{self, IsTerminal, Write};
use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use salias::{Error, Trust};

use crate::commands::{Done, report};
use crate::json;
use refresh::{Reading, Refresh};

/// How `top` watches.
pub(crate) struct Watch {
    pub(crate) interval: Duration,
    /// Stop after this many refreshes; `None`: until interrupted.
    pub(crate) iterations: Option<NonZeroU64>,
    pub(crate) json: bool,
}

pub(crate) fn top(name: &str, trust: &Trust, watch: &Watch) -> Done {
    let interrupted = match crate::interrupt::on_ctrl_c() {
        Ok(interrupted) => interrupted,
        Err(problem) => {
            eprintln!("salias: top: {problem}");
            return Done::WithProblems;
        }
    };
    let mut screen = Screen::new(watch.json);
    let mut previous: Option<Reading> = None;
    let mut next = Instant::now();
    for refresh in 1.. {
        let status = match salias::status::channel_status_with(name, trust) {
            Ok(status) if !status.initialised => {
                eprintln!(
                    "salias: {name:?}: its owner, {}, died while creating it; `salias remove-stale {name}` removes it",
                    status.owner
                );
                return Done::WithProblems;
            }
            Ok(status) => status,
            Err(Error::NotFound { .. }) if previous.is_some() => {
                eprintln!(
                    "salias: {name:?}: the channel disappeared after {} refresh(es): it was removed (its owner \
                     dropped it, or `salias remove-stale` removed it)",
                    refresh - 1
                );
                return Done::WithProblems;
            }
            Err(problem) => {
                report(name, &problem);
                return Done::WithProblems;
            }
        };
        let reading = Reading {
            status,
            at: Instant::now(),
        };
        if screen
            .show(&Refresh::new(refresh, &reading, previous.as_ref()))
            .is_err()
        {
            // Nobody reads any more (e.g. `salias top NAME | head`): a clean end.
            return Done::Clean;
        }
        if watch.iterations.is_some_and(|iterations| refresh >= iterations.get()) {
            break;
        }
        // Refreshes keep to the interval; after a pause (a suspended process) the next
        // one comes at once rather than several in a burst.
        next = (next + watch.interval).max(Instant::now());
        if interrupted.wait_until(next) {
            break;
        }
        previous = Some(reading);
    }
    Done::Clean
}

/// Where refreshes go: stdout, redrawn on a terminal, appended otherwise.
struct Screen {
    json: bool,
    terminal: bool,
    shown: u64,
}

impl Screen {
    fn new(json: bool) -> Screen {
        Screen {
            json,
            terminal: !json && io::stdout().is_terminal(),
            shown: 0,
        }
    }

    fn show(&mut self, refresh: &Refresh<'_>) -> io::Result<()> {
        self.shown += 1;
        if self.json {
            return json::line(refresh);
        }
        let text = text::render(refresh);
        let mut out = io::stdout().lock();
        if self.terminal {
            // Home, each line cleared to its end, then everything below: a redraw without
            // flicker. The first refresh clears the screen.
            let clear = if self.shown == 1 { "\x1b[2J" } else { "" };
            write!(out, "{clear}\x1b[H{}\x1b[J", text.replace('\n', "\x1b[K\n"))?;
        } else {
            let gap = if self.shown == 1 { "" } else { "\n" };
            write!(out, "{gap}{text}")?;
        }
        out.flush()
    }
}
