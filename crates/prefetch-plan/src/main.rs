//! The `prefetch-plan` binary: parse the arguments, run the command, turn
//! its error into a message and an exit status (see
//! [`CliError::exit_code`](prefetch_plan::error::CliError::exit_code)).

#![forbid(unsafe_code)]

use std::process::ExitCode;

use crate::cli::Cli;
use clap::Parser;

// The command line lives in the binary, not the library: its types derive
// clap's traits, which would put clap's types in the library's public API.
mod cli;

fn main() -> ExitCode {
    match cli::run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output has gone (`| head`): it has what it
        // wanted, and there is nobody left to tell.
        Err(error) if error.is_broken_pipe() => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("prefetch-plan: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}
