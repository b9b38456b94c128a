//! The `ledgerops` binary; the command line is [`ledgerops::cli`].

use std::process::ExitCode;

fn main() -> ExitCode {
    ledgerops::cli::main(std::env::args_os())
}
