//! Whether `/agent approve` or `/agent reject` may record a decision on an ApprovalRequest: only
//! on one ledgerops shows as Pending and that has not expired by the job's clock. Anything else
//! is refused with the reason and nothing is written. The ApprovalRequest gate checks again on
//! its side; this keeps a late or misdirected answer from being recorded at all.

use k8s_openapi::jiff::Timestamp;

use crate::api::approval::{ApprovalPhase, Decision};

/// Ok when a decision may be recorded on request `name`; else why not.
pub fn decidable(
    name: &str,
    phase: Option<ApprovalPhase>,
    decision: Option<&Decision>,
    expires_at: Timestamp,
    now: Timestamp,
) -> Result<(), String> {
    if let Some(d) = decision {
        return Err(format!(
            "ApprovalRequest `{name}` was already decided: {:?} by {}; nothing was recorded",
            d.verdict,
            super::escape::code(&d.by)
        ));
    }
    match phase {
        Some(ApprovalPhase::Pending) if expires_at > now => Ok(()),
        Some(ApprovalPhase::Pending) | Some(ApprovalPhase::Expired) => Err(format!(
            "ApprovalRequest `{name}` expired at {expires_at}: nobody decided in time, so it can no longer be approved or rejected; nothing was recorded"
        )),
        Some(ApprovalPhase::Stale) => Err(format!(
            "ApprovalRequest `{name}` is Stale: the plan or YNAB changed since its preview, so it can no longer be decided; a new request follows if the change is still wanted; nothing was recorded"
        )),
        None => Err(format!(
            "ApprovalRequest `{name}` is not Pending: ledgerops has not taken it up (no status), so it cannot be decided; nothing was recorded"
        )),
        Some(other) => Err(format!(
            "ApprovalRequest `{name}` is {other:?}, not Pending, so it cannot be decided; nothing was recorded"
        )),
    }
}

#[cfg(test)]
mod tests {
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
}
