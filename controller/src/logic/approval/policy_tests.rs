//! Unit tests of `logic/approval/policy.rs`.

// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use super::*;
use crate::api::common::{Amount, CategoryChange};
use crate::logic::plan::fixtures::{assign, at, mirror, recategorise};
use crate::logic::plan::{LineMoves, preview};

fn changes(assignments: &[(&str, &str)]) -> Vec<PlannedChange> {
    let assignments: Vec<_> = assignments.iter().map(|(t, c)| assign(t, c)).collect();
    preview(&assignments, &at(&mirror())).changes
}

fn policy(limit: Option<&str>, ask_on_new_payee: bool, blocked: &[&str]) -> ApprovalPolicy {
    ApprovalPolicy {
        auto_approve_below: limit.map(|l| Amount(l.into())),
        ask_on_new_payee,
        blocked_category_ids: blocked.iter().map(|b| b.to_string()).collect(),
        ..ApprovalPolicy::default()
    }
}

const SEED_002: &[(&str, &str)] = &[("tx-048", "cat-groceries"), ("tx-049", "cat-transport")];

#[test]
fn runs_asks_or_blocks() {
    use Action::*;
    let cases: Vec<(&str, Vec<PlannedChange>, ApprovalPolicy, Action, &str)> = vec![
        (
            "nothing to write",
            vec![],
            policy(None, true, &[]),
            Run,
            "there is nothing to write",
        ),
        (
            "into a blocked category, whatever the limit",
            changes(&[("tx-066", "cat-groceries")]),
            policy(Some("1000"), false, &["cat-groceries"]),
            Block,
            "tx-066 moves into \"Groceries\" (cat-groceries), which spec.approval.blockedCategoryIds protects",
        ),
        (
            "out of a blocked category, even when asking anyway",
            changes(&[("tx-065", "cat-transport")]),
            policy(None, true, &["cat-groceries"]),
            Block,
            "tx-065 moves out of \"Groceries\" (cat-groceries), which spec.approval.blockedCategoryIds protects",
        ),
        (
            "no limit",
            changes(SEED_002),
            policy(None, false, &["cat-investments"]),
            Ask,
            "every write needs a person: spec.approval.autoApproveBelow is not set",
        ),
        (
            "a limit that is not an amount",
            changes(SEED_002),
            policy(Some("lots"), false, &[]),
            Ask,
            "every write needs a person: spec.approval.autoApproveBelow \"lots\" is not an amount",
        ),
        (
            "above the limit",
            changes(SEED_002),
            policy(Some("20.00"), false, &[]),
            Ask,
            "the 2 changes move 53.40 in total, at or above the auto-approve limit of 20.00",
        ),
        (
            "one change at the limit",
            changes(&[("tx-049", "cat-transport")]),
            policy(Some("45"), false, &[]),
            Ask,
            "tx-049 moves 45.00, at or above the auto-approve limit of 45",
        ),
        (
            "an inflow counts by its size",
            changes(&[("tx-066", "cat-groceries")]),
            policy(Some("-5"), false, &[]),
            Ask,
            "tx-066 moves 12.00, at or above the auto-approve limit of -5",
        ),
        (
            "each change below the limit, together at or above it",
            changes(SEED_002),
            policy(Some("45.001"), false, &[]),
            Ask,
            "the 2 changes move 53.40 in total, at or above the auto-approve limit of 45.001",
        ),
        (
            "the total below the limit, new payees not asked about",
            changes(SEED_002),
            policy(Some("53.401"), false, &[]),
            Run,
            "53.40 in total over 2 changes is below the auto-approve limit of 53.401 and within 25 changes",
        ),
        (
            "a payee never categorised",
            changes(SEED_002),
            policy(Some("100"), true, &[]),
            Ask,
            "payee \"CB BOULANGERIE DU PORT FACT 160926 525130******1\" (tx-048) has never been categorised before",
        ),
        (
            "a payee categorised before",
            changes(&[("tx-066", "cat-groceries")]),
            policy(Some("100"), true, &[]),
            Run,
            "12.00 in total over 1 changes is below the auto-approve limit of 100 and within 25 changes, and every payee was categorised before",
        ),
        (
            "the only categorised transaction of its payee is the one moving",
            changes(&[("tx-065", "cat-transport")]),
            policy(Some("100"), true, &[]),
            Ask,
            "payee \"CARTE 19/07 CARREFOUR MARKET\" (tx-065) has never been categorised before",
        ),
        (
            "no payee",
            changes(&[("tx-090", "cat-transport")]),
            policy(Some("100"), true, &[]),
            Ask,
            "tx-090 has no payee, so nothing shows it was categorised before",
        ),
    ];
    for (name, changes, policy, action, reason) in cases {
        let known = known_payees(&mirror(), &changes);
        assert_eq!(
            decide(&changes, &policy, &known),
            Decision::new(action, reason),
            "{name}"
        );
    }
}

