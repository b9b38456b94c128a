//! The inbox: every ApprovalRequest of the agent's namespace that waits for a person is one
//! Gitea issue, assigned to the mapped logins the authorizer says may approve it, carrying the
//! one-screen review and the words to answer with. The issue follows its subject's requests:
//! a newer request after a change edits it in place; a decision, the write, an expiry or a
//! replacement rewrites it with the outcome and closes it; an expiry also comments, mentioning
//! the `escalateTo` logins. Where and what are decided in [`crate::logic::approval::inbox`] and
//! [`crate::logic::approval::inbox_body`].
//!
//! Exactly one issue per subject: the bot's issues of a repository are listed once per process
//! (their marker names the subject each follows), so a restart or a new leader edits what is
//! there, and an issue already saying what it should costs no request. Runs on the leader.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::controller::{Action, Config};
use kube::runtime::reflector::{ObjectRef, ReflectHandle, Store};

use super::context::Context;
use super::feedback::FeedbackError;
use crate::api::approval::{ApprovalRequest, SubjectKind};
use crate::api::budget::Budget;
use crate::api::config_repo::ConfigRepo;
use crate::api::plan::CategorizationPlan;
use crate::api::transaction::Transaction;
use crate::gitea::issues::IssueContent;
use crate::k8s::access;
use crate::k8s::watches::{Listed, Watches};
use crate::logic::approval::inbox_body::{self, IssueState, SubjectState, View};
use crate::logic::approval::{escalation, inbox};
use crate::logic::job::report::is_waiting;
use crate::logic::status::conditions;

/// A waiting request is looked at again this often: who may approve it can change.
const RESYNC: Duration = Duration::from_secs(300);

/// The most pages of the bot's issues read when a repository is first looked at.
const MAX_PAGES: usize = 20;

/// What Gitea shows of one subject's issue.
#[derive(Clone)]
struct Shown {
    number: i64,
    state: IssueState,
}

struct Inbox {
    ctx: Arc<Context>,
    requests: Store<ApprovalRequest>,
    budgets: Store<Budget>,
    plans: Store<CategorizationPlan>,
    transactions: Store<Transaction>,
    repos: Store<ConfigRepo>,
    /// The ConfigRepos, Budgets, plans and Transactions listed once: an issue is not written from
    /// a cache still filling (a restart would edit it from an empty one, and back again).
    listed: Vec<Listed>,
    /// By repository, once its issues were listed: each subject's issue as Gitea shows it.
    shown: Mutex<HashMap<String, HashMap<String, Shown>>>,
    /// Requests (by uid) whose expiry comment Gitea is known to show.
    announced: Mutex<HashSet<String>>,
    /// One issue written at a time: a subject's two requests never open two issues.
    turn: tokio::sync::Mutex<()>,
}

/// What the inbox reads from the shared watches, subscribed when the controllers start.
pub struct Watched {
    requests: Store<ApprovalRequest>,
    changes: ReflectHandle<ApprovalRequest>,
    plans: Store<CategorizationPlan>,
    plan_changes: ReflectHandle<CategorizationPlan>,
    budgets: Store<Budget>,
    transactions: Store<Transaction>,
    repos: Store<ConfigRepo>,
    listed: Vec<Listed>,
}

impl Watched {
    pub fn subscribe(watches: &Watches) -> Self {
        Self {
            requests: watches.approvals.store(),
            changes: watches.approvals.subscribe(),
            plans: watches.plans.store(),
            plan_changes: watches.plans.subscribe(),
            budgets: watches.budgets.store(),
            transactions: watches.transactions.store(),
            repos: watches.repos.store(),
            listed: vec![
                watches.repos.listed(),
                watches.budgets.listed(),
                watches.plans.listed(),
                watches.transactions.listed(),
            ],
        }
    }
}

/// Runs until shutdown.
pub async fn run(ctx: Arc<Context>, watched: Watched) {
    let here = {
        let namespace = ctx.namespace.clone();
        move |ns: Option<String>| futures::future::ready(ns.as_deref() == Some(&namespace))
    };
    let changes = watched.changes.filter({
        let here = here.clone();
        move |r| here(r.namespace())
    });
    let plan_changes = watched.plan_changes.filter(move |p| here(p.namespace()));
    // A plan's outcome (written, failed) is what its closed issue ends with.
    let plan_request = |plan: Arc<CategorizationPlan>| {
        let namespace = plan.namespace()?;
        let request = plan.status.as_ref()?.approval_request.clone()?;
        Some(ObjectRef::<ApprovalRequest>::new(&request).within(&namespace))
    };
    let controller = Controller::for_shared_stream(changes, watched.requests.clone())
        .watches_shared_stream(plan_changes, plan_request)
        .with_config(Config::default().concurrency(crate::reconcile::CONCURRENCY))
        .graceful_shutdown_on(ctx.shutdown.requested());
    let inbox = Arc::new(Inbox {
        ctx,
        requests: watched.requests,
        budgets: watched.budgets,
        plans: watched.plans,
        transactions: watched.transactions,
        repos: watched.repos,
        listed: watched.listed,
        shown: Mutex::default(),
        announced: Mutex::default(),
        turn: tokio::sync::Mutex::default(),
    });
    crate::reconcile::drain(controller.run(reconcile, error_policy, inbox)).await;
}

