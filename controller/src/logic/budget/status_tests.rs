//! Unit tests of `logic/budget/status.rs`.

use super::*;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

fn requests(used: u32, until: Option<Timestamp>) -> RequestUse {
    RequestUse {
        used_last_hour: used,
        limit_per_hour: 180,
        rate_limited_until: until.map(Time),
        reserved_per_hour: 45,
        by_priority: None,
        next_paced_at: None,
        for_this_budget: None,
    }
}

fn mirror() -> Mirror {
    Mirror {
        server_knowledge: 42,
        plan_name: "Household".into(),
        ..Mirror::default()
    }
}

/// The status after generation 1's first sync, at 0 s, of one request.
fn first_sync(m: &Mirror) -> BudgetStatus {
    next(
        &BudgetStatus::default(),
        &SyncReport {
            outcome: SyncOutcome::Synced,
            generation: Some(1),
            mirror: Some(m),
            requests: requests(1, None),
            now: at(0),
        },
    )
}

#[test]
fn a_sync_makes_it_ready_and_announces_it_once() {
    let m = mirror();
    let report = SyncReport {
        outcome: SyncOutcome::Synced,
        generation: Some(3),
        mirror: Some(&m),
        requests: requests(1, None),
        now: at(0),
    };
    let first = next(&BudgetStatus::default(), &report);
    assert_eq!(first.phase, Some(BudgetPhase::Ready));
    assert_eq!(first.server_knowledge, Some(42));
    assert_eq!(first.last_sync_time, Some(Time(at(0))));
    assert_eq!(first.observed_generation, Some(3));
    let ready = conditions::get(&first.conditions, READY).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Synced")
    );
    assert!(ready.message.contains("server knowledge 42"));
    let note = announcement(&BudgetStatus::default(), &first).unwrap();
    assert!(!note.warning);
    let again = next(
        &first,
        &SyncReport {
            now: at(300),
            ..report
        },
    );
    assert_eq!(announcement(&first, &again), None);
    assert_eq!(again.last_sync_time, Some(Time(at(300))));
}

#[test]
fn a_failure_keeps_what_was_known_and_warns() {
    let m = mirror();
    let ok = first_sync(&m);
    let outcome = SyncOutcome::Failed {
        reason: "Unauthorized",
        message: "YNAB refused the token".into(),
    };
    let failed = next(
        &ok,
        &SyncReport {
            outcome,
            generation: Some(1),
            mirror: None,
            requests: requests(2, None),
            now: at(60),
        },
    );
    assert_eq!(failed.phase, Some(BudgetPhase::Unauthorized));
    assert_eq!(failed.last_sync_time, Some(Time(at(0))));
    assert_eq!(failed.server_knowledge, Some(42));
    assert_eq!(failed.plan_name.as_deref(), Some("Household"));
    let note = announcement(&ok, &failed).unwrap();
    assert!(note.warning);
    assert_eq!(note.reason, "Unauthorized");
}

#[test]
fn a_failure_message_is_one_short_line() {
    let cases = [
        ("HTTP 500".to_owned(), "HTTP 500".to_owned()),
        ("a\nb\u{1b}[2Jc".to_owned(), "ab[2Jc".to_owned()),
        (
            "x".repeat(MAX_MESSAGE + 100),
            format!("{}…", "x".repeat(MAX_MESSAGE - 1)),
        ),
    ];
    for (message, shown) in cases {
        let outcome = SyncOutcome::Failed {
            reason: "Unreachable",
            message,
        };
        let status = next(
            &BudgetStatus::default(),
            &SyncReport {
                outcome,
                generation: Some(1),
                mirror: None,
                requests: requests(0, None),
                now: at(0),
            },
        );
        let ready = conditions::get(&status.conditions, READY).unwrap();
        assert_eq!(ready.message, shown);
    }
}

