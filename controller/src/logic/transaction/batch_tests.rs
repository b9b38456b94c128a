//! Unit tests of `logic/transaction/batch.rs`.

use serde_json::json;

use super::*;
use crate::logic::transaction::converge::Allocation;
use crate::ynab_model::PlanDetail;

fn mirror(txs: &[(&str, Option<&str>, &str)]) -> Mirror {
    let transactions: Vec<_> = txs
        .iter()
        .map(|(id, cat, cleared)| {
            json!({"id": id, "date": "2026-09-16", "amount": -8400, "memo": null, "cleared": cleared,
                   "approved": true, "flag_color": null, "account_id": "acc", "payee_id": null,
                   "category_id": cat, "transfer_account_id": null, "deleted": false})
        })
        .collect();
    let plan: PlanDetail = serde_json::from_value(json!({
        "id": "p", "name": "P", "accounts": [], "payees": [], "payee_locations": [], "category_groups": [],
        "categories": [], "months": [], "transactions": transactions, "subtransactions": [],
        "scheduled_transactions": [], "scheduled_subtransactions": []
    }))
    .unwrap();
    let mut m = Mirror::default();
    m.apply(plan, 1);
    m
}

fn cat(id: &str) -> EndState {
    EndState {
        allocation: Some(Allocation::Category(id.into())),
        ..EndState::default()
    }
}

fn item(id: &str, to: &str, expect: Expect) -> WriteItem {
    WriteItem {
        transaction_id: id.into(),
        target: cat(to),
        expect,
    }
}

/// A Transaction authorization for writing `item` on `m`.
fn authorized(m: &Mirror, item: &WriteItem) -> Authorized {
    let tx = &m.transactions[&item.transaction_id];
    let current = current_of(m, &item.transaction_id, &item.target).unwrap();
    Authorized::Transaction {
        scope: "s".into(),
        hash: converge::approval_hash("s", tx, &current, &item.target),
    }
}

#[test]
fn nothing_is_written_when_the_authorization_no_longer_holds() {
    let m = mirror(&[("a", Some("dining"), "cleared")]);
    let write = item("a", "gifts", Expect::Prior(Some(cat("dining"))));
    let sub = |authorized| Submission {
        items: vec![write.clone()],
        all_or_nothing: false,
        operation: None,
        priority: Priority::Background,
        respect: None,
        authorized,
    };
    assert_eq!(
        decide(&m, None, &sub(authorized(&m, &write))),
        [Plan::Write]
    );
    let mut changed = m.clone();
    changed.transactions.get_mut("a").unwrap().amount = -99_000;
    assert!(matches!(
        &decide(&changed, None, &sub(authorized(&m, &write)))[..],
        [Plan::Done(Outcome::Stale(why))] if why.contains("amount")
    ));
    let elsewhere = Authorized::Transaction {
        scope: "another budget".into(),
        hash: match authorized(&m, &write) {
            Authorized::Transaction { hash, .. } => hash,
            Authorized::Plan(_) => unreachable!(),
        },
    };
    assert!(matches!(
        &decide(&m, None, &sub(elsewhere))[..],
        [Plan::Done(Outcome::Stale(_))]
    ));
    // Already at the target: nothing to authorize, adopted whatever the hash.
    let landed = mirror(&[("a", Some("gifts"), "cleared")]);
    assert_eq!(
        decide(&landed, None, &sub(authorized(&m, &write))),
        [Plan::Done(Outcome::AlreadyTarget)]
    );
}

fn uncategorized() -> EndState {
    EndState {
        allocation: Some(Allocation::Uncategorized),
        ..EndState::default()
    }
}

