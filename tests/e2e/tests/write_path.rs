//! The write path with `ledgerops run`, a real API server and the YNAB simulator: guards found
//! at validation cost nothing more, a record YNAB refuses holds back no other and is not sent
//! again, plans larger than a request go out in journaled chunks (and stop partly applied when
//! YNAB refuses one), any plan name works, and an applied plan edited later is applied anew.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ListParams, Patch, PatchParams};
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::k8s::journal;
use ledgerops::logic::status::conditions;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{PATCH, Scenario, WAIT, category, demo_with_uncategorised, load_id};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::{Value, json};
use ynab_sim::{RequestMatch, StatusFault, demo};

async fn scenario(prefix: &str, extra: usize) -> Scenario {
    let s = Scenario::new(
        ControlPlane::shared(),
        prefix,
        demo_with_uncategorised(extra),
    )
    .await;
    Ledgerops::shared().await;
    s
}

/// A scenario whose Budget writes without asking, with `writes` merged in, synced and ready.
async fn writing(prefix: &str, extra: usize, writes: Value) -> Scenario {
    let s = scenario(prefix, extra).await;
    s.create_writing_budget("household", json!({"writes": writes}))
        .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s
}

fn condition(plan: &CategorizationPlan, type_: &str) -> (String, String, String) {
    let c = conditions::get(&plan.status.as_ref().unwrap().conditions, type_)
        .unwrap_or_else(|| panic!("no {type_} condition"));
    (c.status.clone(), c.reason.clone(), c.message.clone())
}

/// Refuse every bulk update that carries transaction `id` with `status`.
/// More refusals than any test needs: the fault stays for the whole test.
const REFUSALS: u32 = 1000;

async fn refuse_record(s: &Scenario, id: &str, status: u16) {
    let fault = StatusFault {
        status,
        count: REFUSALS,
        detail: Some(format!("injected: transaction {id} is refused")),
        only: RequestMatch {
            method: Some("PATCH".into()),
            path: None,
            body_contains: Some(id.into()),
        },
    };
    s.sim.control().inject_status(&fault).await.unwrap();
}

/// How many requests the [`refuse_record`] fault has refused so far.
async fn refused_sends(s: &Scenario) -> u32 {
    let faults = s.sim.control().faults().await.unwrap();
    faults.statuses.iter().map(|f| REFUSALS - f.count).sum()
}

