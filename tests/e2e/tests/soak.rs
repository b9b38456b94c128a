//! The soak in CI: a short run with a fixed seed ends with no violation, and the same soak with
//! a planted bug (a bulk update resent after its connection dropped) is caught, so the checker
//! is shown to fail when it should. The hour-long run is `cargo run -p ledgerops-e2e --bin soak`.

use std::time::Duration;

use ledgerops_e2e::soak::checker::TWICE;
use ledgerops_e2e::soak::{self, Config};

#[tokio::test]
async fn a_short_soak_with_crashes_faults_and_a_spouse_ends_with_no_violation() {
    let report = soak::run(Config {
        duration: Duration::from_secs(150),
        seed: 7,
        transactions: 300,
        planted_bug: false,
    })
    .await;
    println!("{report}");
    let v = &report.verdict;
    assert!(
        v.violations.is_empty(),
        "{report}\ncontroller log:\n{}",
        report.log
    );
    // It did what a soak is for: writes, a person's edits, faults, decisions.
    assert!(
        v.writes > 0 && v.edits > 0 && report.faults() > 0,
        "{report}"
    );
    // Every channel was used: kubectl, Gitea comments, and the config repository.
    for action in ["approve", "gitea-approve", "git-push"] {
        assert!(
            report.actions.get(action).copied().unwrap_or(0) > 0,
            "no {action}: {report}"
        );
    }
}

#[tokio::test]
async fn the_checker_catches_a_planted_double_write() {
    let report = soak::run(Config {
        duration: Duration::from_secs(60),
        seed: 11,
        transactions: 100,
        planted_bug: true,
    })
    .await;
    println!("{report}");
    assert!(
        report.verdict.violations.iter().any(|v| v.rule == TWICE),
        "the planted double write went unnoticed:\n{report}"
    );
}
