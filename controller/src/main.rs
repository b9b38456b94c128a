//! The `ledgerops` command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "ledgerops",
    version,
    about = "Keeps a YNAB budget in the state a Git config repo and kubectl declare"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print the CustomResourceDefinitions as YAML, or write one file per CRD with --out.
    Crdgen {
        /// Directory to write `<group>_<plural>.yaml` files into.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn main() -> std::process::ExitCode {
    match Cli::parse().command {
        Cmd::Crdgen { out: Some(dir) } => match ledgerops::crdgen::write_all(&dir) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!(
                    "ledgerops: cannot write the CRDs into {}: {e}",
                    dir.display()
                );
                std::process::ExitCode::FAILURE
            }
        },
        Cmd::Crdgen { out: None } => {
            let docs: Vec<String> = ledgerops::crdgen::render()
                .into_iter()
                .map(|(_, yaml)| yaml)
                .collect();
            print!("{}", docs.join("---\n"));
            std::process::ExitCode::SUCCESS
        }
    }
}