fn error_policy(request: Arc<ApprovalRequest>, error: &FeedbackError, inbox: Arc<Inbox>) -> Action {
    let key = format!("inbox/{}", request.name_any());
    let delay = inbox.ctx.failed("Inbox", error.reason(), &key);
    tracing::warn!(request = %request.name_any(), %error, retry_in = ?delay, "updating the Gitea inbox failed");
    Action::requeue(delay)
}

async fn reconcile(
    request: Arc<ApprovalRequest>,
    inbox: Arc<Inbox>,
) -> Result<Action, FeedbackError> {
    let Some(subject) = inbox::subject_uid(&request).map(str::to_owned) else {
        return Ok(Action::await_change());
    };
    let namespace = request.namespace().unwrap_or_default();
    // The subject's newest request speaks for its issue, whichever of them changed.
    let r = {
        let all = inbox.requests.state();
        let here = all
            .iter()
            .filter(|r| r.namespace().as_deref() == Some(&namespace))
            .map(Arc::as_ref);
        match inbox::newest(here, &subject) {
            Some(r) => r.clone(),
            None => return Ok(Action::await_change()),
        }
    };
    // Where it goes and what it says depend on the caches: not decided on empty ones.
    for listed in &inbox.listed {
        listed.clone().wait().await;
    }
    let ctx = &inbox.ctx;
    let budget = inbox
        .budgets
        .get(&ObjectRef::new(&r.spec.budget_ref.name).within(&namespace));
    let repo = {
        let repos = inbox.repos.state();
        let repos: Vec<&ConfigRepo> = repos.iter().map(Arc::as_ref).collect();
        let at = (namespace.as_str(), r.spec.budget_ref.name.as_str());
        inbox::repository(
            at,
            budget.as_deref(),
            &repos,
            &ctx.gitea_url,
            &ctx.repositories,
        )
    };
    let Some(repo) = repo else {
        return Ok(Action::await_change());
    };
    let waiting = is_waiting(&r);
    let expiry_due = escalation::due(&r, Timestamp::now());
    let _turn = inbox.turn.lock().await;
    list_once(&inbox, &repo).await?;
    let shown = inbox
        .shown
        .lock()
        .expect("shown lock")
        .get(&repo)
        .and_then(|subjects| subjects.get(&subject).cloned());
    if shown.is_none() && !waiting && !expiry_due {
        // Ended before it was ever shown (decided at once, or long ago): nobody to tell.
        return Ok(Action::await_change());
    }
    let assignees = if waiting {
        approvers(ctx, &r, budget.as_deref()).await?
    } else {
        Vec::new()
    };
    let decimal_digits = {
        let slot = ctx.budget_links.mirror(&namespace, &r.spec.budget_ref.name);
        slot.state.read().await.mirror.decimal_digits()
    };
    let wanted = inbox_body::issue(&View {
        request: &r,
        subject: subject_state(&inbox, &r),
        assignees,
        decimal_digits,
    });
    let number = write(ctx, &repo, shown, &wanted).await?;
    inbox
        .shown
        .lock()
        .expect("shown lock")
        .entry(repo.clone())
        .or_default()
        .insert(
            subject,
            Shown {
                number,
                state: wanted,
            },
        );
    if expiry_due {
        announce_expiry(&inbox, &repo, number, &r).await?;
    }
    ctx.succeeded(&format!("inbox/{}", request.name_any()));
    Ok(if waiting {
        let until = r.spec.expires_at.0.duration_since(Timestamp::now());
        let until = Duration::try_from(until.max(SignedDuration::ZERO)).unwrap_or(RESYNC);
        Action::requeue(until.min(RESYNC) + Duration::from_secs(1))
    } else {
        Action::await_change()
    })
}

/// The subject's issues of `repo`, listed once per process: the bot's issues changed since the
/// oldest request the cache holds was issued (an issue is written after the request it shows).
async fn list_once(inbox: &Inbox, repo: &str) -> Result<(), FeedbackError> {
    if inbox.shown.lock().expect("shown lock").contains_key(repo) {
        return Ok(());
    }
    let oldest = inbox
        .requests
        .state()
        .iter()
        .filter_map(|r| Some(r.status.as_ref()?.issued_for.as_ref()?.at.0))
        .min()
        .unwrap_or_else(Timestamp::now);
    let since = oldest - SignedDuration::from_mins(1);
    let ctx = &inbox.ctx;
    let issues = ctx
        .gitea
        .issues_by(repo, &ctx.bot, &since.to_string(), MAX_PAGES)
        .await?;
    let mut found: HashMap<String, Shown> = HashMap::new();
    for issue in &issues {
        let Some(subject) = inbox::subject_of(&issue.body) else {
            continue;
        };
        if inbox::find(
            [(issue.number, issue.author.as_str(), issue.body.as_str())],
            &ctx.bot,
            subject,
        )
        .is_none()
        {
            continue;
        }
        // The oldest of the subject's issues is its own; one opened by hand is not followed.
        if found.get(subject).is_some_and(|s| s.number < issue.number) {
            continue;
        }
        let state = IssueState {
            title: issue.title.clone(),
            body: issue.body.clone(),
            open: issue.open,
            assignees: issue.assignees.clone(),
        };
        found.insert(
            subject.to_owned(),
            Shown {
                number: issue.number,
                state,
            },
        );
    }
    tracing::info!(%repo, issues = found.len(), "inbox issues found in Gitea");
    inbox
        .shown
        .lock()
        .expect("shown lock")
        .insert(repo.to_owned(), found);
    Ok(())
}

