//! The end of a soak: every fault stopped, one more sync, the objects left to settle; then the
//! history read back: the simulator's whole journal, every ApprovalRequest as it ended, and
//! every Transaction and plan with its `Ready` condition.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::ListParams;
use ledgerops::api::approval::{ApprovalRequest, SubjectKind, Verdict};
use ledgerops::api::plan::CategorizationPlan;
use ledgerops::api::transaction::Transaction;
use ledgerops::k8s::journal::{ENTRY_KEY, Entry as JournalEntry, JOURNAL_LABEL};
use ledgerops_testenv::gitea::Gitea;
use ynab_sim::demo;

use ynab_sim::now_ms;

use super::actors::{Recorder, gitea_person};
use super::history::{Approval, Decided, History, Journaled, Settled};
use super::setup::{APPROVER, AUTO_BELOW_MILLIUNITS, AUTO_MAX_CHANGES, REQUESTS_PER_HOUR, World};

/// The controller's memory bound over a soak (it holds one mirror of a few thousand records).
pub const RSS_BOUND_KIB: u64 = 256 * 1024;
/// How long the objects must stay unchanged to count as settled, and the most the soak waits.
const QUIET: Duration = Duration::from_secs(20);
const SETTLE_MAX: Duration = Duration::from_secs(240);

/// Asks for one more sync and waits until no object's status changes for [`QUIET`].
pub async fn settle(w: &World) {
    w.nudge(&format!("settle-{}", now_ms())).await;
    let start = Instant::now();
    let mut last = (String::new(), Instant::now());
    while start.elapsed() < SETTLE_MAX {
        let now = versions(w).await;
        if now != last.0 {
            last = (now, Instant::now());
        } else if last.1.elapsed() >= QUIET {
            return;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// The resource versions of every Transaction and plan, as one string.
async fn versions(w: &World) -> String {
    let lp = ListParams::default();
    let txs = w.s.api::<Transaction>().list(&lp).await.map(|l| l.items);
    let plans =
        w.s.api::<CategorizationPlan>()
            .list(&lp)
            .await
            .map(|l| l.items);
    let mut v: Vec<String> = txs
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t.metadata.resource_version.clone())
        .chain(
            plans
                .unwrap_or_default()
                .iter()
                .filter_map(|p| p.metadata.resource_version.clone()),
        )
        .collect();
    v.sort();
    v.join(",")
}

/// Everything the checker needs.
pub async fn history(w: &World, rec: &Recorder) -> History {
    let control = w.s.sim.control();
    let mut journal = Vec::new();
    loop {
        let after = journal.last().map_or(0, |e: &ynab_sim::Entry| e.seq);
        let page = control.journal_after(after).await.expect("the journal");
        if page.is_empty() {
            break;
        }
        journal.extend(page);
    }
    let lp = ListParams::default();
    let approvals =
        w.s.api::<ApprovalRequest>()
            .list(&lp)
            .await
            .expect("ApprovalRequests")
            .items
            .iter()
            .map(|r| approval(r, rec))
            .collect();
    let mut settled: Vec<Settled> =
        w.s.api::<Transaction>()
            .list(&lp)
            .await
            .expect("Transactions")
            .items
            .iter()
            .map(|t| {
                let st = t.status.as_ref();
                settled_as(
                    &t.metadata,
                    "Transaction",
                    st.and_then(|s| s.phase).map(|p| format!("{p:?}")),
                    st.map(|s| s.conditions.as_slice()),
                )
            })
            .collect();
    let plans = w.s.api::<CategorizationPlan>().list(&lp).await;
    settled.extend(plans.expect("plans").items.iter().map(|p| {
        let st = p.status.as_ref();
        settled_as(
            &p.metadata,
            "CategorizationPlan",
            st.and_then(|s| s.phase).map(|p| format!("{p:?}")),
            st.map(|s| s.conditions.as_slice()),
        )
    }));
    History {
        journal,
        journaled: operation_journal(w).await,
        token: demo::TOKEN.into(),
        requests_per_hour: REQUESTS_PER_HOUR,
        auto_below_milliunits: AUTO_BELOW_MILLIUNITS,
        auto_max_changes: AUTO_MAX_CHANGES,
        intents: rec.intents.clone(),
        approvals,
        approvers: vec![APPROVER.to_string(), gitea_person(Gitea::shared().writer())],
        faults: rec.faults.clone(),
        settled,
        peak_rss_kib: w.peak_rss_kib(),
        rss_bound_kib: RSS_BOUND_KIB,
    }
}

/// Every change ledgerops' operation journal recorded, read from its ConfigMaps as they are
/// (the soak's namespace has no other writer of them: admission lets only the controller).
async fn operation_journal(w: &World) -> Vec<Journaled> {
    let lp = ListParams::default().labels(&format!("{JOURNAL_LABEL}=true"));
    let maps =
        w.s.api::<ConfigMap>()
            .list(&lp)
            .await
            .expect("journal ConfigMaps");
    let mut out = Vec::new();
    for map in &maps.items {
        let Some(json) = map.data.as_ref().and_then(|d| d.get(ENTRY_KEY)) else {
            continue; // a completion record
        };
        let entry: JournalEntry = serde_json::from_str(json).expect("a journal entry");
        let at_ms = map
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(u64::MAX, |t| {
                u64::try_from(t.0.as_millisecond()).unwrap_or(0)
            });
        out.extend(entry.changes.iter().map(|c| Journaled {
            plan: entry.plan.clone(),
            transaction: c.transaction_id.clone(),
            from: c.from_category_id.clone(),
            to: c.to_category_id.clone(),
            at_ms,
        }));
    }
    out
}

fn name(meta: &kube::api::ObjectMeta) -> String {
    meta.name.clone().unwrap_or_default()
}

fn settled_as(
    meta: &kube::api::ObjectMeta,
    kind: &str,
    phase: Option<String>,
    conditions: Option<&[Condition]>,
) -> Settled {
    let ready = conditions
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == "Ready");
    Settled {
        subject: format!("{kind}/{}", name(meta)),
        phase,
        at_rest: ready.is_some_and(|c| c.status == "True"),
        ready: ready.map(|c| (c.reason.clone(), c.message.clone())),
    }
}

/// A request as it ended. Its decision counts from when the soak sent it (the last time its
/// author sent one, if the answer was lost); one the soak did not send (nobody else may
/// decide) never covers a write.
fn approval(r: &ApprovalRequest, rec: &Recorder) -> Approval {
    let name = name(&r.metadata);
    let kind = match r.spec.subject.kind {
        SubjectKind::CategorizationPlan => "CategorizationPlan",
        SubjectKind::Transaction => "Transaction",
    };
    Approval {
        subject: format!("{kind}/{}", r.spec.subject.name),
        proposed_by: r.spec.proposed_by.clone(),
        expires_ms: u64::try_from(r.spec.expires_at.0.as_millisecond()).unwrap_or(0),
        changes: r
            .spec
            .changes
            .iter()
            .map(|c| {
                (
                    c.transaction_id.clone(),
                    c.from_category_id.clone(),
                    c.to_category_id.clone(),
                )
            })
            .collect(),
        decision: r.spec.decision.as_ref().map(|d| Decided {
            by: d.by.clone(),
            approve: d.verdict == Verdict::Approve,
            at_ms: rec
                .decided
                .get(&name)
                .or_else(|| rec.sent.get(&(name.clone(), d.by.clone())))
                .copied()
                .unwrap_or(u64::MAX),
        }),
        name,
    }
}
