//! `kubectl_complete-ledgerops`: kubectl runs it from PATH to complete `kubectl ledgerops`.

use std::process::ExitCode;

fn main() -> ExitCode {
    ledgerops_plugin::complete(std::env::args_os())
}
