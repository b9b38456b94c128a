//! Unit tests of `logic/config_repo/status.rs`.

use super::*;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

fn inventory(n: usize) -> Vec<InventoryEntry> {
    (0..n)
        .map(|i| InventoryEntry {
            kind: "Transaction".into(),
            name: format!("t{i}"),
            digest: "d".into(),
            generation: Some(1),
            commit: None,
            uid: Some(format!("u{i}")),
        })
        .collect()
}

const REV1: &str = "main@sha1:1111";
const REV2: &str = "main@sha1:2222";

fn applied(rev: &str, n: usize) -> Outcome {
    Outcome::Applied {
        revision: rev.into(),
        inventory: inventory(n),
        proposes_only: None,
        baseline: (n, 0),
        demoted: Vec::new(),
    }
}

fn ready(s: &ConfigRepoStatus) -> (String, String, String) {
    let c = conditions::get(&s.conditions, READY).unwrap();
    (c.status.clone(), c.reason.clone(), c.message.clone())
}

#[test]
fn applied_records_the_revision_and_the_inventory() {
    let s = next(
        &ConfigRepoStatus::default(),
        &applied(REV1, 2),
        Some(3),
        at(0),
    );
    assert_eq!(s.phase, Some(RepoPhase::Ready));
    assert_eq!(s.last_applied_revision.as_deref(), Some(REV1));
    assert_eq!(s.last_attempted_revision.as_deref(), Some(REV1));
    assert_eq!(s.inventory.len(), 2);
    assert_eq!(s.observed_generation, Some(3));
    assert_eq!(
        ready(&s),
        (
            "True".into(),
            "Applied".into(),
            "revision main@sha1:1111 is applied: 2 object(s) from the repository; it governs (declares Budgets, blesses merged rules)".into()
        )
    );
    assert_eq!(s.conditions[0].observed_generation, Some(3));
}

/// Every failure keeps the last applied revision and its inventory, and says so.
#[test]
fn failures_keep_the_previous_revision_in_force() {
    let before = next(
        &ConfigRepoStatus::default(),
        &applied(REV1, 3),
        Some(1),
        at(0),
    );
    let refusal = Refusal {
        file: "tx/a.yaml".into(),
        line: 4,
        message: "Secret (apiVersion v1) is not a kind".into(),
    };
    let guard = Guard {
        would_prune: vec!["Transaction/t0".into(), "Transaction/t1".into()],
        baseline: 3,
        pruned_before: 0,
        max_percent: 50,
    };
    let cases = [
        (
            Outcome::FetchFailed {
                reason: "Unreachable",
                message: "cannot reach http://127.0.0.1:9/x.git".into(),
            },
            RepoPhase::FetchFailed,
            "Unreachable",
            "cannot reach http://127.0.0.1:9/x.git. Revision main@sha1:1111 stays applied.",
            REV1,
        ),
        (
            Outcome::Refused {
                revision: REV2.into(),
                reason: "InvalidDocument",
                refusals: vec![refusal],
            },
            RepoPhase::ApplyFailed,
            "InvalidDocument",
            "revision main@sha1:2222: nothing applied, 1 document(s) refused: tx/a.yaml:4: Secret (apiVersion v1) is not a kind. Revision main@sha1:1111 stays applied.",
            REV2,
        ),
        (
            Outcome::Held {
                revision: REV2.into(),
                guard,
            },
            RepoPhase::PruneHeld,
            "PruneGuard",
            "revision main@sha1:2222 would delete 2 object(s) (Transaction/t0, Transaction/t1), 0 were deleted by earlier revisions: more than spec.maxPrunePercent 50% of the 3 objects in force when a person last confirmed (status.pruneBaseline), or all of them. Nothing of it is applied. If that is intended: kubectl annotate configrepo <name> --overwrite ledgerops.dev/confirm-prune=main@sha1:2222. Revision main@sha1:1111 stays applied.",
            REV2,
        ),
        (
            Outcome::Rewritten {
                revision: REV2.into(),
                applied: REV1.into(),
            },
            RepoPhase::RewriteHeld,
            "HistoryRewritten",
            "revision main@sha1:2222 does not descend from the applied revision main@sha1:1111: the branch was rewritten (a force-push, or a reset to an older commit), which could roll back what the repository declares. Nothing of it is applied. If that is intended: kubectl annotate configrepo <name> --overwrite ledgerops.dev/confirm-rewrite=main@sha1:2222. Revision main@sha1:1111 stays applied.",
            REV2,
        ),
    ];
    for (outcome, phase, reason, message, attempted) in cases {
        let s = next(&before, &outcome, Some(1), at(60));
        assert_eq!(s.phase, Some(phase));
        assert_eq!(ready(&s), ("False".into(), reason.into(), message.into()));
        assert_eq!(s.last_applied_revision.as_deref(), Some(REV1));
        assert_eq!(s.last_attempted_revision.as_deref(), Some(attempted));
        assert_eq!(s.inventory, inventory(3));
    }
}

