//! `kubectl ledgerops`: the approval queue of ledgerops, approve and reject with the preview in
//! front of you, diff, undo, resolve, sync and status. kubectl runs it from PATH as a plugin.
//! `kubectl_complete-ledgerops` completes it through kubectl. Both are a library so that the test
//! suites' multi-call binary can embed them.

mod cli;
mod cluster;
mod cluster_check;
mod commands;
mod completer;
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

/// Runs `kubectl_complete-ledgerops` with `args` (the first is the program's name): prints the
/// completion of the words kubectl passes, in cobra's format. It always exits 0, since kubectl
/// ignores what a failed completer prints.
pub fn complete(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let words: Vec<String> = args
        .into_iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    print!("{}", completer::answer(&words));
    ExitCode::SUCCESS
}

async fn parse_and_run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    // `diff` says "different" with 1, as `kubectl diff` does, so its errors exit 2 or more.
    let least_error = if is_diff(&args) { 2 } else { 1 };
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version are not errors.
            return ExitCode::from(if e.use_stderr() { least_error } else { 0 });
        }
    };
    match run(cli).await {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code().max(least_error))
        }
    }
}

/// Whether `args` run `diff`, even when they do not parse.
fn is_diff(args: &[OsString]) -> bool {
    Cli::command()
        .ignore_errors(true)
        .try_get_matches_from(args)
        .is_ok_and(|m| m.subcommand_name() == Some("diff"))
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
    if let Command::Version { client: true } = cli.command {
        return commands::version::client(&out);
    }
    let cluster = Cluster::connect(&cli.global).await?;
    let all = cli.global.all_namespaces;
    match cli.command {
        Command::Queue { watch } => commands::queue::queue(&cluster, &out, all, watch).await,
        Command::Apply { files } => commands::apply::apply(&cluster, &out, &files).await,
        Command::Status => commands::status::status(&cluster, &out).await,
        Command::Check => commands::check::check(&cluster, &out).await,
        Command::Version { .. } => commands::version::version(&cluster, &out).await,
        Command::Suspend { kind, name } => {
            commands::suspend::set(&cluster, &out, kind, &name, true).await
        }
        Command::Resume { kind, name } => {
            commands::suspend::set(&cluster, &out, kind, &name, false).await
        }
        Command::Show { name } => commands::show::show(&cluster, &out, &name).await,
        Command::Diff { plan } => commands::show::diff(&cluster, &out, &plan).await,
        Command::Approve {
            request,
            message,
            yes,
            wait,
            drop,
            set,
        } => {
            let wait = commands::wait_limit(&wait)?;
            let asked = commands::decide::Asked {
                comment: message,
                yes,
                wait,
                drop,
                set,
            };
            commands::decide::approve(&cluster, &out, &request, asked).await
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_shows_examples_in_its_help() {
        let mut cli = Cli::command();
        cli.build();
        for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
            let help = sub.clone().render_long_help().to_string();
            assert!(
                help.contains("Examples:\n  kubectl ledgerops ")
                    || help.contains("Examples:\n  source <(kubectl-ledgerops"),
                "kubectl ledgerops {} --help shows no example:\n{help}",
                sub.get_name()
            );
        }
    }

    fn args(words: &[&str]) -> Vec<OsString> {
        std::iter::once("kubectl-ledgerops")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn diff_is_told_even_from_arguments_that_do_not_parse() {
        for words in [
            &["diff", "september"][..],
            &["diff"][..],
            &["-n", "home", "diff", "--bogus"][..],
        ] {
            assert!(is_diff(&args(words)), "{words:?}");
        }
        for words in [&["queue"][..], &["show", "diff"][..], &[][..]] {
            assert!(!is_diff(&args(words)), "{words:?}");
        }
    }
}
