//! The batcher in process, against the YNAB simulator over HTTP: what it writes, what it leaves
//! alone, and in how many requests. No Kubernetes is needed for this layer, so none is started.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;

use ledgerops::logic::budget::api_url::ApiUrlAllowlist;
use ledgerops::logic::budget::sync_due::{self, Due, SyncedFor};
use ledgerops::logic::runtime::pacing::Limits;
use ledgerops::logic::runtime::request_priority::Priority;
use ledgerops::logic::runtime::request_window::RequestWindow;
use ledgerops::logic::transaction::batch::{
    Authorized, Outcome, Submission, WriteItem, current_of,
};
use ledgerops::logic::transaction::converge::{Allocation, EndState, Expect, approval_hash};
use ledgerops::logic::values::token::Token;
use ledgerops::metrics::Metrics;
use ledgerops::ynab::batcher::{Batcher, Destination, Reply};
use ledgerops::ynab::budget_links::{BudgetKey, BudgetLinks};
use ledgerops::ynab::client::YnabClient;
use ledgerops::ynab::mirror_sync::{self, MirrorKey};
use serde_json::json;
use ynab_sim::{
    DropFault, RecordKind, RequestMatch, RunningSim, SimConfig, Simulator, StatusFault, demo,
};

const PATCH: &str = "PATCH /v1/plans/{plan_id}/transactions";
const READ: &str = "GET /v1/plans/{plan_id}";
const SCOPE: &str = "ns/household";

/// The simulator with the demo household, a Budget's destination on it, its mirror synced as
/// a reconciler would have it when it decides, and the request counters at zero.
struct Rig {
    sim: RunningSim,
    destination: Destination,
    batcher: Arc<Batcher>,
}

async fn rig(window: Duration, max_batch: usize) -> Rig {
    rig_with(window, max_batch, Limits::unreserved(10_000)).await
}

async fn rig_with(window: Duration, max_batch: usize, limits: Limits) -> Rig {
    let sim = Simulator::start(SimConfig {
        fixture: Some(demo::generate()),
        rate_limit: 10_000,
        ..SimConfig::default()
    })
    .await
    .expect("the simulator starts");
    let url = ApiUrlAllowlist::parse(["http://127.0.0.1:*/v1"])
        .unwrap()
        .check(&sim.api_url())
        .unwrap();
    let client = YnabClient::new(
        &url,
        Token::new(demo::TOKEN),
        Arc::new(Mutex::new(RequestWindow::with(limits))),
        Arc::new(Metrics::default()),
    )
    .unwrap();
    let links = Arc::new(BudgetLinks::default());
    let destination = Destination {
        client,
        plan_id: demo::PLAN_ID.into(),
        mirror: links.mirror("ns", "household"),
        closed_through: None,
        window,
        max_batch,
        key: MirrorKey {
            namespace: "ns".into(),
            budget: "household".into(),
            budget_links: links,
        },
        written: Arc::default(),
    };
    mirror_sync::sync(
        &destination.client,
        demo::PLAN_ID,
        &destination.mirror,
        &destination.key,
        Priority::Approved,
        None,
    )
    .await
    .expect("the first sync");
    sim.control().reset_counters().await.unwrap();
    Rig {
        sim,
        destination,
        batcher: Arc::new(Batcher::default()),
    }
}

fn category(name: &str) -> String {
    demo::category(name)
}

fn in_category(name: &str) -> EndState {
    EndState {
        allocation: Some(Allocation::Category(category(name))),
        ..EndState::default()
    }
}

impl Rig {
    /// A Transaction's submission moving `id` to `to`, authorized on the mirror as it is now.
    /// `exactly`: the write expects YNAB to still show what the mirror shows (a plan's preview);
    /// otherwise it converges as a Transaction that ledgerops never wrote before.
    async fn recategorise(&self, id: &str, to: &str, exactly: bool) -> Submission {
        let slot = self.destination.mirror.state.read().await;
        let target = in_category(to);
        let tx = &slot.mirror.transactions[id];
        let current = current_of(&slot.mirror, id, &target).expect("the transaction is mirrored");
        let expect = if exactly {
            Expect::Exactly(current.clone())
        } else {
            Expect::Prior(None)
        };
        Submission {
            items: vec![WriteItem {
                transaction_id: id.into(),
                target: target.clone(),
                expect,
            }],
            all_or_nothing: false,
            operation: None,
            priority: Priority::Unasked,
            respect: None,
            authorized: Authorized::Transaction {
                scope: SCOPE.into(),
                hash: approval_hash(SCOPE, tx, &current, &target),
            },
        }
    }

