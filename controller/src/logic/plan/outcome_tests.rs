//! Unit tests of `logic/plan/outcome.rs`.

use super::*;
use crate::logic::transaction::converge::Blocked;

fn waiting() -> Outcome {
    Outcome::Waiting {
        until: Timestamp::UNIX_EPOCH,
        why: "paced".into(),
    }
}

#[test]
fn the_first_reason_to_stop_wins() {
    let ids: Vec<String> = ["a", "b"].map(String::from).to_vec();
    let blocked = Outcome::Blocked(Blocked {
        reason: "Reconciled",
        message: "a is reconciled".into(),
    });
    type Check = fn(&WriteResult) -> bool;
    let cases: Vec<(Vec<Outcome>, Check)> = vec![
        (vec![Outcome::Written, Outcome::AlreadyTarget], |r| {
            *r == WriteResult::Landed
        }),
        (vec![Outcome::NoChange, Outcome::Written], |r| {
            *r == WriteResult::Landed
        }),
        (
            vec![Outcome::Written, Outcome::NotLanded("503".into())],
            |r| matches!(r, WriteResult::NotLanded(w) if w == "503"),
        ),
        (
            vec![waiting(), Outcome::Written],
            |r| matches!(r, WriteResult::Waiting { why, .. } if why == "paced"),
        ),
        // A failure says more than a wait: it is what to look at.
        (
            vec![waiting(), Outcome::NotLanded("503".into())],
            |r| matches!(r, WriteResult::NotLanded(w) if w == "503"),
        ),
        (
            vec![
                Outcome::NotLanded("503".into()),
                Outcome::Refused("400".into()),
            ],
            |r| matches!(r, WriteResult::Refused(w) if w.starts_with("400")),
        ),
        (
            vec![Outcome::Stale("changed".into()), Outcome::AlreadyTarget],
            |r| matches!(r, WriteResult::Stale(_)),
        ),
        (
            vec![blocked, Outcome::Skipped],
            |r| matches!(r, WriteResult::Blocked(m) if m.contains("a: a is reconciled")),
        ),
        (
            vec![Outcome::Written, Outcome::Mismatch],
            |r| matches!(r, WriteResult::Mismatch(m) if m.contains('b')),
        ),
        (
            vec![Outcome::Skipped, Outcome::Diverged],
            |r| matches!(r, WriteResult::Changed(m) if m.contains('b') && !m.contains("a,")),
        ),
        (
            vec![Outcome::Missing, Outcome::Skipped],
            |r| matches!(r, WriteResult::Changed(m) if m.contains('a')),
        ),
    ];
    for (outcomes, check) in cases {
        let result = summarize(&ids, &outcomes);
        assert!(check(&result), "{outcomes:?} gave {result:?}");
    }
}
