//! Crashes in the middle of a write: `ledgerops run` is killed with SIGKILL while YNAB holds a
//! landed write whose answer never came back, or before the write went out, then restarted.
//! Nothing may be written twice, nothing lost, and an edit made meanwhile is not overwritten.

use std::time::Duration;

use futures::StreamExt;

use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::plan::{CategorizationPlan, CategorizationPlanStatus, PlanPhase};
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{PATCH, Scenario, category, demo_with_uncategorised, load_id};
use ledgerops_e2e::wait::eventually;
use ledgerops_testenv::ControlPlane;
use serde_json::json;
use ynab_sim::{Fixture, RecordKind, RequestMatch, StatusFault, demo};

const N: usize = 20;

/// A control plane of its own (these tests kill the controller), a simulator with N extra
/// transactions, `ledgerops run`, and a Budget that writes without asking, synced. A restarted
/// controller reconciles its N Transactions over a second or more on a loaded machine; the
/// four-second window keeps them in one batch, so the PATCH counts below count writes, not timing.
async fn world(prefix: &str) -> (ControlPlane, Scenario, Ledgerops) {
    world_of(prefix, demo_with_uncategorised(N)).await
}

/// [`world`] on YNAB data of its own.
async fn world_of(prefix: &str, fixture: Fixture) -> (ControlPlane, Scenario, Ledgerops) {
    let plane = ControlPlane::start().await.expect("control plane");
    let s = Scenario::new(&plane, prefix, fixture).await;
    let ledgerops = Ledgerops::start(&plane).await;
    s.create_writing_budget("household", json!({"writes": {"batchWindow": "4s"}}))
        .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    (plane, s, ledgerops)
}

/// Kills `ledgerops` while the plan `bulk`'s answer is held, puts the seventh load in category
/// `to` (an id, or null) as a person would meanwhile, and starts the controller again: the plan
/// once it is PartiallyApplied, nothing written again, and the restarted controller.
async fn crash_then_edit_seventh(
    plane: &ControlPlane,
    s: &Scenario,
    ledgerops: Ledgerops,
    to: serde_json::Value,
) -> (CategorizationPlan, Ledgerops) {
    drop(ledgerops);
    let edit = json!({ "category_id": to });
    s.sim
        .control()
        .edit(demo::PLAN_ID, RecordKind::Transaction, &load_id(7), &edit)
        .await
        .unwrap();
    let restarted = Ledgerops::start(plane).await;
    let partial = s.wait_plan("bulk", PlanPhase::PartiallyApplied).await;
    assert_eq!(s.requests(PATCH).await, 1, "nothing is written again");
    (partial, restarted)
}

/// Waits until every Transaction is Converged or Diverged.
async fn every_transaction_settled(s: &Scenario) {
    eventually(
        "every transaction settled",
        Duration::from_secs(60),
        async || {
            s.transaction_phases().await.iter().all(|p| {
                matches!(
                    p,
                    Some(TransactionPhase::Converged | TransactionPhase::Diverged)
                )
            })
        },
    )
    .await;
}

/// A Budget that asks a person for every change (nothing moves less than 0) and the plan `bulk`
/// moving the N loads to Transport, waiting for its approval: the ApprovalRequest's name.
async fn bulk_plan_awaiting_a_person(s: &Scenario) -> String {
    s.create_writing_budget("household", json!({"approval": {"autoApproveBelow": "0"}}))
        .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    let assignments: Vec<_> = (0..N)
        .map(|i| json!({"transactionId": load_id(i), "categoryId": category("Transport")}))
        .collect();
    s.create_plan("bulk", "household", json!({"assignments": assignments}))
        .await;
    let waiting = s.wait_plan("bulk", PlanPhase::AwaitingApproval).await;
    waiting.status.unwrap().approval_request.unwrap()
}

/// admin approves `request`.
async fn approve_as_admin(s: &Scenario, request: &str) {
    let approve = json!({"spec": {"decision": {"verdict": "Approve", "by": "admin"}}});
    s.api::<ApprovalRequest>()
        .patch(request, &PatchParams::default(), &Patch::Merge(&approve))
        .await
        .unwrap();
}

