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
/// just set.
pub fn summarize(
    current: &[Condition],
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
    let c = conditions::remove(current, off);
    conditions::set(
        &c,
        Observed::new(on, true, reason, message),
        generation,
        now,
    )
}

/// A Budget, by the reason of its `Ready`.
pub fn budget(reason: &str) -> Health {
    match reason {
        "Synced" => Health::Current,
        // YNAB will answer again, the hourly request budget refills, or a sync called back
        // (Withdrawn) is made again.
        "RateLimited" | "Unreachable" | "Withdrawn" => Health::InProgress,
        // Suspended, Unauthorized, TokenMissing, TokenNotOptedIn, TokenNamespaceNotAllowed,
        // ApiUrlNotAllowed, NotFound, InvalidSpec, RequestFailed (YNAB refuses what we send):
        // each needs someone to change the spec, the token, the allowlist or ledgerops.
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
        // The network or the cache; the next interval tries again. Credentials, URL policy,
        // a missing branch or path, or an invalid repository need a fix.
        RepoPhase::FetchFailed if matches!(reason, "Unreachable" | "FetchFailed") => {
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
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_790_000_000 + secs).unwrap()
    }

    fn with_ready(status: bool, reason: &'static str) -> Vec<Condition> {
        conditions::set(
            &[],
            Observed::new(READY, status, reason, "what it says"),
            Some(3),
            at(0),
        )
    }

    fn types(c: &[Condition]) -> Vec<(&str, &str, &str)> {
        c.iter()
            .map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_str()))
            .collect()
    }

    #[test]
    fn each_health_sets_exactly_its_condition_quoting_ready() {
        let c = summarize(
            &with_ready(false, "Unreachable"),
            Health::InProgress,
            Some(3),
            at(1),
        );
        assert_eq!(
            types(&c),
            [
                ("Ready", "False", "Unreachable"),
                ("Reconciling", "True", "Unreachable")
            ]
        );
        assert_eq!(c[1].message, "what it says");
        assert_eq!(c[1].observed_generation, Some(3));
        let c = summarize(&c, Health::Failed, Some(3), at(2));
        assert_eq!(
            types(&c),
            [
                ("Ready", "False", "Unreachable"),
                ("Stalled", "True", "Unreachable")
            ]
        );
        let ready = conditions::set(
            &c,
            Observed::new(READY, true, "Synced", "ok"),
            Some(3),
            at(3),
        );
        let c = summarize(&ready, Health::Current, Some(3), at(3));
        assert_eq!(types(&c), [("Ready", "True", "Synced")]);
    }

    #[test]
    fn without_ready_it_says_progressing() {
        let c = summarize(&[], Health::InProgress, Some(1), at(0));
        assert_eq!(types(&c), [("Reconciling", "True", "Progressing")]);
    }

    #[test]
    fn budget_reasons() {
        for (reason, want) in [
            ("Synced", Health::Current),
            ("RateLimited", Health::InProgress),
            ("Unreachable", Health::InProgress),
            ("Withdrawn", Health::InProgress),
            ("RequestFailed", Health::Failed),
            ("TokenNamespaceNotAllowed", Health::Failed),
            ("Suspended", Health::Failed),
            ("Unauthorized", Health::Failed),
            ("TokenMissing", Health::Failed),
            ("TokenNotOptedIn", Health::Failed),
            ("ApiUrlNotAllowed", Health::Failed),
            ("NotFound", Health::Failed),
            ("InvalidSpec", Health::Failed),
        ] {
            assert_eq!(budget(reason), want, "{reason}");
        }
    }

    #[test]
    fn transaction_phases() {
        use TransactionPhase as P;
        for (phase, want) in [
            (P::Converged, Health::Current),
            (P::Pending, Health::InProgress),
            (P::Writing, Health::InProgress),
            (P::Interrupted, Health::InProgress),
            (P::AwaitingApproval, Health::InProgress),
            (P::WouldWrite, Health::Failed),
            (P::Diverged, Health::Failed),
            (P::Blocked, Health::Failed),
            (P::Invalid, Health::Failed),
        ] {
            assert_eq!(transaction(phase), want, "{phase:?}");
        }
    }

    #[test]
    fn plan_phases() {
        use PlanPhase as P;
        for (phase, want) in [
            (P::Applied, Health::Current),
            (P::NothingToDo, Health::Current),
            (P::Pending, Health::InProgress),
            (P::AwaitingApproval, Health::InProgress),
            (P::Applying, Health::InProgress),
            (P::Invalid, Health::Failed),
            (P::ReadOnly, Health::Failed),
            (P::PartiallyApplied, Health::Failed),
            (P::Rejected, Health::Failed),
            (P::Expired, Health::Failed),
            (P::Blocked, Health::Failed),
            (P::Failed, Health::Failed),
        ] {
            assert_eq!(plan(phase), want, "{phase:?}");
        }
    }

    #[test]
    fn approval_and_job_phases() {
        use ApprovalPhase as A;
        for (phase, want) in [
            (A::Pending, Health::InProgress),
            (A::Approved, Health::Current),
            (A::Rejected, Health::Current),
            (A::Expired, Health::Current),
            (A::Stale, Health::Current),
            (A::Applied, Health::Current),
            (A::Ignored, Health::Current),
        ] {
            assert_eq!(approval(phase), want, "{phase:?}");
        }
        use JobPhase as J;
        for (phase, want) in [
            (J::Succeeded, Health::Current),
            (J::Received, Health::InProgress),
            (J::Queued, Health::InProgress),
            (J::Running, Health::InProgress),
            (J::Rejected, Health::Failed),
            (J::Failed, Health::Failed),
        ] {
            assert_eq!(job(phase), want, "{phase:?}");
        }
        assert_eq!(rule(true), Health::Current);
        assert_eq!(rule(false), Health::Failed);
    }

    #[test]
    fn config_repo_phases() {
        use RepoPhase as P;
        for (phase, reason, want) in [
            (P::Ready, "Applied", Health::Current),
            (P::Pending, "Pending", Health::InProgress),
            (P::FetchFailed, "Unreachable", Health::InProgress),
            (P::FetchFailed, "FetchFailed", Health::InProgress),
            (P::FetchFailed, "AuthenticationFailed", Health::Failed),
            (P::FetchFailed, "CredentialsNotForUrl", Health::Failed),
            (P::FetchFailed, "UrlNotAllowed", Health::Failed),
            (P::FetchFailed, "BranchNotFound", Health::Failed),
            (P::FetchFailed, "InvalidRepository", Health::Failed),
            (P::ApplyFailed, "Conflict", Health::Failed),
            (P::ApplyFailed, "InvalidDocument", Health::Failed),
            (P::ApplyFailed, "ApplyFailed", Health::InProgress),
            (P::PruneHeld, "PruneGuard", Health::Failed),
            (P::RewriteHeld, "HistoryRewritten", Health::Failed),
            (P::Suspended, "Suspended", Health::Failed),
        ] {
            assert_eq!(config_repo(phase, reason), want, "{phase:?} {reason}");
        }
    }
}