#[test]
fn each_item_is_decided_on_fresh_state() {
    let m = mirror(&[
        ("a", Some("dining"), "cleared"),
        ("b", Some("gifts"), "cleared"),
        ("r", None, "reconciled"),
    ]);
    let first = item("a", "gifts", Expect::Prior(Some(cat("dining"))));
    let sub = Submission {
        authorized: authorized(&m, &first),
        items: vec![
            first.clone(),
            item("b", "gifts", Expect::Prior(Some(cat("dining")))),
            item("a", "gifts", Expect::Prior(Some(cat("groceries")))),
            item("gone", "gifts", Expect::Prior(None)),
            item("r", "gifts", Expect::Prior(None)),
        ],
        all_or_nothing: false,
        operation: None,
        priority: Priority::Background,
        respect: None,
    };
    let plans = decide(&m, None, &sub);
    assert_eq!(plans[0], Plan::Write);
    assert_eq!(plans[1], Plan::Done(Outcome::AlreadyTarget));
    assert_eq!(plans[2], Plan::Done(Outcome::Diverged));
    assert_eq!(plans[3], Plan::Done(Outcome::Missing));
    assert!(matches!(&plans[4], Plan::Done(Outcome::Blocked(b)) if b.reason == "Reconciled"));
}

#[test]
fn all_or_nothing_writes_nothing_when_one_item_changed() {
    let m = mirror(&[("a", None, "cleared"), ("b", Some("dining"), "cleared")]);
    let items = vec![
        item("a", "groceries", Expect::Exactly(uncategorized())),
        item("b", "transport", Expect::Exactly(uncategorized())),
    ];
    let plans = decide(
        &m,
        None,
        &Submission {
            authorized: authorized(&m, &items[0]),
            items: items.clone(),
            all_or_nothing: true,
            operation: None,
            priority: Priority::Background,
            respect: None,
        },
    );
    assert_eq!(
        plans,
        [Plan::Done(Outcome::Skipped), Plan::Done(Outcome::Diverged)]
    );
    let plans = decide(
        &m,
        None,
        &Submission {
            authorized: authorized(&m, &items[0]),
            items,
            all_or_nothing: false,
            operation: None,
            priority: Priority::Background,
            respect: None,
        },
    );
    assert_eq!(plans[0], Plan::Write);
}

#[test]
fn settle_reads_back() {
    let m = mirror(&[("a", Some("gifts"), "cleared")]);
    assert_eq!(
        settle(&m, &item("a", "gifts", Expect::Prior(None))),
        Outcome::Written
    );
    assert_eq!(
        settle(&m, &item("a", "dining", Expect::Prior(None))),
        Outcome::Mismatch
    );
    assert!(matches!(
        settle(&m, &item("zz", "dining", Expect::Prior(None))),
        Outcome::NotLanded(_)
    ));
}

#[test]
fn requests_keep_a_submission_whole_and_stay_within_the_limit() {
    type Groups<'a> = &'a [&'a [u8]];
    type Requests<'a> = &'a [&'a [&'a [u8]]];
    let cases: [(Groups, usize, Requests); 5] = [
        (&[&[1], &[2], &[3]], 2, &[&[&[1], &[2]], &[&[3]]]),
        (&[&[1, 2], &[3]], 2, &[&[&[1, 2]], &[&[3]]]),
        // A submission bigger than a request goes out in pieces of its own.
        (&[&[1], &[2, 3, 4]], 2, &[&[&[1]], &[&[2, 3]], &[&[4]]]),
        (&[&[1], &[2]], 0, &[&[&[1]], &[&[2]]]),
        (&[], 5, &[]),
    ];
    for (groups, max, want) in cases {
        let groups: Vec<Vec<u8>> = groups.iter().map(|g| g.to_vec()).collect();
        let want: Vec<Vec<Vec<u8>>> = want
            .iter()
            .map(|r| r.iter().map(|g| g.to_vec()).collect())
            .collect();
        assert_eq!(pack(&groups, max), want, "{groups:?} max {max}");
    }
}

#[test]
fn a_refused_request_splits_by_submission_while_splits_are_left() {
    let request = vec![vec![1], vec![2], vec![3]];
    assert_eq!(
        split(&request, 1),
        Some([vec![vec![1]], vec![vec![2], vec![3]]])
    );
    assert_eq!(split(&request, 0), None, "no splits left");
    assert_eq!(
        split(&[vec![1, 2]], 5),
        None,
        "one submission is refused whole"
    );
}