/// Nobody was asked again: the plan's one ApprovalRequest was spent on the operation `status`
/// names, which wrote and completed.
async fn one_approval_spent_on(s: &Scenario, status: &CategorizationPlanStatus) {
    let requests = s.approval_requests().await;
    assert_eq!(requests.len(), 1, "nobody was asked again");
    let used = requests[0].status.clone().unwrap().used.unwrap();
    assert_eq!(
        Some(&used.attempt_id),
        status.operation_id.as_ref(),
        "the same write went on"
    );
    assert!(used.written && used.completed_at.is_some());
}

/// The N loads, the seventh of them in Restaurants.
fn seventh_in_restaurants() -> Fixture {
    let mut fixture = demo_with_uncategorised(N);
    let seventh = fixture.plans[0]
        .transactions
        .iter_mut()
        .find(|t| t.summary.id == load_id(7))
        .expect("load 7");
    seventh.summary.category_id = Some(category("Restaurants"));
    fixture
}

/// Nothing was written again, and the seventh load is back in Restaurants, as a person put it.
async fn the_undo_stands(s: &Scenario) {
    assert_eq!(s.requests(PATCH).await, 1, "nothing is written again");
    assert_eq!(
        s.ynab_category(&load_id(7)).await,
        Some(category("Restaurants")),
        "the undo stands"
    );
}

/// The plan `bulk` moves all N transactions to Transport; its bulk update lands in YNAB and its
/// answer is held back.
async fn bulk_plan_landed_unanswered(s: &Scenario) {
    s.hold_next_patch().await;
    let assignments: Vec<_> = (0..N)
        .map(|i| json!({"transactionId": load_id(i), "categoryId": category("Transport")}))
        .collect();
    s.create_plan("bulk", "household", json!({"assignments": assignments}))
        .await;
    s.wait_patches(1).await;
}

#[tokio::test]
async fn a_write_that_landed_before_a_crash_is_adopted_not_repeated() {
    let (plane, s, ledgerops) = world("crash").await;

    s.hold_next_patch().await;
    s.create_loads(N, "Groceries").await;
    s.wait_patches(1).await;
    for i in [0, N - 1] {
        assert_eq!(
            s.ynab_category(&load_id(i)).await,
            Some(category("Groceries")),
            "the write landed"
        );
    }
    s.wait_all(TransactionPhase::Writing).await;

    // kill -9 while the controller still waits for the answer; meanwhile someone recategorises one.
    drop(ledgerops);
    let edit = json!({"category_id": category("Restaurants")});
    s.sim
        .control()
        .edit(demo::PLAN_ID, RecordKind::Transaction, &load_id(7), &edit)
        .await
        .unwrap();
    let _restarted = Ledgerops::start(&plane).await;

    every_transaction_settled(&s).await;
    assert_eq!(
        s.requests(PATCH).await,
        1,
        "no second PATCH for records that landed"
    );
    let txs = s
        .api::<Transaction>()
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    for t in &txs {
        let status = t.status.as_ref().unwrap();
        let id = &t.spec.transaction_id;
        if *id == load_id(7) {
            assert_eq!(
                status.phase,
                Some(TransactionPhase::Diverged),
                "the edit made during the crash is reported"
            );
        } else {
            assert_eq!(status.phase, Some(TransactionPhase::Converged), "{id}");
            assert!(status.intent.is_none(), "{id} still has an intent");
            assert!(status.applied.is_some(), "{id} records what it adopted");
        }
    }
    assert_eq!(
        s.ynab_category(&load_id(7)).await,
        Some(category("Restaurants")),
        "the edit is not overwritten"
    );
    let events = Api::<Event>::namespaced(s.client.clone(), &s.ns)
        .list(&ListParams::default())
        .await
        .unwrap();
    let settled = events
        .items
        .iter()
        .filter(|e| e.reason.as_deref() == Some("InterruptedWriteSettled"))
        .count();
    assert_eq!(settled, N, "one Event per interrupted write");
}

#[tokio::test]
async fn a_write_cut_off_before_it_went_out_is_written_once_after_restart() {
    let (plane, s, ledgerops) = world("crash").await;

    // Every request now hangs: the batch's fresh read never returns, so no PATCH goes out.
    s.sim.control().set_latency(120_000).await.unwrap();
    s.create_loads(N, "Groceries").await;
    s.wait_all(TransactionPhase::Writing).await;
    drop(ledgerops);
    s.sim.control().set_latency(0).await.unwrap();
    let _restarted = Ledgerops::start(&plane).await;
    s.wait_all(TransactionPhase::Converged).await;
    assert_eq!(s.requests(PATCH).await, 1, "written exactly once");
    for i in 0..N {
        assert_eq!(
            s.ynab_category(&load_id(i)).await,
            Some(category("Groceries"))
        );
    }
}

