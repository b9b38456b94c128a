//! `kubectl ledgerops`: the approval queue of ledgerops, approve and reject with the preview in
//! front of you, diff, undo, resolve, sync and status. kubectl runs it from PATH as a plugin.
//! The command is a library so that the test suites' multi-call binary can embed it.

mod cli;
mod cluster;
mod commands;
mod error;
mod logic;
mod output;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use cli::{Cli, Command};
use cluster::Cluster;
use error::PluginError;
use output::Printer;

/// Runs `kubectl ledgerops` with `args` (the first is the program's name, as in
/// `std::env::args_os`) and returns its exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(parse_and_run(args))
}

async fn parse_and_run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // A usage error is an error (1); --help and --version are not.
            return ExitCode::from(u8::from(e.use_stderr()));
        }
    };
    match run(cli).await {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

async fn run(cli: Cli) -> Result<u8, PluginError> {
    if let Command::Completion { shell } = cli.command {
        let mut command = Cli::command();
        clap_complete::generate(
            shell,
            &mut command,
            "kubectl-ledgerops",
            &mut std::io::stdout(),
        );
        return Ok(0);
    }
    let out = Printer::new(cli.global.output);
    let cluster = Cluster::connect(&cli.global).await?;
    let all = cli.global.all_namespaces;
    match cli.command {
        Command::Queue => commands::queue::queue(&cluster, &out, all).await,
        Command::Apply { files } => commands::apply::apply(&cluster, &out, &files).await,
        Command::Status => commands::status::status(&cluster, &out).await,
        Command::Show { name } => commands::show::show(&cluster, &out, &name).await,
        Command::Diff { plan } => commands::show::diff(&cluster, &out, &plan).await,
        Command::Approve {
            request,
            message,
            yes,
            wait,
        } => {
            let wait = commands::wait_limit(&wait)?;
            commands::decide::approve(&cluster, &out, &request, message, yes, wait).await
        }
        Command::Reject { request, message } => {
            commands::decide::reject(&cluster, &out, &request, message).await
        }
        Command::Undo { plan, wait } => {
            commands::undo::undo(&cluster, &out, &plan, commands::wait_limit(&wait)?).await
        }
        Command::Resolve {
            transaction,
            side,
            wait,
        } => {
            let wait = commands::wait_limit(&wait)?;
            commands::nudge::resolve(&cluster, &out, &transaction, side, wait).await
        }
        Command::Sync { budget, wait } => {
            commands::nudge::sync(&cluster, &out, &budget, commands::wait_limit(&wait)?).await
        }
        // Printed above, before any kubeconfig is needed.
        Command::Completion { .. } => Ok(0),
    }
}