#[test]
fn the_split_budget_finds_one_bad_submission_among_256() {
    // Halving 256 submissions down to the bad one takes log2(256) splits.
    let mut request: Vec<Vec<u16>> = (0..256).map(|i| vec![i]).collect();
    let bad = 137;
    let mut splits = 0;
    while let Some([a, b]) = split(&request, MAX_SPLITS - splits) {
        splits += 1;
        request = if a.iter().flatten().any(|&i| i == bad) {
            a
        } else {
            b
        };
    }
    assert_eq!(request, vec![vec![bad]]);
    assert_eq!(splits, MAX_SPLITS);
}

#[test]
fn the_chunks_after_one_that_cannot_land_in_full_are_held_back() {
    let chunk = |operation: Option<&str>| Submission {
        items: vec![item("a", "gifts", Expect::Prior(None))],
        all_or_nothing: true,
        authorized: Authorized::Transaction {
            scope: "s".into(),
            hash: "h".into(),
        },
        operation: operation.map(str::to_owned),
        priority: Priority::Background,
        respect: None,
    };
    let write = || vec![Plan::Write];
    let done = |o: Outcome| vec![Plan::Done(o)];
    let held = Outcome::NotLanded(
        "not sent: an earlier chunk of operation op did not land in full".into(),
    );
    // The chunks' operations, their decisions in order, and what each is left with.
    type Case<'a> = (Vec<Option<&'a str>>, Vec<Vec<Plan>>, Vec<Vec<Plan>>);
    let cases: Vec<Case> = vec![
        (
            vec![Some("op"), Some("op"), Some("op")],
            vec![write(), write(), write()],
            vec![write(), write(), write()],
        ),
        // Adopted or unchanged items land: nothing stops.
        (
            vec![Some("op"), Some("op")],
            vec![done(Outcome::AlreadyTarget), write()],
            vec![done(Outcome::AlreadyTarget), write()],
        ),
        (
            vec![Some("op"), Some("op"), Some("op")],
            vec![write(), done(Outcome::Skipped), write()],
            vec![write(), done(Outcome::Skipped), done(held.clone())],
        ),
        // Another operation, and a Transaction's write, go on.
        (
            vec![Some("op"), Some("other"), None, Some("op")],
            vec![done(Outcome::Diverged), write(), write(), write()],
            vec![
                done(Outcome::Diverged),
                write(),
                write(),
                done(held.clone()),
            ],
        ),
        // Without an operation, a submission that cannot land stops nothing.
        (
            vec![None, None],
            vec![done(Outcome::Diverged), write()],
            vec![done(Outcome::Diverged), write()],
        ),
    ];
    for (operations, mut plans, want) in cases {
        let submissions: Vec<Submission> = operations.iter().map(|o| chunk(*o)).collect();
        Stops::decide(&submissions, &mut plans);
        assert_eq!(plans, want, "{operations:?}");
    }
    // A request that fails stops its operation for the requests after it.
    let mut stops = Stops::default();
    let first = chunk(Some("op"));
    assert_eq!(stops.holds_back(&first), None);
    stops.stop(&first);
    assert_eq!(stops.holds_back(&chunk(Some("op"))), Some(held));
    assert_eq!(stops.holds_back(&chunk(Some("other"))), None);
    stops.stop(&chunk(None));
    assert_eq!(stops.holds_back(&chunk(None)), None);
}

/// A plan of two assignments written in two chunks of one operation, as the write path
/// submits it.
fn chunked_plan(m: &Mirror) -> Vec<Submission> {
    use crate::logic::plan::fixtures::{approved, assign};
    use crate::logic::plan::{Basis, operation};
    let basis = Basis::Assignments(vec![
        assign("tx-048", "cat-groceries"),
        assign("tx-049", "cat-transport"),
    ]);
    let approved = approved(m, basis);
    approved
        .changes
        .chunks(1)
        .map(|chunk| Submission {
            items: chunk.iter().map(operation::write_item).collect(),
            all_or_nothing: true,
            authorized: Authorized::Plan(approved.clone()),
            operation: Some("attempt-1".into()),
            priority: Priority::Background,
            respect: None,
        })
        .collect()
}