    /// Submits each of `submissions` from a task of its own, at once, as reconcilers do.
    async fn submit_all(&self, submissions: Vec<Submission>) -> Vec<Outcome> {
        let tasks: Vec<_> = submissions
            .into_iter()
            .map(|s| {
                let (batcher, destination) = (self.batcher.clone(), self.destination.clone());
                tokio::spawn(async move {
                    let key = BudgetKey::new("ns", "household");
                    let mut answers = batcher.submit_all(&key, &destination, vec![s]).await;
                    answers.pop().expect("one answer per submission")
                })
            })
            .collect();
        let mut outcomes = Vec::new();
        for task in tasks {
            let mut answer = task.await.unwrap().expect("the batch was written");
            assert_eq!(answer.len(), 1, "one outcome per item");
            outcomes.push(answer.pop().unwrap());
        }
        outcomes
    }

    async fn requests(&self, endpoint: &str) -> u64 {
        let counters = self.sim.control().counters().await.unwrap();
        counters.by_endpoint.get(endpoint).copied().unwrap_or(0)
    }

    async fn total(&self) -> u64 {
        self.sim.control().counters().await.unwrap().total
    }

    async fn ynab_category(&self, id: &str) -> Option<String> {
        let tx = self
            .sim
            .control()
            .transaction(demo::PLAN_ID, id)
            .await
            .unwrap();
        tx.summary.category_id
    }
}

#[tokio::test]
async fn submissions_within_a_window_share_one_read_and_one_write() {
    let rig = rig(Duration::from_millis(300), 100).await;
    let submissions = vec![
        rig.recategorise("tx-048", "Groceries", false).await,
        rig.recategorise("tx-049", "Transport", false).await,
    ];
    let outcomes = rig.submit_all(submissions).await;
    assert_eq!(outcomes, [Outcome::Written, Outcome::Written]);
    assert_eq!(rig.requests(READ).await, 1, "one delta read before writing");
    assert_eq!(rig.requests(PATCH).await, 1, "one bulk update for both");
    assert_eq!(rig.total().await, 2);
    assert_eq!(
        rig.ynab_category("tx-048").await,
        Some(category("Groceries"))
    );
    assert_eq!(
        rig.ynab_category("tx-049").await,
        Some(category("Transport"))
    );
}

#[tokio::test]
async fn a_batch_larger_than_one_request_reads_once_and_writes_in_chunks() {
    let rig = rig(Duration::from_millis(300), 1).await;
    let submissions = vec![
        rig.recategorise("tx-048", "Groceries", false).await,
        rig.recategorise("tx-049", "Transport", false).await,
    ];
    let outcomes = rig.submit_all(submissions).await;
    assert!(
        outcomes.iter().all(|o| *o == Outcome::Written),
        "{outcomes:?}"
    );
    assert_eq!(
        rig.requests(PATCH).await,
        2,
        "ceil(2 / maxBatchSize 1) bulk updates"
    );
    assert_eq!(
        rig.requests(READ).await,
        1,
        "one read serves every chunk of the batch"
    );
}

/// What a plan's operation does: its chunks handed off together go out after one read, even
/// with no window to wait in, each answered on its own, in order.
#[tokio::test]
async fn chunks_handed_off_together_go_out_back_to_back_after_one_read() {
    let rig = rig(Duration::ZERO, 1).await;
    let chunks = vec![
        rig.recategorise("tx-048", "Groceries", false).await,
        rig.recategorise("tx-049", "Transport", false).await,
    ];
    let key = BudgetKey::new("ns", "household");
    let answers = rig.batcher.submit_all(&key, &rig.destination, chunks).await;
    let answers: Vec<Vec<Outcome>> = answers.into_iter().map(Result::unwrap).collect();
    assert_eq!(answers, [[Outcome::Written], [Outcome::Written]]);
    assert_eq!(rig.requests(READ).await, 1, "one read for the operation");
    assert_eq!(rig.requests(PATCH).await, 2, "one bulk update per chunk");
}

