//! `salias`: lists the channels on this machine, shows a channel's live state slot by
//! slot, and removes channels whose owner died without removing them (`salias --help`).

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(salias_cli::run(std::env::args_os()))
}