#[test]
fn every_chunk_of_a_plan_is_checked_against_the_whole_approved_preview() {
    use crate::logic::plan::fixtures::{mirror, recategorise};
    let m = mirror();
    let chunks = chunked_plan(&m);
    let plans = decide_all(&m, None, &chunks, |_| None);
    assert_eq!(plans, [vec![Plan::Write], vec![Plan::Write]]);
    // The same as deciding each chunk alone: the check made once gives every chunk its answer.
    let alone: Vec<Vec<Plan>> = chunks.iter().map(|c| decide(&m, None, c)).collect();
    assert_eq!(plans, alone);
    // Someone recategorised the second chunk's transaction: it diverged, and the first chunk,
    // whose own transaction is as approved, is not written either.
    let mut changed = m.clone();
    recategorise(&mut changed, "tx-049", Some("cat-groceries"));
    let plans = decide_all(&changed, None, &chunks, |_| None);
    assert!(
        matches!(&plans[0][..], [Plan::Done(Outcome::Stale(_))]),
        "{plans:?}"
    );
    assert_eq!(plans[1], [Plan::Done(Outcome::Diverged)]);
}

/// YNAB applies a bulk update's entries in order: a second write to one transaction in the same
/// batch would land on what the first left, a state nobody approved it from. The first in the
/// queue is written; a later one (its whole submission when all or nothing) waits for the next
/// batch.
#[test]
fn a_transaction_is_written_once_per_batch_and_a_later_write_waits_for_the_next() {
    use crate::logic::plan::fixtures::{approved, assign, mirror};
    use crate::logic::plan::{Basis, operation};
    let m = mirror();
    // A plan's submission moving each of `moves`, approved on `m`.
    let sub = |name: &str, moves: &[(&str, &str)], all_or_nothing: bool| {
        let basis = Basis::Assignments(moves.iter().map(|(t, c)| assign(t, c)).collect());
        let approved = approved(&m, basis);
        Submission {
            items: approved.changes.iter().map(operation::write_item).collect(),
            all_or_nothing,
            authorized: Authorized::Plan(approved),
            operation: Some(name.into()),
            priority: Priority::Approved,
            respect: None,
        }
    };
    let (a, b) = ("tx-048", "tx-049");
    let later = Plan::Done(Outcome::NotLanded(WRITTEN_FIRST.into()));
    let w = Plan::Write;
    // (submissions in queue order) → their items' plans
    type Case = (Vec<Submission>, Vec<Vec<Plan>>);
    let cases: Vec<Case> = vec![
        (
            vec![
                sub("p1", &[(a, "cat-groceries")], false),
                sub("p2", &[(b, "cat-groceries")], false),
            ],
            vec![vec![w.clone()], vec![w.clone()]],
        ),
        (
            vec![
                sub("p1", &[(a, "cat-groceries")], false),
                sub("p2", &[(a, "cat-transport")], false),
            ],
            vec![vec![w.clone()], vec![later.clone()]],
        ),
        (
            vec![
                sub("p1", &[(a, "cat-groceries")], false),
                sub("p2", &[(a, "cat-transport"), (b, "cat-transport")], false),
            ],
            vec![vec![w.clone()], vec![later.clone(), w.clone()]],
        ),
        (
            vec![
                sub("p1", &[(a, "cat-groceries")], true),
                sub("p2", &[(a, "cat-transport"), (b, "cat-transport")], true),
                sub("p3", &[(b, "cat-groceries")], true),
            ],
            vec![
                vec![w.clone()],
                vec![later.clone(), later.clone()],
                vec![w.clone()],
            ],
        ),
    ];
    for (submissions, want) in cases {
        assert_eq!(
            decide_all(&m, None, &submissions, |_| None),
            want,
            "{submissions:?}"
        );
    }
    // Within one submission too: the second item for a transaction waits.
    let mut twice = sub("p1", &[(a, "cat-groceries")], false);
    twice.items.push(twice.items[0].clone());
    assert_eq!(
        decide_all(&m, None, &[twice], |_| None),
        [vec![w.clone(), later]]
    );
}