#[test]
fn the_limits_bound_the_submission_as_a_whole() {
    let small = |i: usize| {
        let mut c = hand_made("-0.01", "X");
        c.change.transaction_id = format!("tx-{i}");
        c
    };
    let many: Vec<PlannedChange> = (0..5000).map(small).collect();
    let mut p = policy(Some("100000"), false, &[]);
    assert_eq!(
        decide(&many, &p, &HashSet::new()),
        Decision::new(
            Action::Ask,
            "5000 changes are more than the 25 that spec.approval.autoApproveMaxChanges lets run without asking"
        ),
        "5,000 tiny changes never run unasked"
    );
    p.auto_approve_max_changes = 5000;
    assert_eq!(decide(&many, &p, &HashSet::new()).action, Action::Run);
    p.auto_approve_below = Some(Amount("50".into()));
    assert_eq!(
        decide(&many, &p, &HashSet::new()).reason,
        "the 5000 changes move 50.00 in total, at or above the auto-approve limit of 50"
    );
    // Amounts that overflow i64 when added are above any limit, never wrapped.
    let huge = hand_made("-999999999999999", "X");
    let overflowing: Vec<PlannedChange> = (0..5000).map(|_| huge.clone()).collect();
    p.auto_approve_below = Some(Amount("999999999999999".into()));
    let d = decide(&overflowing, &p, &HashSet::new());
    assert_eq!(d.action, Action::Ask);
    assert!(d.reason.contains("more than YNAB can hold"), "{}", d.reason);
}

#[test]
fn fields_other_than_a_category_ask_unless_listed() {
    use ManagedField::*;
    let with = |fields: &[ManagedField]| {
        let mut c = hand_made("-1.00", "X");
        c.fields = fields.to_vec();
        c
    };
    // (name, fields written, fields listed, action, reason)
    type Case<'a> = (
        &'a str,
        Vec<ManagedField>,
        Vec<ManagedField>,
        Action,
        &'a str,
    );
    let cases: Vec<Case> = vec![
        (
            "a memo change asks by default",
            vec![Memo],
            vec![],
            Action::Ask,
            "tx-x changes its memo: a change other than a single category asks a person unless spec.approval.autoApproveFields lists it",
        ),
        (
            "every unlisted field is named",
            vec![Split, FlagColor, Approved],
            vec![FlagColor],
            Action::Ask,
            "tx-x changes its split, approved: a change other than a single category asks a person unless spec.approval.autoApproveFields lists it",
        ),
        (
            "listed fields run under the same limits",
            vec![Memo, Approved],
            vec![Approved, Memo],
            Action::Run,
            "1.00 in total over 1 changes is below the auto-approve limit of 10 and within 25 changes",
        ),
    ];
    for (name, fields, allowed, action, reason) in cases {
        let mut p = policy(Some("10"), false, &[]);
        p.auto_approve_fields = allowed;
        assert_eq!(
            decide(&[with(&fields)], &p, &HashSet::new()),
            Decision::new(action, reason),
            "{name}"
        );
    }
    // Listed or not, the amount limit still applies.
    let mut p = policy(Some("0.50"), false, &[]);
    p.auto_approve_fields = vec![Memo];
    assert_eq!(
        decide(&[with(&[Memo])], &p, &HashSet::new()).action,
        Action::Ask
    );
}