/// A person waits on the write they approved: its batch takes what is queued and goes out,
/// without waiting the window (an hour here) for more; an unasked write queued earlier rides
/// along in the same read and bulk update.
#[tokio::test]
async fn an_approved_write_does_not_wait_the_window_and_takes_what_is_queued() {
    let rig = rig(Duration::from_secs(3600), 100).await;
    let key = BudgetKey::new("ns", "household");
    let unasked = rig.recategorise("tx-048", "Groceries", false).await;
    let (sender, unasked_answer) = tokio::sync::oneshot::channel();
    let reply = Reply::to(move |answer| drop(sender.send(answer)));
    rig.batcher
        .hand_off(key.clone(), rig.destination.clone(), unasked, reply);
    let mut approved = rig.recategorise("tx-049", "Transport", false).await;
    approved.priority = Priority::Approved;
    let answers = tokio::time::timeout(
        Duration::from_secs(30),
        rig.batcher
            .submit_all(&key, &rig.destination, vec![approved]),
    )
    .await
    .expect("the approved write did not wait the hour-long window");
    assert_eq!(
        answers.into_iter().next().unwrap().unwrap(),
        [Outcome::Written]
    );
    let unasked = unasked_answer.await.unwrap().unwrap();
    assert_eq!(unasked, [Outcome::Written], "it rode along");
    assert_eq!(rig.requests(READ).await, 1, "one read for both");
    assert_eq!(rig.requests(PATCH).await, 1, "one bulk update for both");
}

