//! Unit tests of `logic/transaction/step/standing.rs`.

use super::super::fixtures::at;
use super::*;
use crate::logic::transaction::status::{self as transaction_status, Verdict};

fn blocked(reason: &'static str, message: &str) -> Verdict {
    Verdict::Blocked {
        reason,
        message: message.into(),
    }
}

fn converged(reason: &'static str, message: &str) -> Verdict {
    Verdict::Converged {
        reason,
        message: message.into(),
    }
}

const YNAB_SAID: &str = "YNAB refused the write of Dining Out → Groceries (400: category is hidden); it is not sent again until the spec changes";
const REFUSED_AGAIN: &str = "YNAB refused the write of tx-048 for this spec; sending it again would fail the same way: change the spec";

/// A status marked accepted and refused at the given generations, showing `verdict`.
fn marked(
    accepted: Option<i64>,
    refused: Option<i64>,
    verdict: Option<Verdict>,
) -> TransactionStatus {
    let mut status = TransactionStatus::default();
    if let Some(verdict) = verdict {
        transaction_status::apply(&mut status, &verdict, Some(2), at(0));
    }
    status.accepted_generation = accepted;
    status.refused_generation = refused;
    status
}

#[test]
fn what_still_stands_for_this_generation() {
    let accepted = Step::idle(converged(
        "AcceptedTheirs",
        "A person chose YNAB's state: ledgerops writes again when the spec changes",
    ));
    let refused_by_ynab = Some(blocked("RefusedByYnab", YNAB_SAID));
    let reconciled = Some(blocked("Reconciled", "tx-048 is reconciled"));
    // (what, accepted at, refused at, status shows, generation now) →
    // (step, accepted at after, refused at after)
    type Case = (
        &'static str,
        TransactionStatus,
        Option<i64>,
        (Option<Step>, Option<i64>, Option<i64>),
    );
    let cases: Vec<Case> = vec![
        (
            "nothing marked",
            marked(None, None, None),
            Some(2),
            (None, None, None),
        ),
        (
            "accepted at this generation",
            marked(Some(2), Some(1), None),
            Some(2),
            (Some(accepted), Some(2), Some(1)),
        ),
        (
            "accepted before the spec changed",
            marked(Some(1), None, None),
            Some(2),
            (None, None, None),
        ),
        (
            "refused: YNAB's words are kept",
            marked(None, Some(2), refused_by_ynab.clone()),
            Some(2),
            (
                Some(Step::idle(blocked("RefusedByYnab", YNAB_SAID))),
                None,
                Some(2),
            ),
        ),
        (
            "refused, its words lost",
            marked(None, Some(2), None),
            Some(2),
            (
                Some(Step::idle(blocked("RefusedByYnab", REFUSED_AGAIN))),
                None,
                Some(2),
            ),
        ),
        (
            "refused, blocked since for another reason",
            marked(None, Some(2), reconciled),
            Some(2),
            (
                Some(Step::idle(blocked("RefusedByYnab", REFUSED_AGAIN))),
                None,
                Some(2),
            ),
        ),
        (
            "refused before the spec changed",
            marked(None, Some(1), refused_by_ynab.clone()),
            Some(2),
            (None, None, None),
        ),
        (
            "accepted earlier, refused now",
            marked(Some(1), Some(2), refused_by_ynab),
            Some(2),
            (
                Some(Step::idle(blocked("RefusedByYnab", YNAB_SAID))),
                None,
                Some(2),
            ),
        ),
        (
            "a status without a generation",
            marked(None, None, None),
            None,
            (None, None, None),
        ),
    ];
    for (what, mut status, generation, (step, accepted, refused)) in cases {
        let got = standing(&mut status, generation, "tx-048");
        assert_eq!(got, step, "{what}");
        assert_eq!(
            (status.accepted_generation, status.refused_generation),
            (accepted, refused),
            "{what}"
        );
    }
}