#[tokio::test]
async fn a_plan_killed_mid_apply_is_applied_once_after_restart() {
    let (plane, s, ledgerops) = world("crashplan").await;
    bulk_plan_landed_unanswered(&s).await;
    drop(ledgerops);
    let _restarted = Ledgerops::start(&plane).await;
    let applied = s.wait_plan("bulk", PlanPhase::Applied).await;
    assert_eq!(
        s.requests(PATCH).await,
        1,
        "the landed bulk update is not sent again"
    );
    let operation = applied.status.unwrap().operation_id.unwrap();
    s.api::<k8s_openapi::api::core::v1::ConfigMap>()
        .get(&format!("ledgerops-journal-{operation}"))
        .await
        .expect("journaled");
    for i in [0, N - 1] {
        assert_eq!(
            s.ynab_category(&load_id(i)).await,
            Some(category("Transport"))
        );
    }
}

#[tokio::test]
async fn a_person_approved_plan_killed_mid_apply_resumes_under_the_same_approval() {
    let plane = ControlPlane::start().await.expect("control plane");
    let s = Scenario::new(&plane, "crashask", demo_with_uncategorised(N)).await;
    let ledgerops = Ledgerops::start(&plane).await;
    s.hold_next_patch().await;
    let request = bulk_plan_awaiting_a_person(&s).await;
    approve_as_admin(&s, &request).await;
    s.wait_patches(1).await;
    drop(ledgerops);
    let _restarted = Ledgerops::start(&plane).await;
    let applied = s.wait_plan("bulk", PlanPhase::Applied).await;
    assert_eq!(
        s.requests(PATCH).await,
        1,
        "written once, under one approval"
    );
    let status = applied.status.unwrap();
    one_approval_spent_on(&s, &status).await;
    assert_eq!(status.decision.unwrap().by, "admin");
}

#[tokio::test]
async fn a_plan_killed_after_its_write_landed_keeps_its_journal_when_ynab_is_edited_before_restart()
{
    let (plane, s, ledgerops) = world("crashjournal").await;
    bulk_plan_landed_unanswered(&s).await;
    // kill -9 before the answer came back; meanwhile someone moves one of the written records.
    let restaurants = json!(category("Restaurants"));
    let (partial, _restarted) = crash_then_edit_seventh(&plane, &s, ledgerops, restaurants).await;
    assert_eq!(
        s.ynab_category(&load_id(7)).await,
        Some(category("Restaurants")),
        "the edit made during the crash is left alone"
    );
    let status = partial.status.unwrap();
    let message = &ledgerops::logic::status::conditions::get(&status.conditions, "Ready")
        .unwrap()
        .message;
    assert!(message.contains(&load_id(7)), "{message}");
    // The journal holds every change that went out, and how the operation ended.
    let operation = status.operation_id.unwrap();
    let maps = s.api::<k8s_openapi::api::core::v1::ConfigMap>();
    let entry = maps
        .get(&format!("ledgerops-journal-{operation}-0"))
        .await
        .expect("journaled before the write");
    let entry: serde_json::Value =
        serde_json::from_str(&entry.data.unwrap()["entry.json"]).unwrap();
    assert_eq!(entry["changes"].as_array().unwrap().len(), N);
    let done = maps
        .get(&format!("ledgerops-journal-{operation}"))
        .await
        .expect("completed after the restart");
    let done: serde_json::Value =
        serde_json::from_str(&done.data.unwrap()["completion.json"]).unwrap();
    assert_eq!(done["written"], N - 1);
    assert_eq!(done["notWritten"], json!([load_id(7)]));

    // The undo puts back what ledgerops wrote and leaves the edited record alone.
    s.create_plan("undo", "household", json!({"undoOf": "bulk"}))
        .await;
    let undone = s.wait_plan("undo", PlanPhase::Applied).await;
    let preview = undone.status.unwrap().preview.unwrap();
    assert_eq!(preview.change_count as usize, N - 1);
    assert_eq!(preview.conflicts, vec![load_id(7)]);
}

