//! Unit tests of `logic/config_repo/decide.rs`.

use super::*;
use crate::logic::config_repo::fixtures::{doc, entry, live};

const ON: PrunePolicy = PrunePolicy {
    enabled: true,
    max_percent: 50,
    confirmed: false,
    baseline: None,
    pruned_since: 0,
};

use RepoKind::{Budget, CategorizationPlan as Plan, Transaction as Tx};

fn names(docs: &[&Document]) -> Vec<String> {
    docs.iter().map(|d| d.name.clone()).collect()
}

#[test]
fn applies_only_what_is_new_changed_or_changed_by_someone_since() {
    let docs = [
        doc(Tx, "same", "d1"),
        doc(Tx, "edited-in-git", "d2-new"),
        doc(Tx, "new", "d3"),
        doc(Tx, "edited-by-kubectl", "d4"),
        doc(Tx, "deleted-by-kubectl", "d5"),
    ];
    let inventory = [
        entry(Tx, "same", "d1", 1),
        entry(Tx, "edited-in-git", "d2", 1),
        entry(Tx, "edited-by-kubectl", "d4", 1),
        entry(Tx, "deleted-by-kubectl", "d5", 1),
    ];
    let objects = [
        live(Tx, "same", 1),
        live(Tx, "edited-in-git", 1),
        live(Tx, "edited-by-kubectl", 2),
    ];
    let c = decide(&docs, &inventory, &objects, &ON, &Owner::default()).unwrap();
    assert_eq!(
        names(&c.apply),
        [
            "edited-in-git",
            "new",
            "edited-by-kubectl",
            "deleted-by-kubectl",
        ]
    );
    assert_eq!(c.unchanged, [entry(Tx, "same", "d1", 1)]);
    assert!(c.prune.is_empty() && c.left.is_empty() && c.waiting.is_empty());
}

#[test]
fn an_unchanged_revision_changes_nothing() {
    let docs = [doc(Tx, "a", "d1"), doc(Plan, "p", "d2")];
    let inventory = [entry(Tx, "a", "d1", 3), entry(Plan, "p", "d2", 1)];
    let objects = [live(Tx, "a", 3), live(Plan, "p", 1)];
    let c = decide(&docs, &inventory, &objects, &ON, &Owner::default()).unwrap();
    assert!(c.apply.is_empty() && c.prune.is_empty());
    assert_eq!(c.unchanged, inventory);
}

/// Rows: (prune enabled, opted out, applying, still live) → (pruned, left, waiting).
#[test]
fn what_happens_to_an_object_no_longer_declared() {
    let rows = [
        ((true, false, false, true), (1, 0, 0)),
        ((true, true, false, true), (0, 1, 0)),
        ((true, false, true, true), (0, 0, 1)),
        ((true, true, true, true), (0, 1, 0)),
        ((false, false, false, true), (0, 1, 0)),
        ((true, false, false, false), (0, 0, 0)),
    ];
    for ((enabled, opted_out, applying, exists), want) in rows {
        let docs: Vec<Document> = (0..9).map(|i| doc(Tx, &format!("k{i}"), "d")).collect();
        let mut inventory: Vec<InventoryEntry> = (0..9)
            .map(|i| entry(Tx, &format!("k{i}"), "d", 1))
            .collect();
        inventory.push(entry(Plan, "gone-from-git", "d", 1));
        let mut objects: Vec<Live> = (0..9).map(|i| live(Tx, &format!("k{i}"), 1)).collect();
        if exists {
            objects.push(Live {
                opted_out,
                applying,
                ..live(Plan, "gone-from-git", 1)
            });
        }
        let policy = PrunePolicy { enabled, ..ON };
        let c = decide(&docs, &inventory, &objects, &policy, &Owner::default()).unwrap();
        assert_eq!(
            (c.prune.len(), c.left.len(), c.waiting.len()),
            want,
            "{enabled} {opted_out} {applying} {exists}"
        );
        if want.0 == 1 {
            assert_eq!(
                (
                    c.prune[0].uid.as_str(),
                    c.prune[0].resource_version.as_str()
                ),
                ("uid-gone-from-git", "7")
            );
        }
    }
}