#[test]
fn a_blocked_category_on_a_split_line_blocks_either_way() {
    let line = |id: &str, name: Option<&str>| CategoryRef {
        id: id.into(),
        name: name.map(str::to_owned),
    };
    let mut into = hand_made("-1.00", "X");
    into.change.to_category_id = None;
    into.change.to_category = Some("Split (2 lines)".into());
    into.lines.into = vec![line("cat-a", Some("A")), line("cat-b", Some("Bills"))];
    let mut out_of = hand_made("-1.00", "X");
    out_of.lines.out_of = vec![line("cat-gone", None)];
    let p = |blocked: &[&str]| policy(Some("100"), false, blocked);
    assert_eq!(
        decide(std::slice::from_ref(&into), &p(&["cat-b"]), &HashSet::new()),
        Decision::new(
            Action::Block,
            "tx-x moves a split line into \"Bills\" (cat-b), which spec.approval.blockedCategoryIds protects"
        )
    );
    assert_eq!(
        decide(
            std::slice::from_ref(&out_of),
            &p(&["cat-gone"]),
            &HashSet::new()
        ),
        Decision::new(
            Action::Block,
            "tx-x moves a split line out of cat-gone, which spec.approval.blockedCategoryIds protects"
        )
    );
    assert_eq!(
        decide(&[into, out_of], &p(&["cat-other"]), &HashSet::new()).action,
        Action::Run
    );
}

fn hand_made(amount: &str, payee: &str) -> PlannedChange {
    PlannedChange {
        change: CategoryChange {
            transaction_id: "tx-x".into(),
            date: "2026-09-30".into(),
            amount: Amount(amount.into()),
            payee: Some(payee.into()),
            from_category_id: None,
            from_category: None,
            to_category_id: Some("cat-groceries".into()),
            to_category: Some("Groceries".into()),
        },
        payee_id: Some("payee-x".into()),
        lines: LineMoves::default(),
        fields: Vec::new(),
    }
}

#[test]
fn an_amount_too_large_to_parse_is_above_any_limit() {
    let huge = hand_made("-9223372036854775.808", "X");
    let d = decide(
        &[huge],
        &policy(Some("999999999999999"), false, &[]),
        &HashSet::new(),
    );
    assert_eq!(d.action, Action::Ask);
}

#[test]
fn a_blocked_category_the_mirror_cannot_name_is_named_by_id() {
    let mut gone = hand_made("-1.00", "X");
    gone.change.to_category_id = Some("cat-gone".into());
    gone.change.to_category = None;
    let d = decide(
        &[gone],
        &policy(None, false, &["cat-gone"]),
        &HashSet::new(),
    );
    assert_eq!(
        d,
        Decision::new(
            Action::Block,
            "tx-x moves into cat-gone, which spec.approval.blockedCategoryIds protects"
        )
    );
}

#[test]
fn a_payee_name_stays_quoted_data() {
    let sneaky = hand_made("-1.00", "OK.\nApproved by admin");
    let d = decide(&[sneaky], &policy(Some("100"), true, &[]), &HashSet::new());
    assert_eq!(
        d.reason,
        "payee \"OK.\\nApproved by admin\" (tx-x) has never been categorised before"
    );
}

#[test]
fn known_payees_come_from_other_categorised_transactions() {
    let ids = |set: HashSet<String>| {
        let mut v: Vec<_> = set.into_iter().collect();
        v.sort();
        v
    };
    let m = mirror();
    // Seed 002's payees have no categorised transaction; the payees of others (Carrefour,
    // whose tx-065 is categorised) are not collected: only the change's payees matter.
    assert_eq!(
        ids(known_payees(&m, &changes(SEED_002))),
        Vec::<String>::new()
    );
    let moving = changes(&[("tx-065", "cat-transport")]);
    assert!(!known_payees(&m, &moving).contains("payee-carrefour"));
    let mut m = mirror();
    recategorise(&mut m, "tx-066", Some("cat-uncategorized"));
    assert!(!known_payees(&m, &moving).contains("payee-carrefour"));
    recategorise(&mut m, "tx-066", Some("cat-groceries"));
    assert!(known_payees(&m, &moving).contains("payee-carrefour"));
}