/// The soak's `person-overwritten` after a leader kill: a plan's bulk update landed, its
/// answer was lost, and before the next leader started a person put one transaction back where
/// it was. By its fields that one looks as if the write never reached it; YNAB's history since
/// the write was decided says it moved, so it is left alone, not written again.
#[tokio::test]
async fn a_plan_write_undone_by_a_person_during_a_crash_is_not_sent_again() {
    let (plane, s, ledgerops) = world("crashundo").await;
    bulk_plan_landed_unanswered(&s).await;
    let (partial, _restarted) = crash_then_edit_seventh(&plane, &s, ledgerops, json!(null)).await;
    assert_eq!(
        s.ynab_category(&load_id(7)).await,
        None,
        "the person's undo stands"
    );
    let status = partial.status.unwrap();
    let message = &ledgerops::logic::status::conditions::get(&status.conditions, "Ready")
        .unwrap()
        .message;
    assert!(message.contains(&load_id(7)), "{message}");
}

/// The same for Transactions: one of them was in Restaurants, the write moved it to Groceries
/// and its answer was lost, and a person put it back in Restaurants before the restart. That
/// one is reported as changed, not written over.
#[tokio::test]
async fn a_transaction_write_undone_by_a_person_during_a_crash_is_not_sent_again() {
    let fixture = seventh_in_restaurants();
    let (plane, s, ledgerops) = world_of("crashtxundo", fixture).await;
    s.hold_next_patch().await;
    s.create_loads(N, "Groceries").await;
    s.wait_patches(1).await;
    s.wait_all(TransactionPhase::Writing).await;
    assert_eq!(
        s.ynab_category(&load_id(7)).await,
        Some(category("Groceries"))
    );
    drop(ledgerops);
    s.recategorise_in_ynab(&load_id(7), "Restaurants").await;
    let _restarted = Ledgerops::start(&plane).await;

    every_transaction_settled(&s).await;
    the_undo_stands(&s).await;
    let diverged = s
        .api::<Transaction>()
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|t| t.status.as_ref().and_then(|s| s.phase) == Some(TransactionPhase::Diverged))
        .map(|t| t.spec.transaction_id)
        .collect::<Vec<_>>();
    assert_eq!(diverged, vec![load_id(7)]);
}

/// The soak's other road to the same overwrite: the write's answer was lost and the read that
/// would have settled it failed, so the Transaction waits with its intent open; then the leader
/// is killed, and a person puts one transaction back before the next one starts. That one is
/// reported as changed, not written again.
#[tokio::test]
async fn a_lost_answer_left_unsettled_at_a_crash_is_not_sent_again_over_an_undo() {
    let fixture = seventh_in_restaurants();
    let (plane, s, ledgerops) = world_of("crashunsettled", fixture).await;
    s.hold_next_patch_for(Duration::from_secs(3)).await;
    s.create_loads(N, "Groceries").await;
    s.wait_patches(1).await;
    // While the answer is held: every read fails, so the lost answer cannot be settled.
    let reads_fail = StatusFault {
        status: 500,
        count: 1000,
        detail: None,
        only: RequestMatch {
            method: Some("GET".into()),
            path: None,
            body_contains: None,
        },
    };
    s.sim.control().inject_status(&reads_fail).await.unwrap();
    s.wait_transaction(&load_id(7), TransactionPhase::Interrupted)
        .await;
    drop(ledgerops);
    s.sim.control().clear_faults().await.unwrap();
    s.recategorise_in_ynab(&load_id(7), "Restaurants").await;
    let _restarted = Ledgerops::start(&plane).await;

    s.wait_transaction(&load_id(7), TransactionPhase::Diverged)
        .await;
    s.wait_transaction(&load_id(0), TransactionPhase::Converged)
        .await;
    the_undo_stands(&s).await;
}

