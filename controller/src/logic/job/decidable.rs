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
#[path = "decidable_tests.rs"]
mod tests;
