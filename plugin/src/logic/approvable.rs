//! Whether a person may decide a request now, and if not, why and what to do instead. The API
//! server enforces the same rules; checking first gives the reason without a round trip and
//! without a 403.

use k8s_openapi::jiff::Timestamp;
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest, Verdict};

use super::queue::subject;

/// Why a request cannot be decided; the text names the request and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// `Ok` when `request` waits for a decision at `now`.
pub fn check(request: &ApprovalRequest, now: Timestamp) -> Result<(), Refusal> {
    let name = request.metadata.name.as_deref().unwrap_or_default();
    let about = subject(request);
    if let Some(d) = &request.spec.decision {
        let verdict = match d.verdict {
            Verdict::Approve => "approved",
            Verdict::Reject => "rejected",
        };
        return Err(Refusal(format!(
            "ApprovalRequest {name} was already {verdict} by {}: a decision cannot be changed. To ask again, change {about}.",
            d.by
        )));
    }
    let phase = request.status.as_ref().and_then(|s| s.phase);
    let why = match phase {
        Some(ApprovalPhase::Pending) if request.spec.expires_at.0 > now => return Ok(()),
        Some(ApprovalPhase::Pending) | Some(ApprovalPhase::Expired) => format!(
            "ApprovalRequest {name} expired at {}; nothing is written for it. Change {about} to ask again.",
            request.spec.expires_at.0
        ),
        Some(ApprovalPhase::Stale) => format!(
            "ApprovalRequest {name} is Stale: YNAB or {about} changed since its preview, so approving it would apply nothing. Answer the newer request ledgerops opens for {about} (kubectl ledgerops queue)."
        ),
        Some(ApprovalPhase::Ignored) => format!(
            "ApprovalRequest {name} was not issued by ledgerops and authorizes nothing. Answer the request ledgerops opened for {about} (kubectl ledgerops queue)."
        ),
        Some(p @ (ApprovalPhase::Approved | ApprovalPhase::Applied | ApprovalPhase::Rejected)) => {
            format!("ApprovalRequest {name} is already {p:?}. To ask again, change {about}.")
        }
        None => format!(
            "ApprovalRequest {name} is not confirmed by ledgerops yet (it has no phase): wait a few seconds and try again, or check that ledgerops is running."
        ),
    };
    Err(Refusal(why))
}

/// Whether an answer to `[y/N]` says yes; anything else, an empty line included, is no.
pub fn confirmed(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::queue::tests::{NOW, at, request};
    use ledgerops::api::approval::Decision;

    #[test]
    fn only_y_or_yes_confirms() {
        let cases = [
            ("y\n", true),
            ("YES\r\n", true),
            (" yes ", true),
            ("\n", false),
            ("n\n", false),
            ("yep\n", false),
            ("", false),
        ];
        for (answer, want) in cases {
            assert_eq!(confirmed(answer), want, "{answer:?}");
        }
    }

    #[test]
    fn only_a_pending_undecided_unexpired_request_may_be_decided() {
        let pending = Some(ApprovalPhase::Pending);
        let mut decided = request("ns", "r", 10, 100, pending);
        decided.spec.decision = Some(Decision {
            verdict: Verdict::Reject,
            by: "carol".into(),
            groups: Vec::new(),
            comment: Some("no".into()),
            edits: None,
        });
        let cases = [
            (request("ns", "r", 10, 100, pending), None),
            (decided, Some("was already rejected by carol")),
            (request("ns", "r", 10, -1, pending), Some("expired at")),
            (
                request("ns", "r", 10, 100, Some(ApprovalPhase::Expired)),
                Some("expired at"),
            ),
            (
                request("ns", "r", 10, 100, Some(ApprovalPhase::Stale)),
                Some("is Stale: YNAB or CategorizationPlan/september changed"),
            ),
            (
                request("ns", "r", 10, 100, Some(ApprovalPhase::Ignored)),
                Some("was not issued by ledgerops"),
            ),
            (
                request("ns", "r", 10, 100, Some(ApprovalPhase::Applied)),
                Some("is already Applied"),
            ),
            (
                request("ns", "r", 10, 100, None),
                Some("not confirmed by ledgerops yet"),
            ),
        ];
        for (r, want) in cases {
            let got = check(&r, at(NOW));
            match want {
                None => assert_eq!(got, Ok(())),
                Some(text) => {
                    let Refusal(msg) = got.expect_err(text);
                    assert!(
                        msg.contains(text) && msg.contains("ApprovalRequest r"),
                        "{msg}"
                    );
                }
            }
        }
    }
}
