//! `cargo run -p ledgerops-e2e --bin soak -- --minutes 60 --seed N [--transactions N]
//! [--planted-bug]`: the randomized soak (see `ledgerops_e2e::soak`). Prints the report and
//! exits 1 when the checker found a violation. `--check FILE` checks a history kept with
//! `SOAK_HISTORY=FILE` again (after a change to the checker, say), starting nothing;
//! `SOAK_LOG=FILE` keeps the replicas' logs. Needs what the suites need: the test control
//! plane (`LEDGEROPS_CONTROL_PLANE_BIN`, built by `tests/tools/build-control-plane.sh`).
//!
//! Started as `ledgerops`, this binary is the controller the soak runs (as `demo` is for the
//! suites), so `cargo run --bin soak` builds everything the soak needs.

use std::process::ExitCode;
use std::time::Duration;

use ledgerops_e2e::controller::{Invoked, invoked};
use ledgerops_e2e::soak::history::History;
use ledgerops_e2e::soak::{self, Config, checker};

fn usage() -> ExitCode {
    eprintln!(
        "usage: soak [--minutes M] [--seconds S] [--seed N] [--transactions N] [--planted-bug]\n       soak --check HISTORY.json"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    match invoked() {
        Invoked::Controller => ledgerops::cli::main(std::env::args_os()),
        _ => tokio::runtime::Runtime::new()
            .expect("a runtime")
            .block_on(soak_main()),
    }
}

async fn soak_main() -> ExitCode {
    let mut config = Config {
        duration: Duration::from_secs(60 * 60),
        seed: 1,
        transactions: 1_500,
        planted_bug: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, file] = args.as_slice()
        && flag == "--check"
    {
        return check_again(file);
    }
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut number = || it.next().and_then(|v| v.parse::<u64>().ok());
        match flag.as_str() {
            "--minutes" => match number() {
                Some(m) => config.duration = Duration::from_secs(m * 60),
                None => return usage(),
            },
            "--seconds" => match number() {
                Some(s) => config.duration = Duration::from_secs(s),
                None => return usage(),
            },
            "--seed" => match number() {
                Some(s) => config.seed = s,
                None => return usage(),
            },
            "--transactions" => match number().and_then(|n| usize::try_from(n).ok()) {
                Some(n) => config.transactions = n,
                None => return usage(),
            },
            "--planted-bug" => config.planted_bug = true,
            _ => return usage(),
        }
    }
    let report = soak::run(config).await;
    println!("{report}");
    if report.verdict.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Checks a kept history again and prints what the checker finds.
fn check_again(file: &str) -> ExitCode {
    let history: History = match std::fs::read(file)
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
    {
        Ok(h) => h,
        Err(e) => {
            eprintln!("{file}: {e}: give a history kept with SOAK_HISTORY=<file>");
            return ExitCode::from(2);
        }
    };
    let verdict = checker::check(&history);
    println!(
        "{file}: {} controller writes checked, {} edits by a person, {} races; violations: {}",
        verdict.writes,
        verdict.edits,
        verdict.races,
        verdict.violations.len()
    );
    for violation in &verdict.violations {
        println!("  {violation}");
        for line in checker::context(&history.journal, violation) {
            println!("    {line}");
        }
    }
    if verdict.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