/// Rows: (inventory size, no longer declared, max percent, confirmed) → held.
#[test]
fn the_mass_deletion_guard() {
    let rows = [
        ((10, 5, 50, false), false),
        ((10, 6, 50, false), true),
        ((10, 6, 50, true), false),
        ((10, 1, 0, false), true),
        ((10, 10, 100, false), true),
        ((10, 10, 100, true), false),
        ((1, 1, 100, false), true),
        ((4, 0, 0, false), false),
        ((0, 0, 50, false), false),
    ];
    for ((size, removed, max_percent, confirmed), held) in rows {
        let (docs, inventory, objects) = dropping(size, removed);
        let policy = PrunePolicy {
            max_percent,
            confirmed,
            ..ON
        };
        let got = decide(&docs, &inventory, &objects, &policy, &Owner::default());
        assert_eq!(
            got.is_err(),
            held,
            "{size} {removed} {max_percent} {confirmed}"
        );
        match got {
            Err(Stop::Guard(g)) => {
                assert_eq!((g.would_prune.len(), g.baseline), (removed, size));
                assert_eq!(g.would_prune[0], "Transaction/t0");
            }
            Err(other) => panic!("{other:?}"),
            Ok(c) => assert_eq!(c.prune.len(), removed),
        }
    }
}

#[test]
fn opted_out_objects_do_not_count_towards_the_guard() {
    let docs = [doc(Tx, "a", "d")];
    let inventory = [
        entry(Tx, "a", "d", 1),
        entry(Tx, "b", "d", 1),
        entry(Tx, "c", "d", 1),
    ];
    let objects = [
        live(Tx, "a", 1),
        Live {
            opted_out: true,
            ..live(Tx, "b", 1)
        },
        live(Tx, "c", 1),
    ];
    let c = decide(&docs, &inventory, &objects, &ON, &Owner::default()).unwrap();
    assert_eq!((c.prune.len(), c.left.len()), (1, 1));
}

#[test]
fn only_a_plan_applying_or_a_transaction_writing_has_a_write_in_flight() {
    use RepoKind::*;
    let rows = [
        (CategorizationPlan, Some("Applying"), true),
        (Transaction, Some("Writing"), true),
        (CategorizationPlan, Some("Writing"), false),
        (Transaction, Some("Applying"), false),
        (CategorizationPlan, Some("Applied"), false),
        (CategorizationPlan, Some("AwaitingApproval"), false),
        (Transaction, Some("Converged"), false),
        (Transaction, Some("Diverged"), false),
        (Budget, Some("Applying"), false),
        (Budget, Some("Writing"), false),
        (Transaction, None, false),
        (CategorizationPlan, None, false),
    ];
    for (kind, phase, want) in rows {
        assert_eq!(write_in_flight(kind, phase), want, "{kind:?} {phase:?}");
    }
}

#[test]
fn an_object_the_repository_did_not_create_is_never_adopted() {
    let docs = [doc(Budget, "household", "d"), doc(Tx, "mine", "d")];
    let inventory = [entry(Tx, "mine", "d", 1)];
    let objects = [live(Budget, "household", 4), live(Tx, "mine", 1)];
    let Err(Stop::Conflicts(c)) = decide(&docs, &inventory, &objects, &ON, &Owner::default())
    else {
        panic!("a conflict")
    };
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].file.as_str(), c[0].line), ("household.yaml", 1));
    assert!(
        c[0].message
            .contains("Budget/household exists and is not this repository's")
    );
}

#[test]
fn an_object_made_again_by_someone_else_is_neither_applied_nor_pruned() {
    // Declared: a conflict.
    let docs = [doc(Tx, "a", "d")];
    let inventory = [entry(Tx, "a", "d", 1), entry(Tx, "b", "d", 1)];
    let objects = [
        Live {
            uid: "someone-elses".into(),
            ..live(Tx, "a", 1)
        },
        live(Tx, "b", 1),
    ];
    assert!(matches!(
        decide(&docs, &inventory, &objects, &ON, &Owner::default()),
        Err(Stop::Conflicts(_))
    ));
    // No longer declared: left alone, and out of the inventory.
    let docs = [doc(Tx, "b", "d")];
    let objects = [
        Live {
            uid: "someone-elses".into(),
            ..live(Tx, "a", 1)
        },
        live(Tx, "b", 1),
    ];
    let c = decide(&docs, &inventory, &objects, &ON, &Owner::default()).unwrap();
    assert!(c.prune.is_empty() && c.left.is_empty() && c.waiting.is_empty());
    assert_eq!(c.unchanged, [entry(Tx, "b", "d", 1)]);
}

/// A repository of `size` Transactions t0.. whose revision drops the first `removed`: its
/// documents, inventory and live objects.
fn dropping(size: usize, removed: usize) -> (Vec<Document>, Vec<InventoryEntry>, Vec<Live>) {
    let docs = (removed..size)
        .map(|i| doc(Tx, &format!("t{i}"), "d"))
        .collect();
    let inventory = (0..size)
        .map(|i| entry(Tx, &format!("t{i}"), "d", 1))
        .collect();
    let objects = (0..size).map(|i| live(Tx, &format!("t{i}"), 1)).collect();
    (docs, inventory, objects)
}

