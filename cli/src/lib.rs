//! The `salias` tool: lists the channels on this machine, shows a channel's live state
//! slot by slot, watches one refresh by refresh, and removes channels whose owner died
//! without removing them.
//!
//! ```text
//! salias list [--json]            every channel: kind, owner, slots held, backlog
//! salias show [--json] NAME...    a channel's live state, slot by slot
//! salias top [--json] NAME        the same, refreshed every --interval seconds (1), with
//!                                 rates; --iterations N stops after N refreshes
//! salias remove-stale [NAME...]   removes the named channels if their owner died;
//!                                 without names, every such channel
//! salias echo [--json] NAME       prints messages as they arrive (fields or hex)
//! salias hz [--json] NAME         message rates and inter-arrival times, every second
//! salias latest [--json] NAME     each publisher's latest message, read without subscribing
//! salias record NAME -o FILE      writes every message to an MCAP file until Ctrl-C
//! salias replay FILE NAME         publishes a recording into a channel
//! ```
//!
//! `list`, `show`, `top` and `remove-stale` read control blocks without connecting and
//! take no slot; only `remove-stale` changes anything, and only what
//! `salias::channel::remove_stale` would. `echo`, `hz` and `record` subscribe (`tap.rs`:
//! lossy on a Fanout channel unless asked otherwise, so they never slow a feed; an Mpsc
//! channel's one subscriber slot), and `replay` publishes. A problem with one
//! channel is reported and the others are still handled; the exit code is then 1. A
//! command line it cannot use exits with 2. `--json` prints one JSON object a line, with
//! the fields README.md ("Seeing and cleaning up channels") lists.
//!
//! Like `connect`, it reads only channels of its own user unless told to trust others
//! with `--trust-uid UID` (repeatable) or `--trust-any-user`.
//!
//! The binary is `main.rs`; the tool is a library too so that salias's own tests can run
//! it as a peer process built from the same sources as the code under test.

mod commands;
mod echo;
mod hz;
mod interrupt;
mod json;
mod latest;
mod record;
mod recording;
mod render;
mod replay;
mod table;
mod tap;
mod top;

use std::ffi::OsString;
use std::num::NonZeroU64;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use salias::Trust;

use commands::Done;

/// What a command line asks for.
#[derive(Parser)]
#[command(
    name = "salias",
    version,
    about = "Sees, watches, records, replays and cleans up salias channels",
    after_help = "A problem with one channel is reported on stderr and the others are still handled (exit code 1); a command line that cannot be used exits with 2.",
    arg_required_else_help = true
)]
struct Cli {
    #[command(flatten)]
    trust: TrustArgs,
    #[command(subcommand)]
    command: Command,
}