/// The hour's request budget holds across processes: a controller killed after sending some of
/// it, and the one started after it, together send no more than `requestsPerHour` (the soak's
/// `over-request-budget`: a new leader counted from zero and sent the 201st request of the hour).
#[tokio::test]
async fn a_restarted_controller_counts_the_requests_the_one_before_it_sent() {
    const LIMIT: u64 = 4;
    let plane = ControlPlane::start().await.expect("control plane");
    let s = Scenario::new(&plane, "requests", demo::generate()).await;
    let ledgerops = Ledgerops::start(&plane).await;
    s.create_budget(
        "household",
        demo::TOKEN,
        // Three of the four kept for asked syncs, which spend the reserve at once (beyond it
        // they would wait for the pace): this is about the count, not the shares
        // (request_window_tests).
        json!({"requestsPerHour": LIMIT, "syncInterval": "1h", "reservedRequestsPercent": 90}),
    )
    .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    // Syncs asked for, one at a time, until it has sent all but one of the hour's requests
    // (each waited for: a second asked while the first is still out would make one more).
    for i in 0.. {
        let sent = s.total_requests().await;
        if sent >= LIMIT - 1 {
            break;
        }
        let nonce = format!("before-{i}");
        s.annotate::<Budget>("household", "ledgerops.dev/sync-requested-at", &nonce)
            .await;
        eventually(
            "the asked sync went out",
            Duration::from_secs(30),
            async || s.total_requests().await > sent,
        )
        .await;
    }
    let before = s.total_requests().await;
    assert_eq!(before, LIMIT - 1);

    drop(ledgerops);
    let _restarted = Ledgerops::start(&plane).await;
    for i in 0..6 {
        let nonce = format!("after-{i}");
        s.annotate::<Budget>("household", "ledgerops.dev/sync-requested-at", &nonce)
            .await;
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    eventually(
        "the Budget says the hour's budget is spent",
        Duration::from_secs(60),
        async || {
            let budget = s.api::<Budget>().get("household").await.unwrap();
            budget
                .status
                .and_then(|st| st.requests)
                .is_some_and(|r| u64::from(r.used_last_hour) == LIMIT)
        },
    )
    .await;
    assert_eq!(
        s.total_requests().await,
        LIMIT,
        "one more after the restart, not {LIMIT}"
    );
}

/// A controller that starts among more Transactions than a watch hands a subscriber at once (its
/// reconcilers wait until every Transaction and plan is listed, to know what ledgerops last wrote):
/// every one is written, in bulk. The hour's soak found a new leader that reconciled no
/// Transaction and no plan once there were 1,087 of them.
#[tokio::test]
async fn a_restart_among_more_transactions_than_a_watch_buffers_writes_them_all() {
    const MANY: usize = 1_100;
    let (plane, s, ledgerops) = world_of("buffered", demo_with_uncategorised(MANY)).await;
    drop(ledgerops);
    let groceries = category("Groceries");
    futures::stream::iter(0..MANY)
        .for_each_concurrent(16, |i| {
            let (s, groceries) = (&s, groceries.clone());
            async move {
                let spec = json!({"categoryId": groceries});
                s.create_transaction(&format!("load-{i:05}"), "household", &load_id(i), spec)
                    .await;
            }
        })
        .await;
    s.sim.control().reset_counters().await.unwrap();
    let _restarted = Ledgerops::start(&plane).await;
    eventually(
        "every transaction converged",
        Duration::from_secs(180),
        async || {
            s.transaction_phases()
                .await
                .iter()
                .all(|p| *p == Some(TransactionPhase::Converged))
        },
    )
    .await;
    let patches = s.requests(PATCH).await;
    assert!(
        patches <= 3,
        "{MANY} Transactions in bulk: {patches} PATCH requests"
    );
}

/// A person approved a plan moving the N loads to Transport; its write waited for YNAB (its
/// fresh read unanswered, no bulk update sent) when the controller was killed, and a person then
/// moved the seventh load to Restaurants. Returns the requests counted so far; the controller is
/// not started again.
async fn approved_write_cut_off_then_seventh_moved(plane: &ControlPlane, s: &Scenario) -> u64 {
    let ledgerops = Ledgerops::start(plane).await;
    let request = bulk_plan_awaiting_a_person(s).await;
    s.sim.control().set_latency(120_000).await.unwrap();
    let before = s.total_requests().await;
    approve_as_admin(s, &request).await;
    eventually(
        "the write's fresh read is out, unanswered",
        Duration::from_secs(30),
        async || s.total_requests().await > before,
    )
    .await;
    drop(ledgerops);
    s.sim.control().set_latency(0).await.unwrap();
    let edit = json!({ "category_id": category("Restaurants") });
    s.sim
        .control()
        .edit(demo::PLAN_ID, RecordKind::Transaction, &load_id(7), &edit)
        .await
        .unwrap();
    s.total_requests().await
}

/// After [`approved_write_cut_off_then_seventh_moved`], the other N - 1 are exactly as approved
/// and provably unwritten: they go out under the same approval and attempt, the moved one is
/// left alone, nobody is asked again, and the plan says it is partly applied and why.
#[tokio::test]
async fn a_cut_off_approved_write_goes_on_without_the_line_a_person_moved_meanwhile() {
    let plane = ControlPlane::start().await.expect("control plane");
    let s = Scenario::new(&plane, "crashrest", demo_with_uncategorised(N)).await;
    let restarted_from = approved_write_cut_off_then_seventh_moved(&plane, &s).await;
    let _restarted = Ledgerops::start(&plane).await;
    let partial = s.wait_plan("bulk", PlanPhase::PartiallyApplied).await;

    assert_eq!(s.requests(PATCH).await, 1, "one bulk update, of the rest");
    assert_eq!(
        s.total_requests().await - restarted_from,
        4,
        "the restart's sync, the read back to the write's decision, the fresh read and the bulk update"
    );
    assert_eq!(
        s.ynab_category(&load_id(7)).await,
        Some(category("Restaurants")),
        "the person's edit stands"
    );
    for i in (0..N).filter(|i| *i != 7) {
        assert_eq!(
            s.ynab_category(&load_id(i)).await,
            Some(category("Transport"))
        );
    }
    let status = partial.status.unwrap();
    one_approval_spent_on(&s, &status).await;
    let message = &ledgerops::logic::status::conditions::get(&status.conditions, "Ready")
        .unwrap()
        .message;
    assert!(message.contains(&load_id(7)), "{message}");
    assert!(
        message.contains("the rest was written under the same approval"),
        "{message}"
    );
    let operation = status.operation_id.unwrap();
    let done = s
        .api::<k8s_openapi::api::core::v1::ConfigMap>()
        .get(&format!("ledgerops-journal-{operation}"))
        .await
        .expect("completed");
    let done: serde_json::Value =
        serde_json::from_str(&done.data.unwrap()["completion.json"]).unwrap();
    assert_eq!(done["written"], N - 1);
    assert_eq!(done["notWritten"], json!([load_id(7)]));
}

/// The same cut-off write, and meanwhile carol (ledgerops-edit, as any automation with `edit`)
/// changes the plan's spec: one untouched line now asks for Restaurants. The approval covered
/// Transport; the rest is no longer what it approved, so nothing is written under it: the write
/// is settled as failed, and YNAB gets no bulk update.
#[tokio::test]
async fn the_rest_of_a_cut_off_write_is_not_written_when_the_spec_changed_meanwhile() {
    let plane = ControlPlane::start().await.expect("control plane");
    let s = Scenario::new(&plane, "crashrestspec", demo_with_uncategorised(N)).await;
    approved_write_cut_off_then_seventh_moved(&plane, &s).await;
    let carol = ledgerops_e2e::attacker::editor(&plane, &s.ns, "carol").await;
    let mut assignments: Vec<_> = (0..N)
        .map(|i| json!({"transactionId": load_id(i), "categoryId": category("Transport")}))
        .collect();
    assignments[3]["categoryId"] = json!(category("Restaurants"));
    let change = json!({
        "metadata": {"annotations": {"ledgerops.dev/proposed-by": "admin,carol"}},
        "spec": {"assignments": assignments}
    });
    Api::<CategorizationPlan>::namespaced(carol, &s.ns)
        .patch("bulk", &PatchParams::default(), &Patch::Merge(&change))
        .await
        .expect("an editor may change a plan's spec");
    let _restarted = Ledgerops::start(&plane).await;
    let failed = s.wait_plan("bulk", PlanPhase::Failed).await;
    let status = failed.status.unwrap();
    let message = &ledgerops::logic::status::conditions::get(&status.conditions, "Ready")
        .unwrap()
        .message;
    assert!(message.contains(&load_id(7)), "{message}");
    assert_eq!(
        s.requests(PATCH).await,
        0,
        "nothing written under the approval"
    );
    assert_eq!(s.ynab_category(&load_id(3)).await, None);
}