#[test]
fn rate_limiting_is_a_condition_of_its_own() {
    let outcome = SyncOutcome::Failed {
        reason: "RateLimited",
        message: "waiting".into(),
    };
    let limited = next(
        &BudgetStatus::default(),
        &SyncReport {
            outcome,
            generation: Some(1),
            mirror: None,
            requests: requests(200, Some(at(60))),
            now: at(0),
        },
    );
    assert_eq!(limited.phase, Some(BudgetPhase::RateLimited));
    assert_eq!(
        conditions::get(&limited.conditions, RATE_LIMITED)
            .unwrap()
            .status,
        "True"
    );
    let m = mirror();
    let recovered = next(
        &limited,
        &SyncReport {
            outcome: SyncOutcome::Synced,
            generation: Some(1),
            mirror: Some(&m),
            requests: requests(1, None),
            now: at(90),
        },
    );
    assert!(conditions::get(&recovered.conditions, RATE_LIMITED).is_none());
}

#[test]
fn every_failure_reason_has_a_phase() {
    let cases = [
        ("Unauthorized", BudgetPhase::Unauthorized),
        ("TokenMissing", BudgetPhase::Unauthorized),
        ("TokenNotOptedIn", BudgetPhase::Unauthorized),
        ("ApiUrlNotAllowed", BudgetPhase::Unauthorized),
        ("NotFound", BudgetPhase::NotFound),
        ("RateLimited", BudgetPhase::RateLimited),
        ("Unreachable", BudgetPhase::Unreachable),
        ("RequestFailed", BudgetPhase::Unreachable),
    ];
    for (reason, phase) in cases {
        assert_eq!(phase_of(reason), phase, "{reason}");
    }
    let suspended = next(
        &BudgetStatus::default(),
        &SyncReport {
            outcome: SyncOutcome::Suspended,
            generation: Some(1),
            mirror: None,
            requests: requests(0, None),
            now: at(0),
        },
    );
    assert_eq!(suspended.phase, Some(BudgetPhase::Suspended));
}

/// A sync that waits for its turn keeps a Ready mirror Ready (no Event), but a generation's
/// first sync that waits says so, as progress rather than a failure.
#[test]
fn a_paced_sync_keeps_a_ready_mirror_ready() {
    let m = mirror();
    let synced = first_sync(&m);
    let paced = |generation| SyncReport {
        outcome: SyncOutcome::Paced {
            message: "the sync waits until later".into(),
        },
        generation: Some(generation),
        mirror: Some(&m),
        requests: requests(2, None),
        now: at(60),
    };
    let same = next(&synced, &paced(1));
    assert_eq!(same.phase, Some(BudgetPhase::Ready));
    assert_eq!(same.conditions, synced.conditions);
    assert_eq!(same.last_sync_time, synced.last_sync_time);
    assert_eq!(announcement(&synced, &same), None);

    let edited = next(&synced, &paced(2));
    assert_eq!(edited.phase, Some(BudgetPhase::RateLimited));
    let ready = conditions::get(&edited.conditions, READY).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", PACED)
    );
    let said = announcement(&synced, &edited).unwrap();
    assert!(!said.warning, "waiting for a turn needs nobody");
}

#[test]
fn a_waiting_sync_says_when_and_what_a_person_may_do() {
    let limits = Limits {
        per_hour: 200,
        reserved_percent: 25,
    };
    let paced = sync_paced(at(600), limits);
    assert!(paced.contains(&at(600).to_string()), "{paced}");
    assert!(paced.contains("50 of the token's 200"), "{paced}");
    assert!(paced.contains("kubectl ledgerops sync"), "{paced}");
    // The same note every time: one Event, counted, however often an editor annotates.
    let held = asked_too_often(200);
    assert_eq!(held, asked_too_often(200));
    assert!(
        held.starts_with("3 syncs were asked for in the last 10 minutes"),
        "{held}"
    );
    assert!(
        held.ends_with("one of the token's 200 requests per hour"),
        "{held}"
    );
}