/// A write whose answer was lost and that no read settled: the next decision, on a fresh
/// read, writes again only where YNAB shows no change since. The hour's soak found a plan's
/// approved "before" back after a person undid the landed write, and the write sent again.
#[test]
fn a_write_whose_answer_was_lost_is_sent_again_only_if_nothing_changed_since() {
    let write = item("a", "gifts", Expect::Exactly(cat("dining")));
    let sub = |m: &Mirror| Submission {
        items: vec![write.clone()],
        all_or_nothing: false,
        operation: None,
        priority: Priority::Approved,
        respect: None,
        authorized: authorized(m, &write),
    };
    // (what YNAB shows now, whether a read since the lost answer showed it changed) → decision.
    let cases = [
        ("dining", Some(false), Plan::Write),
        ("dining", None, Plan::Write),
        ("dining", Some(true), Plan::Done(Outcome::Diverged)),
        ("gifts", Some(true), Plan::Done(Outcome::AlreadyTarget)),
        ("travel", Some(true), Plan::Done(Outcome::Diverged)),
    ];
    for (now, changed, want) in cases {
        let mut m = mirror(&[("a", Some(now), "cleared")]);
        if let Some(changed) = changed {
            m.lost_answers.insert("a".into(), changed);
        }
        let got = decide(&m, None, &sub(&m));
        assert_eq!(got, [want], "YNAB shows {now}, changed since: {changed:?}");
    }
}

#[test]
fn a_delta_marks_the_lost_answers_it_shows_changed() {
    let mut m = mirror(&[
        ("a", Some("dining"), "cleared"),
        ("b", Some("dining"), "cleared"),
    ]);
    m.lost_answers.insert("a".into(), false);
    m.lost_answers.insert("b".into(), false);
    let delta: PlanDetail = serde_json::from_value(json!({
        "id": "p", "name": "P", "accounts": [], "payees": [], "payee_locations": [], "category_groups": [],
        "categories": [], "months": [], "subtransactions": [],
        "scheduled_transactions": [], "scheduled_subtransactions": [],
        "transactions": [{"id": "a", "date": "2026-09-16", "amount": -8400, "memo": null,
            "cleared": "cleared", "approved": true, "flag_color": null, "account_id": "acc",
            "payee_id": null, "category_id": "dining", "transfer_account_id": null, "deleted": false}]
    }))
    .unwrap();
    m.apply(delta, 2);
    assert!(m.lost_answers["a"], "in the delta: changed since");
    assert!(!m.lost_answers["b"], "not in it: untouched since");
}

#[test]
fn a_write_the_policy_runs_is_held_to_what_ledgerops_last_wrote_right_before_it_goes_out() {
    // "a" shows dining in YNAB.
    let m = mirror(&[("a", Some("dining"), "cleared")]);
    let written = |category: &str| {
        let mut last = LastWritten::default();
        last.record(
            "a",
            "2026-12-07T10:00:00Z".parse().unwrap(),
            Some(category.into()),
        );
        last
    };
    let stale = |p: &Plan| matches!(p, Plan::Done(Outcome::Stale(why)) if why.starts_with("a shows dining in YNAB, set by someone else since ledgerops wrote gifts"));
    let cases: Vec<(&str, Option<&str>, Option<LastWritten>, bool)> = vec![
        (
            "it shows what ledgerops wrote",
            Some("p"),
            Some(written("dining")),
            false,
        ),
        (
            "ledgerops never wrote it",
            Some("p"),
            Some(LastWritten::default()),
            false,
        ),
        (
            "someone edited it since",
            Some("p"),
            Some(written("gifts")),
            true,
        ),
        (
            "a person decided the write",
            None,
            Some(written("gifts")),
            false,
        ),
    ];
    for (case, respect, last, held) in cases {
        let write = item("a", "groceries", Expect::Prior(None));
        let sub = Submission {
            authorized: authorized(&m, &write),
            items: vec![write],
            all_or_nothing: false,
            operation: None,
            priority: Priority::Unasked,
            respect: respect.map(str::to_owned),
        };
        let asked = |s: &Submission| s.respect.as_ref().and(last.clone());
        let plans = decide_all(&m, None, [&sub], asked).remove(0);
        if held {
            assert!(plans.iter().all(stale), "{case}: {plans:?}");
        } else {
            assert_eq!(plans, [Plan::Write], "{case}");
        }
    }
}