async fn set_suspend(s: &Scenario, suspend: bool) {
    let patch = json!({"spec": {"suspend": suspend}});
    s.api::<Budget>()
        .patch("household", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

/// The journal ConfigMaps of the namespace, by name.
async fn journal_maps(s: &Scenario) -> Vec<ConfigMap> {
    let selector = format!("{}=true", journal::JOURNAL_LABEL);
    s.api::<ConfigMap>()
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap()
        .items
}

fn completion(maps: &[ConfigMap], operation: &str) -> Value {
    let name = journal::completion_name(operation);
    let map = maps
        .iter()
        .find(|m| m.metadata.name.as_deref() == Some(name.as_str()))
        .unwrap_or_else(|| panic!("no completion {name}"));
    serde_json::from_str(&map.data.as_ref().unwrap()["completion.json"]).unwrap()
}

fn assignments(range: std::ops::Range<usize>, to: &str) -> Value {
    let list: Vec<Value> = range
        .map(|i| json!({"transactionId": load_id(i), "categoryId": category(to)}))
        .collect();
    json!({"assignments": list})
}

#[tokio::test]
async fn a_guarded_plan_is_invalid_asks_nobody_and_costs_no_more_requests() {
    let s = scenario("guarded", 0).await;
    // Writes on, a person asked for everything, and no periodic sync within the test.
    let spec = |extra: Value| {
        let mut spec = json!({"writes": {"enabled": true}, "syncInterval": "10m"});
        spec.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        spec
    };
    s.create_budget("household", demo::TOKEN, spec(json!({})))
        .await;
    s.create_budget(
        "closed",
        demo::TOKEN,
        spec(json!({"closedThrough": "2026-09"})),
    )
    .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.wait_budget("closed", BudgetPhase::Ready).await;
    let groceries = category("Groceries");
    s.create_plan(
        "reconciled",
        "household",
        json!({"assignments": [
            {"transactionId": "tx-048", "categoryId": groceries},
            {"transactionId": "tx-062", "categoryId": groceries}
        ]}),
    )
    .await;
    s.create_plan(
        "closed-month",
        "closed",
        json!({"assignments": [{"transactionId": "tx-048", "categoryId": groceries}]}),
    )
    .await;
    for (plan, id, guard) in [
        ("reconciled", "tx-062", "reconciled"),
        ("closed-month", "tx-048", "2026-09"),
    ] {
        let invalid = s.wait_plan(plan, PlanPhase::Invalid).await;
        let (status, _, message) = condition(&invalid, "Valid");
        assert_eq!(status, "False", "{plan}");
        assert!(
            message.contains(id) && message.contains(guard),
            "{plan}: {message}"
        );
        assert!(
            !message.contains("tx-048") || plan == "closed-month",
            "{message}"
        );
    }
    assert!(s.approval_requests().await.is_empty(), "nobody is asked");

    // Left alone for a minute, the plans cost YNAB nothing more.
    let before = s.total_requests().await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let after = s.total_requests().await;
    assert_eq!(after - before, 0, "requests in the minute after validation");
    assert_eq!(s.writes().await, 0);
}

#[tokio::test]
async fn a_record_ynab_refuses_holds_back_no_other_and_is_not_sent_again() {
    for status in [400u16, 404, 409, 422] {
        let s = writing(&format!("refused{status}"), 6, json!({"batchWindow": "3s"})).await;
        refuse_record(&s, &load_id(3), status).await;
        // The six wait behind a suspended Budget and are released by one change, so they reach
        // the batcher together and go out as one batch however loaded the machine is.
        set_suspend(&s, true).await;
        s.wait_budget("household", BudgetPhase::Suspended).await;
        s.create_loads(6, "Groceries").await;
        s.wait_all(TransactionPhase::Blocked).await;
        assert_eq!(s.writes().await, 0, "{status}: written while suspended");
        set_suspend(&s, false).await;
        let refused = wait::until(&s.api::<Transaction>(), &load_id(3), WAIT, |t| {
            let blocked = t
                .status
                .as_ref()
                .and_then(|s| conditions::get(&s.conditions, "Blocked"));
            blocked.is_some_and(|c| c.status == "True" && c.reason != "Suspended")
        })
        .await;
        let c = conditions::get(&refused.status.as_ref().unwrap().conditions, "Blocked").unwrap();
        assert_eq!(c.reason, "RefusedByYnab", "{status}: {}", c.message);
        assert!(
            c.message.contains(&load_id(3)) && c.message.contains(&status.to_string()),
            "{status}: {}",
            c.message
        );
        for i in [0, 1, 2, 4, 5] {
            s.wait_transaction(&load_id(i), TransactionPhase::Converged)
                .await;
            assert_eq!(
                s.ynab_category(&load_id(i)).await,
                Some(category("Groceries"))
            );
        }
        // One batch of six, halved until the bad record stands alone: every refused request but
        // the last is split in two, one half refused again and the other written. Where the bad
        // record sits decides between 6 → 3 → 1 and 6 → 3 → 2 → 1, never more.
        let patches = s.requests(PATCH).await;
        let refused = u64::from(refused_sends(&s).await);
        assert!(
            refused <= 4,
            "{status}: the refused record went out {refused} times"
        );
        assert_eq!(
            patches,
            2 * refused - 1,
            "{status}: {patches} PATCH requests"
        );

        // Looked at again, the refused record is not sent again until its spec changes.
        s.annotate::<Transaction>(&load_id(3), "ledgerops.dev/nudge", "1")
            .await;
        let nudged = s
            .wait_transaction(&load_id(3), TransactionPhase::Blocked)
            .await;
        assert!(nudged.metadata.annotations.is_some());
        // Longer than a window, so a batch the nudge had started would have gone out.
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(s.requests(PATCH).await, patches, "{status}: sent again");
    }
}

#[tokio::test]
async fn a_plan_larger_than_a_batch_goes_out_in_journaled_chunks() {
    let s = writing("chunks", 12, json!({"maxBatchSize": 5})).await;
    s.create_plan("twelve", "household", assignments(0..12, "Transport"))
        .await;
    let applied = s.wait_plan("twelve", PlanPhase::Applied).await;
    let status = applied.status.unwrap();
    let progress = status.progress.unwrap();
    assert_eq!(
        (progress.written, progress.total, progress.chunks),
        (12, 12, 3)
    );
    assert_eq!(s.requests(PATCH).await, 3, "one bulk update per chunk");
    let operation = status.operation_id.unwrap();
    let maps = journal_maps(&s).await;
    for chunk in 0..3 {
        let name = format!("ledgerops-journal-{operation}-{chunk}");
        assert!(
            maps.iter()
                .any(|m| m.metadata.name.as_deref() == Some(name.as_str())),
            "{name}"
        );
    }
    let done = completion(&maps, &operation);
    assert_eq!(
        (&done["outcome"], &done["written"], &done["total"]),
        (&json!("Applied"), &json!(12), &json!(12))
    );

    // Every request made with the token counts against its hourly budget, the write path's
    // too: after a sync the Budget's count is the simulator's.
    s.annotate::<Budget>(
        "household",
        "ledgerops.dev/sync-requested-at",
        "after-write",
    )
    .await;
    let seen = ledgerops_e2e::wait::until(
        &s.api::<Budget>(),
        "household",
        Duration::from_secs(60),
        |b| {
            b.status
                .as_ref()
                .and_then(|s| s.requests.as_ref())
                // The first sync, one read before the chunks, three bulk updates, this sync.
                .is_some_and(|r| r.used_last_hour >= 6)
        },
    )
    .await;
    let used = seen.status.unwrap().requests.unwrap().used_last_hour;
    assert_eq!(u64::from(used), s.total_requests().await);
}

#[tokio::test]
async fn a_refused_chunk_leaves_the_plan_partly_applied_journaled_and_undoable() {
    let s = writing("partial", 12, json!({"maxBatchSize": 5})).await;
    // The second chunk (load-00005..09) carries the refused record.
    refuse_record(&s, &load_id(7), 422).await;
    s.create_plan("twelve", "household", assignments(0..12, "Transport"))
        .await;
    let partial = s.wait_plan("twelve", PlanPhase::PartiallyApplied).await;
    let (ready, reason, message) = condition(&partial, "Ready");
    assert_eq!(
        (ready.as_str(), reason.as_str()),
        ("False", "PartiallyApplied")
    );
    assert!(
        message.starts_with("5 of 12 changes are in YNAB") && message.contains("422"),
        "{message}"
    );
    assert_eq!(
        s.requests(PATCH).await,
        2,
        "the first chunk, then the refused one"
    );
    for i in 0..5 {
        assert_eq!(
            s.ynab_category(&load_id(i)).await,
            Some(category("Transport"))
        );
    }
    for i in 5..12 {
        assert_ne!(
            s.ynab_category(&load_id(i)).await,
            Some(category("Transport"))
        );
    }
    let status = partial.status.unwrap();
    let operation = status.operation_id.unwrap();
    let done = completion(&journal_maps(&s).await, &operation);
    assert_eq!(
        (&done["outcome"], &done["written"]),
        (&json!("PartiallyApplied"), &json!(5))
    );
    assert_eq!(done["notWritten"].as_array().unwrap().len(), 7);

    // The partial plan is settled: looking again writes nothing more.
    s.annotate::<CategorizationPlan>("twelve", "ledgerops.dev/nudge", "1")
        .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(s.requests(PATCH).await, 2);

    // What landed is undone; what never went out is left as it is.
    s.sim.control().clear_faults().await.unwrap();
    s.create_plan("undo-twelve", "household", json!({"undoOf": "twelve"}))
        .await;
    let undone = s.wait_plan("undo-twelve", PlanPhase::Applied).await;
    let preview = undone.status.unwrap().preview.unwrap();
    // The journal holds the whole operation, journaled before it went out: the records of the
    // refused chunk and of the one held back after it never moved.
    assert_eq!((preview.change_count, preview.unchanged_count), (5, 7));
    for i in 0..5 {
        assert_eq!(s.ynab_category(&load_id(i)).await, None, "{}", load_id(i));
    }
}

#[tokio::test]
async fn a_plan_named_with_seventy_characters_is_applied_journaled_and_undone() {
    let s = writing("longname", 2, json!({})).await;
    let name = format!("september-{}", "x".repeat(60));
    assert_eq!(name.len(), 70);
    s.create_plan(&name, "household", assignments(0..2, "Transport"))
        .await;
    let applied = s.wait_plan(&name, PlanPhase::Applied).await;
    let operation = applied.status.unwrap().operation_id.unwrap();
    completion(&journal_maps(&s).await, &operation);
    let undo = format!("undo-{name}");
    s.create_plan(&undo, "household", json!({"undoOf": name}))
        .await;
    s.wait_plan(&undo, PlanPhase::Applied).await;
    assert_eq!(s.ynab_category(&load_id(0)).await, None);
    assert_eq!(s.requests(PATCH).await, 2);
}

#[tokio::test]
async fn an_applied_plan_edited_later_is_previewed_and_applied_anew() {
    let s = writing("edited", 3, json!({})).await;
    s.create_plan("grow", "household", assignments(0..2, "Transport"))
        .await;
    let first = s.wait_plan("grow", PlanPhase::Applied).await;
    let first_op = first.status.unwrap().operation_id.unwrap();
    let patch = json!({"spec": assignments(0..3, "Transport")});
    s.api::<CategorizationPlan>()
        .patch("grow", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let again = ledgerops_e2e::wait::until(
        &s.api::<CategorizationPlan>(),
        "grow",
        Duration::from_secs(60),
        |p| {
            let st = p.status.as_ref();
            st.and_then(|s| s.phase) == Some(PlanPhase::Applied)
                && st.and_then(|s| s.operation_id.as_deref()) != Some(first_op.as_str())
        },
    )
    .await;
    let status = again.status.unwrap();
    let preview = status.preview.unwrap();
    assert_eq!((preview.change_count, preview.unchanged_count), (1, 2));
    assert_eq!(status.finished_generation, again.metadata.generation);
    assert_eq!(
        s.ynab_category(&load_id(2)).await,
        Some(category("Transport"))
    );
    assert_eq!(s.requests(PATCH).await, 2);
}

#[tokio::test]
async fn a_plan_of_five_thousand_assignments_is_asked_once_and_written_in_five_requests() {
    let n = 5000;
    let s = scenario("big", n).await;
    s.create_budget(
        "household",
        demo::TOKEN,
        json!({"writes": {"enabled": true, "maxBatchSize": 1000}, "syncInterval": "30m"}),
    )
    .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    let before = s.total_requests().await;
    s.create_plan("everything", "household", assignments(0..n, "Transport"))
        .await;
    let waiting = s.wait_plan("everything", PlanPhase::AwaitingApproval).await;
    let requests = s.approval_requests().await;
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.spec.change_count as usize, n);
    assert_eq!(request.spec.changes.len(), 100);
    let request_bytes = serde_json::to_vec(request).unwrap().len();
    let status_bytes = serde_json::to_vec(&waiting.status).unwrap().len();
    assert!(
        request_bytes < 64 * 1024,
        "ApprovalRequest: {request_bytes} bytes"
    );
    assert!(
        status_bytes < 64 * 1024,
        "plan status: {status_bytes} bytes"
    );

    let name = request.metadata.name.clone().unwrap();
    let decision = json!({"spec": {"decision": {"verdict": "Approve", "by": "admin"}}});
    s.api::<ledgerops::api::approval::ApprovalRequest>()
        .patch(&name, &PatchParams::default(), &Patch::Merge(&decision))
        .await
        .unwrap();
    let approved_at = std::time::Instant::now();
    let applied = s.wait_plan("everything", PlanPhase::Applied).await;
    let seconds = approved_at.elapsed().as_secs_f64();
    let progress = applied.status.unwrap().progress.unwrap();
    assert_eq!((progress.written as usize, progress.chunks), (n, 5));
    let patches = s.requests(PATCH).await;
    let total = s.total_requests().await - before;
    println!(
        "5000 assignments: {total} YNAB requests ({patches} PATCH), ApprovalRequest {request_bytes} bytes, plan status {status_bytes} bytes, {seconds:.1} s from approval to Applied"
    );
    assert_eq!(patches, 5, "one bulk update per 1,000 changes");
    // One fresh read for the whole operation, then the bulk updates back to back.
    assert!(total <= 6, "{total} requests");
    for i in [0, n / 2, n - 1] {
        assert_eq!(
            s.ynab_category(&load_id(i)).await,
            Some(category("Transport"))
        );
    }
}

#[tokio::test]
async fn a_write_in_flight_keeps_no_reader_of_the_budget_waiting() {
    // Shorter than the client's 35 s timeout: the dropped answer is then settled by reading.
    const HOLD: Duration = Duration::from_secs(30);
    let s = writing("in-flight", 2, json!({})).await;
    // The first write lands, and its answer is held back.
    s.hold_next_patch_for(HOLD).await;
    s.create_loads(1, "Groceries").await;
    s.wait_patches(1).await;
    let landed = std::time::Instant::now();
    // Meanwhile another Transaction of the same Budget reads the mirror to decide its change:
    // it gets there while the first write still waits for its answer (a mirror locked across
    // the request would keep it waiting for the whole hold).
    s.create_transaction(
        &load_id(1),
        "household",
        &load_id(1),
        json!({"categoryId": category("Groceries")}),
    )
    .await;
    s.wait_transaction(&load_id(1), TransactionPhase::Writing)
        .await;
    let waited = landed.elapsed();
    assert!(
        waited < HOLD,
        "the reader waited {waited:?}, as long as the write"
    );
    let first = s.api::<Transaction>().get(&load_id(0)).await.unwrap();
    assert_eq!(
        first.status.and_then(|st| st.phase),
        Some(TransactionPhase::Writing)
    );
    assert_eq!(s.requests(PATCH).await, 1);
    // The lost answer is settled by reading, and the second goes out with the next batch.
    s.wait_all(TransactionPhase::Converged).await;
    assert_eq!(s.requests(PATCH).await, 2);
}