/// An approved write whose read would wait for the token's pace anyway gathers until its turn:
/// an unasked write queued meanwhile rides along in the same read and bulk update, and the
/// person waits only for the turn, not the (hour-long) window.
#[tokio::test]
async fn an_approved_write_waiting_for_its_turn_gathers_until_then() {
    // No reserve: every request is paced, one every 2 s after a burst of 166.
    let rig = rig_with(Duration::from_secs(3600), 100, Limits::unreserved(2_000)).await;
    let turn = {
        let mut window = rig.destination.client.window().lock().unwrap();
        let now = Timestamp::now();
        while window.try_acquire(now, Priority::Background).is_ok() {}
        window.next_turn(now, Priority::Approved)
    };
    assert!(
        turn.is_some(),
        "the burst is spent: the approved read waits"
    );
    let key = BudgetKey::new("ns", "household");
    let mut approved = rig.recategorise("tx-049", "Transport", false).await;
    approved.priority = Priority::Approved;
    let person = {
        let (batcher, destination, key) =
            (rig.batcher.clone(), rig.destination.clone(), key.clone());
        tokio::spawn(async move { batcher.submit_all(&key, &destination, vec![approved]).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let unasked = rig.recategorise("tx-048", "Groceries", false).await;
    let (sender, unasked_answer) = tokio::sync::oneshot::channel();
    let reply = Reply::to(move |answer| drop(sender.send(answer)));
    rig.batcher
        .hand_off(key, rig.destination.clone(), unasked, reply);
    let answers = tokio::time::timeout(Duration::from_secs(30), person)
        .await
        .expect("the approved write waited for its turn, not the window")
        .unwrap();
    assert_eq!(
        answers.into_iter().next().unwrap().unwrap(),
        [Outcome::Written]
    );
    assert_eq!(unasked_answer.await.unwrap().unwrap(), [Outcome::Written]);
    assert_eq!(rig.requests(READ).await, 1, "one read for both");
    assert_eq!(rig.requests(PATCH).await, 1, "one bulk update for both");
}

#[tokio::test]
async fn a_record_edited_since_the_decision_is_left_alone_and_the_others_written() {
    let rig = rig(Duration::from_millis(300), 100).await;
    let previewed = rig.recategorise("tx-048", "Groceries", true).await;
    let other = rig.recategorise("tx-049", "Groceries", false).await;
    // Someone recategorises tx-048 in the YNAB app after the preview.
    rig.sim
        .control()
        .edit(
            demo::PLAN_ID,
            RecordKind::Transaction,
            "tx-048",
            &json!({"category_id": category("Restaurants")}),
        )
        .await
        .unwrap();
    rig.sim.control().reset_counters().await.unwrap();
    let outcomes = rig.submit_all(vec![previewed, other]).await;
    assert!(
        matches!(outcomes[0], Outcome::Diverged | Outcome::Stale(_)),
        "{:?}",
        outcomes[0]
    );
    assert_eq!(outcomes[1], Outcome::Written);
    assert_eq!(
        rig.ynab_category("tx-048").await,
        Some(category("Restaurants")),
        "the person's edit stands"
    );
    assert_eq!(rig.requests(PATCH).await, 1);
}

#[tokio::test]
async fn a_lost_answer_is_settled_by_reading_again_never_by_writing_again() {
    let rig = rig(Duration::from_millis(100), 100).await;
    let fault = DropFault {
        count: 1,
        hold_ms: 0,
        only: RequestMatch {
            method: Some("PATCH".into()),
            path: None,
            body_contains: None,
        },
    };
    rig.sim.control().drop_after_write(&fault).await.unwrap();
    let submission = rig.recategorise("tx-048", "Groceries", false).await;
    let outcomes = rig.submit_all(vec![submission]).await;
    assert!(outcomes[0].holds_target(), "{:?}", outcomes[0]);
    assert_eq!(rig.requests(PATCH).await, 1, "the write landed once");
    assert_eq!(
        rig.requests(READ).await,
        2,
        "a read before, a read to settle"
    );
    assert_eq!(
        rig.ynab_category("tx-048").await,
        Some(category("Groceries"))
    );
}

/// A write lands, its answer is lost, and the read to settle it fails; then a person puts the
/// transaction back where it was. The same authorization sent again finds its "before" and
/// would hold, but YNAB showed the transaction changed since the lost answer: nothing is written
/// over the person's edit (the hour's soak found it on a plan).
#[tokio::test]
async fn a_lost_answer_left_unsettled_is_not_sent_again_over_an_edit_made_since() {
    let rig = rig(Duration::from_millis(100), 100).await;
    let only = |method: &str| RequestMatch {
        method: Some(method.into()),
        path: None,
        body_contains: None,
    };
    // Held a second before the connection drops: time to make the reads fail meanwhile.
    let drop = DropFault {
        count: 1,
        hold_ms: 1_000,
        only: only("PATCH"),
    };
    rig.sim.control().drop_after_write(&drop).await.unwrap();
    let before = rig.ynab_category("tx-048").await;
    let submission = rig.recategorise("tx-048", "Groceries", true).await;
    // The write's fresh read goes through; every read after the write fails.
    let first = tokio::spawn({
        let (batcher, destination) = (rig.batcher.clone(), rig.destination.clone());
        let submission = submission.clone();
        async move {
            let key = BudgetKey::new("ns", "household");
            batcher
                .submit_all(&key, &destination, vec![submission])
                .await
        }
    });
    while rig.requests(PATCH).await == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let unreadable = StatusFault {
        status: 500,
        count: 100,
        detail: None,
        only: only("GET"),
    };
    rig.sim.control().inject_status(&unreadable).await.unwrap();
    let outcome = first.await.unwrap().remove(0).unwrap().remove(0);
    assert!(
        matches!(&outcome, Outcome::Unsettled(why) if why.contains("re-reading failed")),
        "{outcome:?}"
    );
    assert_eq!(
        rig.ynab_category("tx-048").await,
        Some(category("Groceries"))
    );

    rig.sim.control().clear_faults().await.unwrap();
    let back = json!({"category_id": before});
    rig.sim
        .control()
        .edit(demo::PLAN_ID, RecordKind::Transaction, "tx-048", &back)
        .await
        .unwrap();
    let again = rig.submit_all(vec![submission]).await;
    assert_eq!(again, [Outcome::Diverged]);
    assert_eq!(rig.requests(PATCH).await, 1, "written once, never again");
    assert_eq!(
        rig.ynab_category("tx-048").await,
        before,
        "the person's edit stands"
    );
}

#[tokio::test]
async fn a_refused_bulk_update_is_split_so_one_record_does_not_hold_back_the_others() {
    let rig = rig(Duration::from_millis(300), 100).await;
    let fault = StatusFault {
        status: 400,
        count: 10,
        detail: Some("invalid category".into()),
        only: RequestMatch {
            method: Some("PATCH".into()),
            path: None,
            body_contains: Some("tx-048".into()),
        },
    };
    rig.sim.control().inject_status(&fault).await.unwrap();
    let submissions = vec![
        rig.recategorise("tx-048", "Groceries", false).await,
        rig.recategorise("tx-049", "Groceries", false).await,
    ];
    let outcomes = rig.submit_all(submissions).await;
    assert!(
        matches!(&outcomes[0], Outcome::Refused(why) if why.contains("400")),
        "{:?}",
        outcomes[0]
    );
    assert_eq!(outcomes[1], Outcome::Written);
    assert_eq!(
        rig.requests(PATCH).await,
        3,
        "the bulk update, then each half on its own"
    );
    assert_eq!(
        rig.ynab_category("tx-049").await,
        Some(category("Groceries"))
    );
}

/// A Budget's periodic sync counts its interval from any read of the mirror: the read before a
/// write found whatever the periodic sync would have, a moment later, for another request.
#[tokio::test]
async fn the_read_before_a_write_serves_as_the_budgets_periodic_sync() {
    let rig = rig(Duration::from_millis(50), 100).await;
    let made_for = SyncedFor {
        generation: Some(1),
        annotations: "a".into(),
        credentials: "c".into(),
    };
    let interval = Duration::from_secs(60);
    let long_ago = Instant::now() - Duration::from_secs(59);
    rig.destination.mirror.state.write().await.synced = Some((long_ago, made_for.clone()));
    let submission = rig.recategorise("tx-048", "Groceries", false).await;
    assert!(rig.submit_all(vec![submission]).await[0].holds_target());
    let (at, served) = rig
        .destination
        .mirror
        .state
        .read()
        .await
        .synced
        .clone()
        .unwrap();
    assert_eq!(
        served, made_for,
        "what the sync was made for is the Budget's to say"
    );
    let due = sync_due::due(Some((&made_for, at.elapsed())), &made_for, interval, &[]);
    assert!(
        matches!(due, Due::In(wait) if wait > Duration::from_secs(50)),
        "{due:?}"
    );
    assert_eq!(rig.requests(READ).await, 1, "the write's read alone");
}

/// A write the policy runs is held, right before it goes out, to what ledgerops last wrote: a
/// transaction someone moved since is not written over, whatever the object decided before its
/// turn came. A person's approval of the same write goes out.
#[tokio::test]
async fn a_policy_write_over_an_edit_made_since_ledgerops_wrote_is_not_sent() {
    let rig = rig(Duration::from_millis(50), 100).await;
    // Another Transaction wrote Transport to tx-048; YNAB shows something else now.
    let earlier: ledgerops::api::transaction::Transaction = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
        "metadata": {"name": "t-earlier", "namespace": "ns"},
        "spec": {"budgetRef": {"name": "household"}, "transactionId": "tx-048"},
        "status": {"applied": {"hash": "h", "categoryId": category("Transport"),
            "at": "2026-12-07T10:00:00Z"}},
    }))
    .unwrap();
    rig.destination
        .written
        .lock()
        .unwrap()
        .transaction(&earlier);
    assert_ne!(
        rig.ynab_category("tx-048").await,
        Some(category("Transport"))
    );
    let mut by_policy = rig.recategorise("tx-048", "Groceries", false).await;
    by_policy.respect = Some("ns/Transaction/t-later".into());
    let outcome = rig.submit_all(vec![by_policy.clone()]).await.remove(0);
    assert!(
        matches!(&outcome, Outcome::Stale(why) if why.contains("set by someone else since ledgerops wrote")),
        "{outcome:?}"
    );
    assert_eq!(rig.requests(PATCH).await, 0, "nothing written");

    let mut by_person = by_policy;
    by_person.respect = None;
    by_person.priority = Priority::Approved;
    let outcome = rig.submit_all(vec![by_person]).await.remove(0);
    assert_eq!(outcome, Outcome::Written);
    assert_eq!(rig.requests(PATCH).await, 1);
}
