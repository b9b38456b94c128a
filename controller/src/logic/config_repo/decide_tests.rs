use serde_json::json;

use super::*;

fn doc(kind: RepoKind, name: &str, digest: &str) -> Document {
    Document {
        file: format!("{name}.yaml"),
        line: 1,
        kind,
        name: name.into(),
        body: json!({}),
        digest: digest.into(),
    }
}

fn entry(kind: RepoKind, name: &str, digest: &str, generation: i64) -> InventoryEntry {
    InventoryEntry {
        kind: kind.as_str().into(),
        name: name.into(),
        digest: digest.into(),
        generation: Some(generation),
        commit: None,
    }
}

fn live(kind: RepoKind, name: &str, generation: i64) -> Live {
    Live {
        kind,
        name: name.into(),
        uid: format!("uid-{name}"),
        resource_version: "7".into(),
        generation: Some(generation),
        opted_out: false,
        applying: false,
    }
}

const ON: PrunePolicy = PrunePolicy {
    enabled: true,
    max_percent: 50,
    confirmed: false,
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
        doc(Budget, "adopted", "d6"),
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
        live(Budget, "adopted", 4),
    ];
    let c = decide(&docs, &inventory, &objects, &ON).unwrap();
    assert_eq!(
        names(&c.apply),
        [
            "edited-in-git",
            "new",
            "edited-by-kubectl",
            "deleted-by-kubectl",
            "adopted"
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
    let c = decide(&docs, &inventory, &objects, &ON).unwrap();
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
        let c = decide(&docs, &inventory, &objects, &policy).unwrap();
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
        let docs: Vec<Document> = (removed..size)
            .map(|i| doc(Tx, &format!("t{i}"), "d"))
            .collect();
        let inventory: Vec<InventoryEntry> = (0..size)
            .map(|i| entry(Tx, &format!("t{i}"), "d", 1))
            .collect();
        let objects: Vec<Live> = (0..size).map(|i| live(Tx, &format!("t{i}"), 1)).collect();
        let policy = PrunePolicy {
            enabled: true,
            max_percent,
            confirmed,
        };
        let got = decide(&docs, &inventory, &objects, &policy);
        assert_eq!(
            got.is_err(),
            held,
            "{size} {removed} {max_percent} {confirmed}"
        );
        match got {
            Err(g) => {
                assert_eq!((g.would_prune.len(), g.inventory), (removed, size));
                assert_eq!(g.would_prune[0], "Transaction/t0");
            }
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
    let c = decide(&docs, &inventory, &objects, &ON).unwrap();
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