/// Opens the issue, or edits it when Gitea shows something else; returns its number.
async fn write(
    ctx: &Context,
    repo: &str,
    shown: Option<Shown>,
    wanted: &IssueState,
) -> Result<i64, FeedbackError> {
    let content = IssueContent {
        title: &wanted.title,
        body: &wanted.body,
        open: wanted.open,
        assignees: &wanted.assignees,
    };
    match shown {
        Some(s) if s.state == *wanted => Ok(s.number),
        Some(s) => {
            let assigned = ctx.gitea.edit_issue(repo, s.number, &content).await?;
            tracing::info!(%repo, issue = s.number, open = wanted.open, assigned, "inbox issue edited");
            Ok(s.number)
        }
        None => {
            let (number, assigned) = ctx.gitea.open_issue(repo, &content).await?;
            if !wanted.open {
                ctx.gitea.edit_issue(repo, number, &content).await?;
            }
            tracing::info!(%repo, issue = number, open = wanted.open, assigned, "inbox issue opened");
            Ok(number)
        }
    }
}

/// The mapped logins whose users the authorizer says may approve `r`, outside its lineage.
async fn approvers(
    ctx: &Context,
    r: &ApprovalRequest,
    budget: Option<&Budget>,
) -> Result<Vec<String>, FeedbackError> {
    let Some(budget) = budget else {
        return Ok(Vec::new());
    };
    let namespace = r.namespace().unwrap_or_default();
    let candidates = inbox::candidates(r, &budget.spec.approval.gitea_user_map());
    authorized(ctx, &namespace, candidates).await
}

/// Of `candidates` (login, user), the logins whose users hold `approve` on ApprovalRequests of
/// `namespace`, as the authorizer answers now.
pub(super) async fn authorized(
    ctx: &Context,
    namespace: &str,
    candidates: Vec<(String, String)>,
) -> Result<Vec<String>, FeedbackError> {
    let mut logins = Vec::new();
    for (login, user) in candidates {
        if access::allowed(&ctx.client, &user, "approve", "approvalrequests", namespace).await? {
            logins.push(login);
        }
    }
    Ok(logins)
}

/// What the request's subject says now, from the watched caches.
fn subject_state(inbox: &Inbox, r: &ApprovalRequest) -> Option<SubjectState> {
    let namespace = r.namespace()?;
    let name = &r.spec.subject.name;
    let (phase, conditions) = match r.spec.subject.kind {
        SubjectKind::CategorizationPlan => {
            let plan = inbox.plans.get(&ObjectRef::new(name).within(&namespace))?;
            let status = plan.status.clone()?;
            (format!("{:?}", status.phase?), status.conditions)
        }
        SubjectKind::Transaction => {
            let tx = inbox
                .transactions
                .get(&ObjectRef::new(name).within(&namespace))?;
            let status = tx.status.clone()?;
            (format!("{:?}", status.phase?), status.conditions)
        }
    };
    let message = conditions::get(&conditions, "Ready")
        .map(|c| c.message.clone())
        .unwrap_or_default();
    Some(SubjectState { phase, message })
}

/// Comments once on the issue that `r` expired, mentioning its `escalateTo` logins.
async fn announce_expiry(
    inbox: &Inbox,
    repo: &str,
    number: i64,
    r: &ApprovalRequest,
) -> Result<(), FeedbackError> {
    let uid = r.uid().unwrap_or_default();
    if inbox
        .announced
        .lock()
        .expect("announced lock")
        .contains(&uid)
    {
        return Ok(());
    }
    let ctx = &inbox.ctx;
    let comments = ctx.gitea.list_comments(repo, number).await?;
    if escalation::is_announced(&comments, &ctx.bot, &uid) {
        tracing::debug!(request = %r.name_any(), %repo, issue = number, "expired request already announced in Gitea");
    } else {
        ctx.gitea
            .create_comment(repo, number, &escalation::comment(r))
            .await?;
        tracing::info!(request = %r.name_any(), %repo, issue = number, "expired request announced in Gitea");
    }
    inbox.announced.lock().expect("announced lock").insert(uid);
    Ok(())
}
