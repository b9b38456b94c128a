//! Unit tests of `soak/pace.rs`.

use std::collections::BTreeMap;

use serde_json::json;
use ynab_sim::{By, Entry, Event, Record, Touch};

use super::*;
use crate::soak::history::{Intent, Settled};

const TOKEN: &str = "controller-token";
const S: u64 = 1000;

fn request(at_ms: u64) -> Event {
    Event::Request {
        endpoint: "GET /v1/plans/{plan_id}".into(),
        token: TOKEN.into(),
        status: "200".into(),
        came_ms: at_ms,
        knowledge: Some(1),
    }
}

fn write(id: &str) -> Event {
    let record = |category: &str| Record {
        summary: serde_json::from_value(json!({
            "id": id, "date": "2026-09-01", "amount": -5000, "cleared": "cleared",
            "approved": true, "account_id": "acc", "category_id": category, "deleted": false,
        }))
        .unwrap(),
        splits: Vec::new(),
    };
    Event::Change {
        by: By::Api,
        plan_id: "plan".into(),
        knowledge: 2,
        touched: vec![Touch {
            before: Some(record("old")),
            after: record("groceries"),
        }],
    }
}

/// A history of `events` at their times, a Transaction proposed at 10 s for tx-1, and how it
/// ended (`phase`).
fn history(events: Vec<(u64, Event)>, phase: &str) -> History {
    History {
        journal: events
            .into_iter()
            .enumerate()
            .map(|(i, (at_ms, event))| Entry {
                seq: i as u64 + 1,
                at_ms,
                event,
            })
            .collect(),
        token: TOKEN.into(),
        intents: vec![Intent {
            subject: "Transaction/t".into(),
            proposer: "proposer".into(),
            at_ms: 10 * S,
            targets: BTreeMap::from([("tx-1".to_string(), "groceries".to_string())]),
            undo_of: None,
        }],
        settled: vec![Settled {
            subject: "Transaction/t".into(),
            phase: Some(phase.into()),
            at_rest: false,
            ready: None,
        }],
        ..History::default()
    }
}

#[test]
fn requests_are_counted_per_five_minutes_from_the_first() {
    let h = history(
        vec![
            (0, request(0)),
            (S, request(S)),
            (301 * S, request(301 * S)),
            (900 * S, request(900 * S)),
        ],
        "Converged",
    );
    assert_eq!(spans(&h), [2, 1, 0, 1]);
    assert_eq!(spans(&History::default()), Vec::<u64>::new());
}

#[test]
fn transactions_written_are_counted_once_each() {
    let h = history(
        vec![
            (S, write("tx-1")),
            (2 * S, write("tx-1")),
            (3 * S, write("tx-2")),
        ],
        "Converged",
    );
    assert_eq!(written(&h), 2);
}

#[test]
fn a_quiet_span_is_a_violation_only_while_a_proposal_waits_on_the_controller() {
    // (what happened after the first request at 0, how the proposal ended) → violations
    type Case = (&'static str, Vec<(u64, Event)>, &'static str, usize);
    let cases: [Case; 5] = [
        (
            "written at 700 s: it waited through the quiet span from 300 s",
            vec![
                (700 * S, request(700 * S)),
                (701 * S, write("tx-1")),
                (901 * S, request(901 * S)),
            ],
            "Converged",
            1,
        ),
        (
            "written at 100 s: nothing waited in the quiet span",
            vec![
                (100 * S, request(100 * S)),
                (101 * S, write("tx-1")),
                (901 * S, request(901 * S)),
            ],
            "Converged",
            0,
        ),
        (
            "never written, left Pending: it waited through both quiet spans",
            vec![(901 * S, request(901 * S))],
            "Pending",
            2,
        ),
        (
            "never written, waiting on a person: nobody's request was due",
            vec![(901 * S, request(901 * S))],
            "AwaitingApproval",
            0,
        ),
        (
            "a request in every span",
            vec![
                (350 * S, request(350 * S)),
                (650 * S, request(650 * S)),
                (901 * S, request(901 * S)),
            ],
            "Pending",
            0,
        ),
    ];
    for (what, events, phase, want) in cases {
        let mut all = vec![(0, request(0))];
        all.extend(events);
        let found = silent_while_waiting(&history(all, phase));
        assert_eq!(found.len(), want, "{what}: {found:?}");
        assert!(
            found
                .iter()
                .all(|v| v.rule == SILENT && v.about == "Transaction/t")
        );
    }
}