#[test]
fn an_interrupted_apply_keeps_what_it_applied_in_the_inventory() {
    let before = next(
        &ConfigRepoStatus::default(),
        &applied(REV1, 1),
        Some(1),
        at(0),
    );
    let outcome = Outcome::Interrupted {
        revision: REV2.into(),
        message: "applying Transaction/t1: connection reset".into(),
        inventory: inventory(2),
    };
    let s = next(&before, &outcome, Some(1), at(5));
    assert_eq!(s.inventory.len(), 2);
    assert_eq!(s.last_applied_revision.as_deref(), Some(REV1));
    assert_eq!(ready(&s).1, "ApplyFailed");
}

#[test]
fn refusals_are_listed_up_to_ten() {
    let refusals: Vec<Refusal> = (0..13)
        .map(|i| Refusal {
            file: format!("f{i}.yaml"),
            line: 1,
            message: "bad".into(),
        })
        .collect();
    let outcome = Outcome::Refused {
        revision: REV1.into(),
        reason: "DryRunFailed",
        refusals,
    };
    let s = next(&ConfigRepoStatus::default(), &outcome, None, at(0));
    let message = ready(&s).2;
    assert!(
        message.contains("13 document(s) refused: ") && message.contains("(and 3 more)"),
        "{message}"
    );
    assert!(message.contains("f9.yaml:1: bad") && !message.contains("f10.yaml"));
}

#[test]
fn an_unchanged_revision_is_not_worth_a_write_or_an_event() {
    let first = next(
        &ConfigRepoStatus::default(),
        &applied(REV1, 2),
        Some(1),
        at(0),
    );
    let again = next(&first, &applied(REV1, 2), Some(1), at(60));
    assert!(!changed(&first, &again));
    assert_eq!(announcement(&first, &again), None);
    let newer = next(&first, &applied(REV2, 2), Some(1), at(120));
    assert!(changed(&first, &newer));
    let a = announcement(&first, &newer).unwrap();
    assert!(!a.warning && a.reason == "Applied");
    let failed = next(
        &newer,
        &Outcome::FetchFailed {
            reason: "BranchNotFound",
            message: "gone".into(),
        },
        Some(1),
        at(180),
    );
    assert!(announcement(&newer, &failed).unwrap().warning);
    assert!(announcement(&ConfigRepoStatus::default(), &first).is_some());
}

#[test]
fn suspended() {
    let s = next(
        &ConfigRepoStatus::default(),
        &Outcome::Suspended,
        Some(2),
        at(0),
    );
    assert_eq!(s.phase, Some(RepoPhase::Suspended));
    assert_eq!(ready(&s).1, "Suspended");
}

#[test]
fn an_applied_revision_says_whether_the_repository_governs() {
    let governing = next(
        &ConfigRepoStatus::default(),
        &applied(REV1, 1),
        Some(1),
        at(0),
    );
    assert!(
        ready(&governing).2.contains("it governs"),
        "{:?}",
        ready(&governing)
    );
    let proposing = Outcome::Applied {
        revision: REV1.into(),
        inventory: inventory(1),
        proposes_only: Some("ConfigRepo home has authority Propose".into()),
        baseline: (1, 0),
        demoted: vec![DemotedRule {
            name: "coffee".into(),
            key: "k".into(),
        }],
    };
    let status = next(&ConfigRepoStatus::default(), &proposing, Some(1), at(0));
    let (_, reason, message) = ready(&status);
    assert_eq!(reason, "Applied");
    assert!(
        message.contains("it proposes only: ConfigRepo home has authority Propose"),
        "{message}"
    );
    assert!(message.contains("until a changed rule is merged (or an approver blesses it): coffee"));
    assert_eq!(
        (
            status.prune_baseline,
            status.pruned_since_baseline,
            status.demoted.len()
        ),
        (Some(1), 0, 1)
    );
}

#[test]
fn a_deleted_repository_says_what_it_leaves_behind() {
    let note = left_behind("home", &inventory(12));
    assert!(
        note.starts_with("ConfigRepo home was deleted; the 12 object(s)"),
        "{note}"
    );
    assert!(note.contains("Transaction/t0, Transaction/t1") && note.contains("(and 2 more)"));
}
