//! `kubectl ledgerops`: kubectl runs it from PATH as a plugin (see the library for the commands).

use std::process::ExitCode;

fn main() -> ExitCode {
    ledgerops_plugin::main(std::env::args_os())
}
