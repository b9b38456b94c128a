use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher;

use super::*;
use crate::logic::transaction::step::fixtures::{category, seen};
use crate::ynab::error::YnabError;

fn transaction(name: &str, uid: &str) -> Transaction {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
        "metadata": {"name": name, "namespace": "n", "uid": uid},
        "spec": {"budgetRef": {"name": "b"}, "transactionId": "tx-048", "memo": "m"}
    }))
    .unwrap()
}

fn write() -> Write {
    let now = Timestamp::from_second(1_000).unwrap();
    Write {
        grant: Grant::by_policy("small", "hash", "attempt-1".into(), now),
        seen: seen(category("dining"), category("groceries")),
        generation: Some(3),
    }
}

/// A registry on an empty cache, and the cache's writer.
fn in_flight() -> (Arc<WritesInFlight>, reflector::store::Writer<Transaction>) {
    let (store, writer) = reflector::store();
    (Arc::new(WritesInFlight::new(store)), writer)
}

fn start(writes: &Arc<WritesInFlight>, name: &str) -> Reply {
    let tx = transaction(name, &format!("uid-{name}"));
    writes.start(&format!("uid-{name}"), ObjectRef::from_obj(&tx), write())
}

#[test]
fn a_write_is_in_flight_until_its_answer_lands_and_then_wakes_its_transaction() {
    let (writes, _) = in_flight();
    let mut woken = writes.woken().unwrap();
    let reply = start(&writes, "a");
    assert!(writes.landed("uid-a").is_none());
    assert!(woken.try_recv().is_err(), "nothing landed yet");

    reply.send(Ok(vec![Outcome::Written]));
    let landed = writes.landed("uid-a").unwrap();
    assert_eq!(landed.outcome, Outcome::Written);
    assert_eq!(landed.write.generation, Some(3));
    assert_eq!(landed.write.grant.attempt_id, "attempt-1");
    assert!(!landed.look_again, "nothing woke it meanwhile");
    assert_eq!(woken.try_recv().unwrap().name, "a");
    assert!(writes.woken().is_none(), "the stream is taken once");
}

#[test]
fn what_woke_a_transaction_while_its_write_was_in_flight_is_looked_at_afterwards() {
    let (writes, _) = in_flight();
    let reply = start(&writes, "a");
    assert!(writes.defer("uid-a"), "in flight: deferred");
    reply.send(Ok(vec![Outcome::Written]));
    assert!(writes.landed("uid-a").unwrap().look_again);
    assert!(!writes.defer("uid-a"), "landed: recorded, not deferred");
}

#[test]
fn an_answer_that_never_comes_lands_as_not_landed() {
    let (writes, _) = in_flight();
    drop(start(&writes, "a"));
    let landed = writes.landed("uid-a").unwrap();
    assert!(
        matches!(&landed.outcome, Outcome::NotLanded(why) if why.contains("shutting down")),
        "{:?}",
        landed.outcome
    );
}

#[test]
fn a_batch_error_lands_as_not_landed_with_its_words() {
    let (writes, _) = in_flight();
    let error = YnabError::Unreachable {
        what: "YNAB".into(),
        reason: "connection refused".into(),
    };
    start(&writes, "a").send(Err(error));
    let outcome = writes.landed("uid-a").unwrap().outcome;
    assert!(matches!(&outcome, Outcome::NotLanded(why) if why.contains("connection refused")));
}

#[test]
fn only_a_landed_write_is_forgotten_once_recorded() {
    let (writes, _) = in_flight();
    let reply = start(&writes, "a");
    writes.recorded("uid-a");
    assert!(writes.defer("uid-a"), "still in flight: kept");
    reply.send(Ok(vec![Outcome::Written]));
    writes.recorded("uid-a");
    assert!(writes.landed("uid-a").is_none());
    assert!(!writes.defer("uid-a"));
}

#[test]
fn outcomes_of_deleted_transactions_are_swept() {
    let (writes, mut cache) = in_flight();
    let kept = transaction("kept", "uid-kept");
    cache.apply_watcher_event(&watcher::Event::Apply(kept.clone()));
    // Same name, another object: the outcome of the one deleted is not its.
    let recreated = transaction("recreated", "uid-new");
    cache.apply_watcher_event(&watcher::Event::Apply(recreated));
    start(&writes, "kept").send(Ok(vec![Outcome::Written]));
    let old = writes.start(
        "uid-old",
        ObjectRef::from_obj(&transaction("recreated", "uid-old")),
        write(),
    );
    old.send(Ok(vec![Outcome::Written]));
    let pending = start(&writes, "pending");
    for i in 0..SWEEP_EVERY {
        start(&writes, &format!("gone-{i}")).send(Ok(vec![Outcome::Written]));
    }
    assert!(writes.landed("uid-kept").is_some());
    assert!(writes.landed("uid-old").is_none());
    assert!(writes.landed("uid-gone-0").is_none());
    assert!(writes.defer("uid-pending"), "in flight: never swept");
    drop(pending);
}