/// Whose channels may be read (the same rule as `connect`): without these, channels of
/// other users are refused. They may stand before or after the subcommand, so both the
/// tool and each subcommand take them and the two are merged (clap's `global` would keep
/// only the subcommand's `--trust-uid` values when both levels have some).
#[derive(Args)]
struct TrustArgs {
    /// Also read channels of user UID (repeatable)
    #[arg(long = "trust-uid", value_name = "UID", value_parser = parse_uid)]
    trust_uid: Vec<u32>,
    /// Read channels of every user
    #[arg(long)]
    trust_any_user: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Every channel: kind, owner, slots held, largest backlog
    #[command(after_long_help = LIST_JSON)]
    List {
        /// One JSON object per channel, a line each
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// A channel's live state, slot by slot: holder pid (alive or dead), published,
    /// refused offers, backlog
    #[command(after_long_help = SHOW_JSON)]
    Show {
        /// Channels to show
        #[arg(value_name = "NAME", required = true)]
        names: Vec<OsString>,
        /// One JSON object per channel, a line each
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// A channel's slots refreshed every second: rates, refused offers, lag, kinds, losses
    ///
    /// Per publisher slot: holder, messages published, messages and bytes per second since
    /// the previous refresh, offers refused (total and per second). Per subscriber slot:
    /// holder, kind (tethered or lossy), messages and bytes released per second, lag behind
    /// every publisher's tail (messages and bytes), messages missed (total and per second).
    /// Until Ctrl-C, or --iterations refreshes.
    #[command(after_long_help = TOP_JSON)]
    Top {
        /// Channel to watch
        #[arg(value_name = "NAME")]
        name: OsString,
        /// Seconds between refreshes, e.g. 0.5
        #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = parse_interval)]
        interval: Duration,
        /// Stop after N refreshes (default: run until Ctrl-C)
        #[arg(long, value_name = "N", value_parser = parse_iterations)]
        iterations: Option<NonZeroU64>,
        /// One JSON object per refresh, a line each (never redrawn)
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Prints a channel's messages as they arrive: slot, sequence, length, fields or hex
    ///
    /// Each line: the publisher slot, the sequence number (Ordered channels), the length,
    /// and the message as `field=value` pairs where the channel's creator recorded its
    /// type's fields (primitives and arrays of them; anything else as hex), as hex
    /// otherwise. Reads as a lossy subscriber of a Fanout channel (it never slows the feed)
    /// and reports what it missed on stderr; an Mpsc channel's one subscriber slot is taken
    /// and what is printed is consumed.
    #[command(after_long_help = ECHO_JSON)]
    Echo {
        /// Channel to read
        #[arg(value_name = "NAME")]
        name: OsString,
        /// One JSON object per message, a line each; losses as lines of their own
        #[arg(long)]
        json: bool,
        /// Stop after N messages (default: until Ctrl-C)
        #[arg(long, value_name = "N", value_parser = parse_count)]
        count: Option<u64>,
        /// Where to start: end (what is published from now), oldest (every message the
        /// rings still hold first), or last:N (the last N of each publisher; Ordered, the
        /// last N sequence numbers); what the rings no longer hold of those is reported
        /// missing. Fanout channels only
        #[arg(long, value_name = "WHERE", default_value = "end", value_parser = tap::parse_start)]
        from: salias::receive::Start,
        #[command(flatten)]
        reading: ReadingArgs,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// The latest message of each publisher of a Fanout channel, read without subscribing
    ///
    /// A line per publisher slot that has sent a message its ring still holds, as `echo`
    /// prints messages (fields or hex; `--json` the same objects). No subscriber slot is
    /// taken and no publisher waits: each message is copied out as a lossy subscriber
    /// copies, and read again if its publisher overwrote it meanwhile.
    Latest {
        /// Channel to read
        #[arg(value_name = "NAME")]
        name: OsString,
        /// One JSON object per publisher slot, a line each
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// A channel's message rate, bytes per second and inter-arrival times, per window
    ///
    /// Every --interval seconds: messages and bytes per second in all and per publisher
    /// slot, the time between consecutive messages as received (mean, min, max, standard
    /// deviation) and messages missed. Reads as `echo` does.
    #[command(after_long_help = HZ_JSON)]
    Hz {
        /// Channel to measure
        #[arg(value_name = "NAME")]
        name: OsString,
        /// Seconds per window, e.g. 0.5
        #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = parse_interval)]
        interval: Duration,
        /// Stop after N windows (default: until Ctrl-C)
        #[arg(long, value_name = "N", value_parser = parse_iterations)]
        iterations: Option<NonZeroU64>,
        /// One JSON object per window, a line each
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        reading: ReadingArgs,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Writes every message of a channel to an MCAP file, until Ctrl-C
    ///
    /// Each message with its receive time, publisher slot and sequence; the channel's kind,
    /// sizes and message type as the MCAP channel's metadata and schema; losses as messages
    /// of their own topic (NAME/salias.losses) and on stderr. Tethered by default: nothing
    /// is lost, and publishers wait for the recorder. However it stops, the file is
    /// finished and synced.
    Record {
        /// Channel to record
        #[arg(value_name = "NAME")]
        name: OsString,
        /// The MCAP file to write (replaced if it exists)
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
        /// Stop after N messages
        #[arg(long, value_name = "N", value_parser = parse_count)]
        count: Option<u64>,
        /// Stop after this many seconds, e.g. 2.5
        #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
        seconds: Option<Duration>,
        /// Read lossy (Fanout only): never slow the feed; what is missed is recorded as lost
        #[arg(long)]
        lossy: bool,
        /// Where to start, as for `echo` (Fanout only): end, oldest or last:N. Tethered,
        /// what the rings still hold is recorded whole, and publishers wait from there
        #[arg(long, value_name = "WHERE", default_value = "end", value_parser = tap::parse_start)]
        from: salias::receive::Start,
        /// Compute the file's chunk and data-section CRCs, so readers can check every byte
        /// (about a quarter slower at 64-byte messages; without, the CRC fields are 0, "not
        /// computed")
        #[arg(long)]
        crc: bool,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Publishes a recording into a channel, made with the recorded kind and type if absent
    ///
    /// The file is checked whole before anything is published. A channel of another kind
    /// or type is refused. At the recorded pace by default (--rate 1), scaled by --rate, or
    /// --fast. Waits for --wait-for-subscribers subscribers first (1).
    Replay {
        /// The MCAP file `salias record` wrote
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Channel to publish into
        #[arg(value_name = "NAME")]
        name: OsString,
        /// Pace: recorded time divided by RATE (2 is twice as fast)
        #[arg(long, value_name = "RATE", default_value = "1", value_parser = parse_rate, conflicts_with = "fast")]
        rate: f64,
        /// As fast as the channel takes the messages
        #[arg(long)]
        fast: bool,
        /// Replay every recorded publisher slot through one publisher
        #[arg(long)]
        one_publisher: bool,
        /// Subscribers to wait for before publishing
        #[arg(long, value_name = "N", default_value = "1")]
        wait_for_subscribers: u32,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Removes the named channels if their owner died; without names, every such channel
    #[command(name = "remove-stale")]
    RemoveStale {
        /// Channels to remove if stale (default: every stale channel)
        #[arg(value_name = "NAME")]
        names: Vec<OsString>,
        #[command(flatten)]
        trust: TrustArgs,
    },
}

/// How `echo` and `hz` read: lossy unless told.
#[derive(Args)]
struct ReadingArgs {
    /// Read tethered on a Fanout channel: publishers wait for this reader, nothing is
    /// missed (default: lossy, never slowing the feed)
    #[arg(long)]
    tethered: bool,
}

impl ReadingArgs {
    fn reading(&self) -> Option<tap::Reading> {
        self.tethered.then_some(tap::Reading::Tethered)
    }
}

/// `--help` of `list`: the fields of `--json`, described in full in README.md.
const LIST_JSON: &str = "With --json, each line has: name, state (ready, being_created, creation_unfinished), \
kind, owner {state: free|alive|dead, pid}, publishers and subscribers {slots, alive, dead}, max_backlog_bytes, \
max_backlog_messages (null for raw channels); a value not known for the channel's state is null.";
/// `--help` of `show`.
const SHOW_JSON: &str = "With --json, each line has the fields of salias::status::ChannelStatus: name, initialised, \
kind, message_type {name, size}, recorded_type {name, size, align, layout_hash, schema_version}, capacity, \
max_message_size, frame_len, owner {state, pid}, stale, owner_uid, mode, sequence, publishers [{slot, holder, \
position, published, backpressured, pending}], subscribers [{slot, holder, cursors, backlog_bytes, \
backlog_messages, kind (tethered or lossy), demoted, missed}]; null where a value does not apply (raw channels \
have no message_type).";
/// `--help` of `top`.
const TOP_JSON: &str = "Redraws the screen on a terminal; appends refreshes to a pipe or file. Ends with exit \
code 0 after --iterations refreshes or on Ctrl-C, and 1 if the channel cannot be read or disappears.

With --json, each line has: name, refresh (1, 2, ...), time (Unix seconds), seconds (since the previous \
refresh; null for the first), kind, owner, frame_len, sequence, publishers [{slot, holder, published, position, \
backpressured, rate, rate_bytes, backpressured_rate}], subscribers [{slot, holder, lag_messages, lag_bytes, rate, \
rate_bytes, kind, demoted, missed, missed_rate}]. Rates are per second since the previous refresh, null at the \
first refresh and where a slot changed hands; lags are what a subscriber has not yet released of every \
publisher's ring, summed.";

/// `--help` of `echo`.
const ECHO_JSON: &str = "Ends on Ctrl-C, after --count messages, or when nobody reads its output (exit code 0); \
exit code 1 if the channel cannot be read or breaks.

With --json, each message is a line {slot, sequence (null on FIFO channels), len, fields {name: value} or hex}, \
and each loss a line {missed, slot} (FIFO) or {missed, first_sequence, end_sequence} (Ordered).";
/// `--help` of `hz`.
const HZ_JSON: &str = "With --json, each window is a line: name, refresh, seconds, messages, bytes, rate, \
bytes_rate, interarrival_ns {mean, min, max, std} (null with fewer than two messages), publishers [{slot, \
messages, bytes, rate, bytes_rate}], missed.";

fn parse_count(value: &str) -> Result<u64, String> {
    match value.parse::<u64>() {
        Ok(count) if count > 0 => Ok(count),
        _ => Err(format!(
            "expected a number of messages, at least 1, e.g. 100, not {value:?}"
        )),
    }
}

fn parse_seconds(value: &str) -> Result<Duration, String> {
    match value.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= 1e9 => Ok(Duration::from_secs_f64(seconds)),
        _ => Err(format!("expected seconds, more than 0, e.g. 2.5, not {value:?}")),
    }
}

fn parse_rate(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!(
            "expected a pace above 0, e.g. 1 (as recorded) or 10 (ten times as fast), not {value:?}; --fast replays as fast as possible"
        )),
    }
}

fn parse_uid(value: &str) -> Result<u32, String> {
    value
        .parse()
        .map_err(|_| format!("expected a numeric user id, e.g. 1000, not {value:?}"))
}

/// Seconds between refreshes: at least 0.01 (a busy loop is no view), at most a day.
fn parse_interval(value: &str) -> Result<Duration, String> {
    match value.parse::<f64>() {
        Ok(seconds) if (0.01..=86_400.0).contains(&seconds) => Ok(Duration::from_secs_f64(seconds)),
        _ => Err(format!(
            "expected seconds between refreshes, from 0.01 to 86400, e.g. 0.5, not {value:?}"
        )),
    }
}

fn parse_iterations(value: &str) -> Result<NonZeroU64, String> {
    value
        .parse()
        .map_err(|_| format!("expected a number of refreshes, at least 1, e.g. 10, not {value:?}"))
}

/// The exit code of a command line the tool could not use.
const USAGE_ERROR: u8 = 2;

/// Runs the tool on a command line (`args` starts with the program's name, as
/// `std::env::args_os` does) and returns its exit code: 0 when every channel was handled,
/// 1 when some could not be (each problem is on stderr), 2 for a command line it cannot
/// use.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => return parse_error(&error),
    };
    let outcome = match cli.command {
        Command::List { json, trust } => commands::list(&cli.trust.and(trust), json).map_err(|e| e.to_string()),
        Command::Show { names, json, trust } => match utf8(names) {
            Ok(names) => commands::show(&names, &cli.trust.and(trust), json).map_err(|e| e.to_string()),
            Err(code) => return code,
        },
        Command::Top {
            name,
            interval,
            iterations,
            json,
            trust,
        } => match utf8(vec![name]) {
            Ok(names) => {
                let watch = top::Watch {
                    interval,
                    iterations,
                    json,
                };
                Ok(top::top(&names[0], &cli.trust.and(trust), &watch))
            }
            Err(code) => return code,
        },
        Command::Echo {
            name,
            json,
            count,
            from,
            reading,
            trust,
        } => match utf8(vec![name]) {
            Ok(names) => {
                let asked = echo::Echo {
                    json,
                    count,
                    reading: reading.reading(),
                    start: from,
                };
                echo::echo(&names[0], &cli.trust.and(trust), &asked)
            }
            Err(code) => return code,
        },
        Command::Latest { name, json, trust } => match utf8(vec![name]) {
            Ok(names) => latest::latest(&names[0], &cli.trust.and(trust), json),
            Err(code) => return code,
        },
        Command::Hz {
            name,
            interval,
            iterations,
            json,
            reading,
            trust,
        } => match utf8(vec![name]) {
            Ok(names) => {
                let asked = hz::Hz {
                    interval,
                    iterations,
                    json,
                    reading: reading.reading(),
                };
                hz::hz(&names[0], &cli.trust.and(trust), &asked)
            }
            Err(code) => return code,
        },
        Command::Record {
            name,
            output,
            count,
            seconds,
            lossy,
            from,
            crc,
            trust,
        } => match utf8(vec![name]) {
            Ok(names) => {
                let asked = record::Record {
                    output: &output,
                    count,
                    seconds,
                    lossy,
                    from,
                    crc,
                };
                record::record(&names[0], &cli.trust.and(trust), &asked)
            }
            Err(code) => return code,
        },
        Command::Replay {
            file,
            name,
            rate,
            fast,
            one_publisher,
            wait_for_subscribers,
            trust,
        } => match utf8(vec![name]) {
            Ok(names) => {
                let asked = replay::Replay {
                    file: &file,
                    rate: (!fast).then_some(rate),
                    one_publisher,
                    wait_for_subscribers,
                };
                replay::replay(&names[0], &cli.trust.and(trust), &asked)
            }
            Err(code) => return code,
        },
        Command::RemoveStale { names, trust } => match utf8(names) {
            Ok(names) => commands::remove_stale(&names, &cli.trust.and(trust)).map_err(|e| e.to_string()),
            Err(code) => return code,
        },
    };
    match outcome {
        Ok(Done::Clean) => 0,
        Ok(Done::WithProblems) => 1,
        Err(problem) => {
            eprintln!("salias: {problem}");
            1
        }
    }
}

impl TrustArgs {
    /// The trust that the options before the subcommand and those after it give together.
    fn and(self, after: TrustArgs) -> Trust {
        let mut trust = if self.trust_any_user || after.trust_any_user {
            Trust::any_user()
        } else {
            Trust::current_user()
        };
        for uid in self.trust_uid.into_iter().chain(after.trust_uid) {
            trust = trust.and_uid(uid);
        }
        trust
    }
}

/// Prints what clap says about a command line it did not accept, or the help or version
/// asked for, and returns the exit code clap gives it (0 for help, 2 for a usage error).
fn parse_error(error: &clap::Error) -> u8 {
    let code = u8::try_from(error.exit_code()).unwrap_or(USAGE_ERROR);
    if !error.use_stderr() {
        // --help, help, --version: asked for, on stdout.
        print!("{}", error.render());
        return code;
    }
    // The tool has always written its usage heading in lower case ("usage:"); scripts and
    // the tests match it.
    eprint!("{}", error.render().to_string().replacen("Usage:", "usage:", 1));
    code
}

/// Channel names as strings: names are A-Z a-z 0-9 . _ -, so one that is not UTF-8 is
/// a mistake on the command line (exit code 2).
fn utf8(names: Vec<OsString>) -> Result<Vec<String>, u8> {
    names
        .into_iter()
        .map(|name| {
            name.into_string().map_err(|name| {
                eprintln!("salias: {name:?} is not valid UTF-8; channel names are A-Z a-z 0-9 . _ -");
                USAGE_ERROR
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("salias").chain(args.iter().copied()))
    }

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn trust_options_stand_before_or_after_the_subcommand() {
        for args in [
            &["--trust-uid", "1000", "show", "a", "--trust-uid", "1001"][..],
            &["show", "--trust-uid", "1000", "a", "--trust-uid=1001"][..],
        ] {
            let cli = parse(args).unwrap();
            let Command::Show { names, trust, .. } = cli.command else {
                panic!("{args:?} is not show")
            };
            assert_eq!(names, [OsString::from("a")]);
            let uids: Vec<u32> = cli.trust.trust_uid.iter().chain(&trust.trust_uid).copied().collect();
            assert_eq!(uids, [1000, 1001], "{args:?}");
            assert!(!cli.trust.trust_any_user && !trust.trust_any_user);
        }
        let cli = parse(&["remove-stale", "--trust-any-user"]).unwrap();
        assert!(
            matches!(cli.command, Command::RemoveStale { ref names, ref trust } if names.is_empty() && trust.trust_any_user)
        );
    }

    #[test]
    fn a_command_line_it_cannot_use_exits_with_2() {
        for args in [
            &["--trust-uid", "abc", "list"][..],
            &["--trust-uid"][..],
            &["list", "extra"][..],
            &["show"][..],
            &["frobnicate"][..],
            &[][..],
        ] {
            let error = parse(args).err().unwrap_or_else(|| panic!("{args:?} parsed"));
            assert_eq!(error.exit_code(), i32::from(USAGE_ERROR), "{args:?}: {error}");
        }
        let error = parse(&["--trust-uid", "abc", "list"]).err().unwrap();
        assert!(error.to_string().contains("expected a numeric user id"), "{error}");
    }

    #[test]
    fn a_name_that_is_not_utf8_is_a_usage_error() {
        use std::os::unix::ffi::OsStringExt;
        let name = OsString::from_vec(vec![b'a', 0xff]);
        assert_eq!(run([OsString::from("salias"), "show".into(), name]), USAGE_ERROR);
    }
}
