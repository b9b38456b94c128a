//! Unit tests of `logic/job/decidable.rs`.

use super::*;
use crate::api::approval::Verdict;

fn t(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

#[test]
fn only_a_live_pending_request_is_decidable() {
    use ApprovalPhase::*;
    let decided = Decision {
        verdict: Verdict::Approve,
        by: "bob".into(),
        groups: Vec::new(),
        comment: None,
        edits: None,
    };
    type Case<'a> = (
        Option<ApprovalPhase>,
        Option<&'a Decision>,
        i64,
        Result<(), &'a str>,
    );
    let cases: [Case; 9] = [
        (Some(Pending), None, 100, Ok(())),
        (Some(Pending), None, 0, Err("expired at")),
        (Some(Pending), None, -5, Err("expired at")),
        (Some(Expired), None, 100, Err("expired at")),
        (Some(Stale), None, 100, Err("is Stale")),
        (Some(Approved), None, 100, Err("is Approved, not Pending")),
        (Some(Rejected), None, 100, Err("is Rejected, not Pending")),
        (None, None, 100, Err("has not taken it up")),
        (
            Some(Pending),
            Some(&decided),
            100,
            Err("already decided: Approve by `bob`"),
        ),
    ];
    for (phase, decision, expires_in, want) in cases {
        let got = decidable("apr-1", phase, decision, t(expires_in), t(0));
        match want {
            Ok(()) => assert_eq!(got, Ok(()), "{phase:?}"),
            Err(part) => {
                let e = got.expect_err("refused");
                assert!(e.contains(part), "{e}");
                assert!(
                    e.contains("`apr-1`") && e.contains("nothing was recorded"),
                    "{e}"
                );
            }
        }
    }
}
