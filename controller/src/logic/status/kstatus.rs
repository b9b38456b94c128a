//! The kstatus conditions (`Reconciling`, `Stalled`) that GitOps tools read to tell whether an
//! object is done, still being worked on, or stuck until a person acts: Flux's and Argo CD's
//! health checks, kpt and Config Sync all compute it with sigs.k8s.io/cli-utils' kstatus. Each
//! kind's table below says which of its states is which; `Ready` stays the summary.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

use crate::api::agent_job::JobPhase;
use crate::api::approval::ApprovalPhase;
use crate::api::config_repo::RepoPhase;
use crate::api::plan::PlanPhase;
use crate::api::transaction::TransactionPhase;
use crate::logic::status::conditions::{self, Observed, READY};

/// True while ledgerops works on the object, or waits for something that comes on its own
/// (YNAB answering again, a person asked on an ApprovalRequest that expires).
pub const RECONCILING: &str = "Reconciling";
/// True while the object cannot get anywhere until a person acts or its spec, token or
/// repository is fixed.
pub const STALLED: &str = "Stalled";

/// What kstatus should conclude about an object (its Current, InProgress and Failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    /// Done: `Ready` is True and nothing is under way.
    Current,
    /// Work is under way, or a wait that ends on its own.
    InProgress,
    /// Stuck until a person or a fix.
    Failed,
}

/// Sets `Reconciling` or `Stalled` (present only while True, like the other abnormal-true
/// conditions) from `health`, quoting the reason and message of `Ready`, which the caller has
/// just set. `Stalled` also links the row of the README's troubleshooting table that says what
/// to do about `kind`'s reason ([`troubleshooting`]).
pub fn summarize(
    current: &[Condition],
    kind: &str,
    health: Health,
    generation: Option<i64>,
    now: Timestamp,
) -> Vec<Condition> {
    let (on, off) = match health {
        Health::Current => {
            let c = conditions::remove(current, RECONCILING);
            return conditions::remove(&c, STALLED);
        }
        Health::InProgress => (RECONCILING, STALLED),
        Health::Failed => (STALLED, RECONCILING),
    };
    let (reason, message) = conditions::get(current, READY).map_or_else(
        || ("Progressing".to_owned(), String::new()),
        |c| (c.reason.clone(), c.message.clone()),
    );
    let message = match health {
        Health::Failed => with_link(&message, &troubleshooting(kind, &reason)),
        _ => message,
    };
    let c = conditions::remove(current, off);
    conditions::set(
        &c,
        Observed::new(on, true, reason, message),
        generation,
        now,
    )
}

/// The README that ships with this version, where the troubleshooting table is.
pub const README: &str = "https://github.com/ledgerops/ledgerops/blob/main/README.md";

/// The address of the troubleshooting table's row for `kind`'s `Ready` reason `reason`: each
/// row a stalled object can point at carries the anchor `stalled-<kind>-<reason>`, lower case.
pub fn troubleshooting(kind: &str, reason: &str) -> String {
    format!("{README}#{}", anchor(kind, reason))
}

/// The anchor of the troubleshooting row for `kind` and `reason`.
pub fn anchor(kind: &str, reason: &str) -> String {
    format!("stalled-{kind}-{reason}").to_ascii_lowercase()
}

/// `message`, then where to read what to do.
fn with_link(message: &str, link: &str) -> String {
    let message = message.trim_end();
    if message.is_empty() {
        format!("What to do: {link}")
    } else {
        format!("{message} (what to do: {link})")
    }
}

/// A Budget, by the reason of its `Ready`.
pub fn budget(reason: &str) -> Health {
    match reason {
        "Synced" => Health::Current,
        // YNAB will answer again, the hourly request budget refills, or a sync called back
        // (Withdrawn) is made again.
        "RateLimited" | "Paced" | "Unreachable" | "Withdrawn" => Health::InProgress,
        // Suspended, Unauthorized, TokenMissing, TokenNotOptedIn, TokenNamespaceNotAllowed,
        // TokenNotGranted, ApiUrlNotAllowed, NotFound, InvalidSpec, RequestFailed (YNAB refuses
        // what we send): each needs someone to change the spec, the token, the allowlist or
        // ledgerops.
        _ => Health::Failed,
    }
}

/// A Transaction, by its phase.
pub fn transaction(phase: TransactionPhase) -> Health {
    match phase {
        TransactionPhase::Converged => Health::Current,
        // An approval waits for a person who was asked, and expires on its own.
        TransactionPhase::Pending
        | TransactionPhase::Writing
        | TransactionPhase::Interrupted
        | TransactionPhase::AwaitingApproval => Health::InProgress,
        TransactionPhase::WouldWrite
        | TransactionPhase::Diverged
        | TransactionPhase::Blocked
        | TransactionPhase::Invalid => Health::Failed,
    }
}

/// A CategorizationPlan, by its phase.
pub fn plan(phase: PlanPhase) -> Health {
    match phase {
        PlanPhase::Applied | PlanPhase::NothingToDo => Health::Current,
        PlanPhase::Pending | PlanPhase::AwaitingApproval | PlanPhase::Applying => {
            Health::InProgress
        }
        PlanPhase::Invalid
        | PlanPhase::ReadOnly
        | PlanPhase::PartiallyApplied
        | PlanPhase::Rejected
        | PlanPhase::Expired
        | PlanPhase::Blocked
        | PlanPhase::Failed => Health::Failed,
    }
}

/// An ApprovalRequest, by its phase: done once settled, whichever way (its `Ready` says so);
/// what the subject made of it is the subject's status.
pub fn approval(phase: ApprovalPhase) -> Health {
    match phase {
        ApprovalPhase::Pending => Health::InProgress,
        ApprovalPhase::Approved
        | ApprovalPhase::Rejected
        | ApprovalPhase::Expired
        | ApprovalPhase::Stale
        | ApprovalPhase::Applied
        | ApprovalPhase::Ignored => Health::Current,
    }
}

/// An AgentJob, by its phase.
pub fn job(phase: JobPhase) -> Health {
    match phase {
        JobPhase::Succeeded => Health::Current,
        JobPhase::Received | JobPhase::Queued | JobPhase::Running => Health::InProgress,
        JobPhase::Rejected | JobPhase::Failed => Health::Failed,
    }
}

/// A CategorizationRule: it acts (`Ready`) or waits for a person's blessing, or for the admission
/// policy or the authority it lacks.
pub fn rule(ready: bool) -> Health {
    if ready {
        Health::Current
    } else {
        Health::Failed
    }
}

/// A ConfigRepo, by its phase and the reason of its `Ready`.
pub fn config_repo(phase: RepoPhase, reason: &str) -> Health {
    match phase {
        RepoPhase::Ready => Health::Current,
        RepoPhase::Pending => Health::InProgress,
        // The network, the cache or Gitea's answer on who wrote the revision; the next interval
        // tries again. Credentials, URL policy, a missing branch or path, an invalid repository
        // or too many commits to attribute need a fix.
        RepoPhase::FetchFailed
            if matches!(reason, "Unreachable" | "FetchFailed" | "AuthorsUnknown") =>
        {
            Health::InProgress
        }
        // Applied in part after the dry run passed: the next sync applies the rest.
        RepoPhase::ApplyFailed if reason == "ApplyFailed" => Health::InProgress,
        RepoPhase::FetchFailed
        | RepoPhase::ApplyFailed
        | RepoPhase::PruneHeld
        | RepoPhase::RewriteHeld
        | RepoPhase::Suspended => Health::Failed,
    }
}

#[cfg(test)]
#[path = "kstatus_tests.rs"]
mod tests;
