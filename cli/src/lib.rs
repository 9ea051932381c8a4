//! The `salias` tool: lists the channels on this machine, shows a channel's live state
//! slot by slot, and removes channels whose owner died without removing them.
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
//! channel is reported and the others are still handled; the exit code is then 1. A
//! command line it cannot use exits with 2.
//!
//! Like `connect`, it reads only channels of its own user unless told to trust others
//! with `--trust-uid UID` (repeatable) or `--trust-any-user`.
//!
//! The binary is `main.rs`; the tool is a library too so that salias's own tests can run
//! it as a peer process built from the same sources as the code under test.

mod commands;

use std::ffi::OsString;

use clap::{Args, Parser, Subcommand};
use salias::Trust;

use commands::Done;

/// What a command line asks for.
#[derive(Parser)]
#[command(
    name = "salias",
    version,
    about = "Sees and cleans up salias channels: reads control blocks without connecting and takes no slot",
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
    List {
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// A channel's live state, slot by slot: holder pid (alive or dead), published,
    /// refused offers, backlog
    Show {
        /// Channels to show
        #[arg(value_name = "NAME", required = true)]
        names: Vec<OsString>,
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

fn parse_uid(value: &str) -> Result<u32, String> {
    value
        .parse()
        .map_err(|_| format!("expected a numeric user id, e.g. 1000, not {value:?}"))
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
        Command::List { trust } => commands::list(&cli.trust.and(trust)),
        Command::Show { names, trust } => match utf8(names) {
            Ok(names) => commands::show(&names, &cli.trust.and(trust)),
            Err(code) => return code,
        },
        Command::RemoveStale { names, trust } => match utf8(names) {
            Ok(names) => commands::remove_stale(&names, &cli.trust.and(trust)),
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
            let Command::Show { names, trust } = cli.command else {
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