/// The guard's (baseline, pruned since) after [`dropping`] `removed` of `size` under `policy`.
fn prune_step(size: usize, removed: usize, policy: &PrunePolicy) -> Result<(usize, usize), Stop> {
    let (docs, inventory, objects) = dropping(size, removed);
    decide(&docs, &inventory, &objects, policy, &Owner::default()).map(|c| c.baseline)
}

#[test]
fn the_guard_counts_prunes_across_revisions_until_a_person_confirms() {
    // The first revision under the guard sets the baseline to what stays in force.
    assert_eq!(prune_step(10, 2, &ON), Ok((8, 0)));
    let mut policy = PrunePolicy {
        baseline: Some(10),
        ..ON
    };
    // 4 of 10 this push, then 2 more: 6 of 10 in all is held, though 2 of 6 alone is not.
    assert_eq!(prune_step(10, 4, &policy), Ok((10, 4)));
    policy.pruned_since = 4;
    let Err(Stop::Guard(g)) = prune_step(6, 2, &policy) else {
        panic!("held")
    };
    assert_eq!(
        (g.baseline, g.pruned_before, g.would_prune.len()),
        (10, 4, 2)
    );
    // Confirmed: the baseline is what stays, and the count starts again.
    policy.confirmed = true;
    assert_eq!(prune_step(6, 2, &policy), Ok((4, 0)));
    // Adding documents never raises the baseline by itself.
    policy = PrunePolicy {
        baseline: Some(4),
        pruned_since: 0,
        ..ON
    };
    assert_eq!(prune_step(4, 0, &policy), Ok((4, 0)));
}

#[test]
fn padding_the_repository_does_not_dilute_the_guard() {
    // 40 real objects confirmed; 60 padding documents added in one file; then the 40 dropped.
    let policy = PrunePolicy {
        baseline: Some(40),
        ..ON
    };
    let docs: Vec<Document> = (0..60)
        .map(|i| Document {
            file: "padding.yaml".into(),
            ..doc(Tx, &format!("pad{i}"), "d")
        })
        .collect();
    let inventory: Vec<InventoryEntry> = (0..40)
        .map(|i| entry(Tx, &format!("real{i}"), "d", 1))
        .chain((0..60).map(|i| entry(Tx, &format!("pad{i}"), "d", 1)))
        .collect();
    let objects: Vec<Live> = (0..40)
        .map(|i| live(Tx, &format!("real{i}"), 1))
        .chain((0..60).map(|i| live(Tx, &format!("pad{i}"), 1)))
        .collect();
    let Err(Stop::Guard(g)) = decide(&docs, &inventory, &objects, &policy, &Owner::default())
    else {
        panic!("held")
    };
    assert_eq!((g.would_prune.len(), g.baseline), (40, 40));
}

#[test]
fn a_demoted_rule_is_left_as_it_stands_while_the_same_rule_is_declared() {
    let rule = |key: &str| Document {
        digest: "without-blessing".into(),
        rule_key: Some(key.into()),
        ..doc(RepoKind::CategorizationRule, "rail-co", "")
    };
    let inventory = [entry(
        RepoKind::CategorizationRule,
        "rail-co",
        "with-blessing",
        1,
    )];
    let demoted = Live {
        demoted: Some("k1".into()),
        ..live(RepoKind::CategorizationRule, "rail-co", 1)
    };
    let same = [rule("k1")];
    let c = decide(
        &same,
        &inventory,
        std::slice::from_ref(&demoted),
        &ON,
        &Owner::default(),
    )
    .unwrap();
    assert!(c.apply.is_empty(), "left Demoted");
    let changed = [rule("k2")];
    let c = decide(
        &changed,
        &inventory,
        std::slice::from_ref(&demoted),
        &ON,
        &Owner::default(),
    )
    .unwrap();
    assert_eq!(names(&c.apply), ["rail-co"], "a changed rule is applied");
    // Its blessing taken off since (a new generation): applied again, as declared.
    let taken_off = Live {
        demoted: None,
        ..live(RepoKind::CategorizationRule, "rail-co", 2)
    };
    let c = decide(&same, &inventory, &[taken_off], &ON, &Owner::default()).unwrap();
    assert_eq!(names(&c.apply), ["rail-co"]);
}
