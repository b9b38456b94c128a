//! What can go wrong talking to YNAB, each with what to do about it.

use k8s_openapi::jiff::Timestamp;

/// An error from the YNAB client. Messages name the record concerned and never the token; of
/// YNAB's answer they carry only a short summary (`answer`: the HTTP status, and YNAB's error id
/// and name), never the body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum YnabError {
    #[error(
        "YNAB refused the token ({answer}): put a valid personal access token in the Secret named by spec.tokenSecretRef"
    )]
    Unauthorized { answer: String },
    #[error(
        "YNAB forbids this ({answer}): check the YNAB subscription and that the token may write"
    )]
    Forbidden { answer: String },
    #[error(
        "{what} was not found in YNAB ({answer}): check the id, and that the token's account can see the plan"
    )]
    NotFound { what: String, answer: String },
    #[error(
        "YNAB refused {what} as a conflict ({answer}): the record already exists; read it instead of creating it"
    )]
    Conflict { what: String, answer: String },
    #[error("YNAB refused {what} as invalid ({answer}): fix the request; nothing was written")]
    BadRequest { what: String, answer: String },
    #[error(
        "YNAB is rate limiting this token (429): ledgerops waits until {until} before the next request"
    )]
    RateLimited { until: Timestamp },
    #[error(
        "the request budget of {limit} per hour for this token is spent: the next request goes out at {until}; raise spec.requestsPerHour (at most 200) only if nothing else uses the token"
    )]
    BudgetSpent { limit: u32, until: Timestamp },
    #[error(
        "this {priority} request waits until {until} and then goes out by itself: of the token's {limit} requests per hour, {reserved} are kept for approved writes and asked syncs, and the rest are spread across the hour so that no burst spends it; an owner may raise spec.requestsPerHour (at most 200) or lower spec.reservedRequestsPercent to send such work sooner"
    )]
    Paced {
        priority: &'static str,
        reserved: u32,
        limit: u32,
        until: Timestamp,
    },
    #[error("YNAB answered {answer} to {what}: it is retried later")]
    Server { what: String, answer: String },
    #[error("YNAB could not be reached for {what} ({reason}): check spec.apiUrl and the network")]
    Unreachable { what: String, reason: String },
    #[error(
        "the connection broke after {what} was sent, so it may have landed: ledgerops re-reads YNAB before writing again"
    )]
    OutcomeUnknown { what: String },
    #[error("YNAB's answer to {what} did not parse ({reason}): the API may have changed")]
    Decode { what: String, reason: String },
    #[error(
        "{what} was not sent: the Budget was suspended or deleted, or its token Secret was removed, emptied or un-labelled, after the request was queued"
    )]
    Withdrawn { what: String },
    #[error(
        "{what} was not sent: this replica no longer holds the leader lease, and the replica that does will do it"
    )]
    NotLeader { what: String },
    #[error(
        "{what} was not sent: the record of this token's requests could not be read or written ({reason}), and without it a restart could send more than the hour's budget; it is retried later"
    )]
    Uncounted { what: String, reason: String },
}

impl YnabError {
    /// The `Ready` condition reason this error maps to on a Budget.
    pub fn reason(&self) -> &'static str {
        match self {
            YnabError::Unauthorized { .. } | YnabError::Forbidden { .. } => "Unauthorized",
            YnabError::NotFound { .. } => "NotFound",
            YnabError::RateLimited { .. } | YnabError::BudgetSpent { .. } => "RateLimited",
            YnabError::Paced { .. } => "Paced",
            YnabError::Server { .. }
            | YnabError::Unreachable { .. }
            | YnabError::OutcomeUnknown { .. } => "Unreachable",
            YnabError::Conflict { .. }
            | YnabError::BadRequest { .. }
            | YnabError::Decode { .. } => "RequestFailed",
            YnabError::Withdrawn { .. } => "Withdrawn",
            YnabError::NotLeader { .. } => "NotLeader",
            YnabError::Uncounted { .. } => "Uncounted",
        }
    }

    /// Whether YNAB refused what the request carried (a record it found invalid, missing or in
    /// conflict), not the token or the moment: sending the same content again fails the same
    /// way, and in a bulk update one bad record refuses them all.
    pub fn refuses_content(&self) -> bool {
        matches!(
            self,
            YnabError::NotFound { .. } | YnabError::Conflict { .. } | YnabError::BadRequest { .. }
        )
    }

    /// When the request may go out, if it was held back for its turn (YNAB's 429, the hour's
    /// budget spent, or the pacing) rather than failed.
    pub fn held_until(&self) -> Option<Timestamp> {
        match self {
            YnabError::RateLimited { until }
            | YnabError::BudgetSpent { until, .. }
            | YnabError::Paced { until, .. } => Some(*until),
            _ => None,
        }
    }

    /// Whether trying again later may succeed without anyone changing anything.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            YnabError::RateLimited { .. }
                | YnabError::BudgetSpent { .. }
                | YnabError::Paced { .. }
                | YnabError::Server { .. }
                | YnabError::Unreachable { .. }
                | YnabError::OutcomeUnknown { .. }
                | YnabError::NotLeader { .. }
                | YnabError::Uncounted { .. }
        )
    }
}
