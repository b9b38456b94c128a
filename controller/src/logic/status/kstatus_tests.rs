//! Unit tests of `logic/status/kstatus.rs`.

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
        "Budget",
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
    let c = summarize(&c, "Budget", Health::Failed, Some(3), at(2));
    assert_eq!(
        types(&c),
        [
            ("Ready", "False", "Unreachable"),
            ("Stalled", "True", "Unreachable")
        ]
    );
    assert_eq!(
        c[1].message,
        "what it says (what to do: https://github.com/ledgerops/ledgerops/blob/main/README.md#stalled-budget-unreachable)",
        "a stalled object links the row that says what to do"
    );
    let ready = conditions::set(
        &c,
        Observed::new(READY, true, "Synced", "ok"),
        Some(3),
        at(3),
    );
    let c = summarize(&ready, "Budget", Health::Current, Some(3), at(3));
    assert_eq!(types(&c), [("Ready", "True", "Synced")]);
}

#[test]
fn without_ready_it_says_progressing() {
    let c = summarize(&[], "Budget", Health::InProgress, Some(1), at(0));
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
        (P::FetchFailed, "AuthorsUnknown", Health::InProgress),
        (P::FetchFailed, "TooManyCommits", Health::Failed),
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

#[test]
fn the_troubleshooting_anchor_is_the_kind_and_reason_in_lower_case() {
    for (kind, reason, want) in [
        ("Budget", "Unauthorized", "stalled-budget-unauthorized"),
        (
            "CategorizationPlan",
            "GuardedTransaction",
            "stalled-categorizationplan-guardedtransaction",
        ),
        (
            "AgentJob",
            "PermissionDenied",
            "stalled-agentjob-permissiondenied",
        ),
    ] {
        assert_eq!(anchor(kind, reason), want);
        assert_eq!(troubleshooting(kind, reason), format!("{README}#{want}"));
    }
}

#[test]
fn a_stalled_object_without_a_message_still_gets_its_link() {
    let c = summarize(
        &conditions::set(&[], Observed::new(READY, false, "Invalid", ""), None, at(0)),
        "CategorizationRule",
        Health::Failed,
        None,
        at(0),
    );
    assert_eq!(
        c[1].message,
        format!("What to do: {README}#stalled-categorizationrule-invalid")
    );
}
