//! Running a parsed command. Runs only after JobStarted is durable and is never replayed, so
//! its effects (a decision written, a branch and a pull request opened) happen at most once.

use std::collections::HashMap;

use k8s_openapi::jiff::Timestamp;
use kube::api::{ListParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::json;

use super::context::AgentContext;
use super::hooks::Point;
use super::store::Latest;
use crate::api::agent_job::AgentJob;
use crate::api::approval::ApprovalRequest;
use crate::api::budget::Budget;
use crate::api::common::LocalRef;
use crate::api::plan::{Assignment, CategorizationPlan, CategorizationPlanSpec};
use crate::api::rule::CategorizationRule;
use crate::api::transaction::Transaction;
use crate::logic::job::classify::{self, Source, Suggestion};
use crate::logic::job::cleanup;
use crate::logic::job::command::{Command, Exception, HELP};
use crate::logic::job::decidable::decidable;
use crate::logic::job::report::{self, cell};
use crate::logic::job::rules_report::rules_report;
use crate::logic::job::state::{EventKind, JobEvent, JobState};
use crate::logic::rule::RuleBook;
use crate::logic::values::money;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done; the comment body to show.
    Completed(String),
    /// A precondition failed (no such object, already decided …); the reason to show.
    Rejected(String),
    /// Something broke.
    Failed(String),
}

/// Records a running command's progress as events (JobProgress, BranchCreated,
/// PullRequestOpened), each with its own id.
pub struct Reporter<'a> {
    ctx: &'a AgentContext,
    job: &'a Latest,
    step: std::sync::atomic::AtomicU32,
}

impl<'a> Reporter<'a> {
    pub fn new(ctx: &'a AgentContext, job: &'a Latest) -> Self {
        Self {
            ctx,
            job,
            step: std::sync::atomic::AtomicU32::new(0),
        }
    }

    async fn record(&self, id: String, kind: EventKind) -> Result<(), String> {
        let event = JobEvent::new(id, Timestamp::now(), kind);
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.ctx.store.evolve_latest(self.job, &event).await {
                Ok(_) => return Ok(()),
                Err(e) if attempt >= 5 => return Err(e.to_string()),
                Err(_) => tokio::time::sleep(super::backoff::capped_backoff(attempt)).await,
            }
        }
    }

    pub async fn progress(&self, stage: &str) -> Result<(), String> {
        let n = self.step.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        self.record(
            format!("progress:{n}"),
            EventKind::JobProgress {
                stage: stage.into(),
            },
        )
        .await
    }
}

/// Runs the job's command.
pub async fn run(
    ctx: &AgentContext,
    job: &AgentJob,
    state: &JobState,
    reporter: &Reporter<'_>,
) -> Outcome {
    let Some(command) = &state.command else {
        return Outcome::Failed("the job has no parsed command".into());
    };
    match command {
        Command::Help => Outcome::Completed(HELP.to_owned()),
        Command::Status => status(ctx).await,
        Command::Approve {
            request: Some(request),
            comment,
            except,
        } => {
            let verdict = Verdict::Approve(except);
            decide(ctx, job, request, verdict, comment.as_deref()).await
        }
        Command::Approve {
            request: None,
            comment,
            ..
        } => super::approve_shown::run(ctx, job, comment.as_deref()).await,
        Command::Reject { request, reason } => {
            decide(ctx, job, request, Verdict::Reject, Some(reason)).await
        }
        Command::Suggest { month } => suggest(ctx, job, month.as_deref(), reporter).await,
        Command::Undo { plan } => undo(ctx, job, plan, reporter).await,
        Command::Rules => rules(ctx).await,
    }
}

/// The namespace's rules from the shared cache, with category names from the mirrors of the
/// namespace's Budgets.
async fn rules(ctx: &AgentContext) -> Outcome {
    let ns = ctx.store.namespace();
    let budgets = match Api::<Budget>::namespaced(ctx.store.client().clone(), ns)
        .list(&ListParams::default())
        .await
    {
        Ok(l) => l.items,
        Err(e) => return kube_failed("listing Budgets", e),
    };
    ctx.rules_listed.clone().wait().await;
    let all = ctx.rules.state();
    let here: Vec<&CategorizationRule> = all
        .iter()
        .map(AsRef::as_ref)
        .filter(|r| r.metadata.namespace.as_deref() == Some(ns))
        .collect();
    let mut names: HashMap<(String, String), String> = HashMap::new();
    for budget in budgets.iter().map(ResourceExt::name_any) {
        let slot = ctx.budget_links.mirror(ns, &budget);
        let slot = slot.state.read().await;
        for r in here.iter().filter(|r| r.spec.budget_ref.name == budget) {
            if let Some(c) = slot.mirror.categories.get(&r.spec.category_id) {
                names.insert((budget.clone(), r.spec.category_id.clone()), c.name.clone());
            }
        }
    }
    let category = |budget: &str, id: &str| names.get(&(budget.to_owned(), id.to_owned())).cloned();
    Outcome::Completed(rules_report(&here, ns, &category))
}

pub(super) fn kube_failed(what: &str, e: kube::Error) -> Outcome {
    Outcome::Failed(format!("{what}: {e}"))
}

async fn status(ctx: &AgentContext) -> Outcome {
    let client = ctx.store.client().clone();
    let ns = ctx.store.namespace();
    let lp = ListParams::default();
    let approvals = match Api::<ApprovalRequest>::namespaced(client.clone(), ns)
        .list(&lp)
        .await
    {
        Ok(l) => l.items,
        Err(e) => return kube_failed("listing ApprovalRequests", e),
    };
    let transactions = match Api::<Transaction>::namespaced(client.clone(), ns)
        .list(&lp)
        .await
    {
        Ok(l) => l.items,
        Err(e) => return kube_failed("listing Transactions", e),
    };
    let budgets = match Api::<Budget>::namespaced(client, ns).list(&lp).await {
        Ok(l) => l.items,
        Err(e) => return kube_failed("listing Budgets", e),
    };
    Outcome::Completed(report::status_report(&approvals, &transactions, &budgets))
}

/// A decision made through Gitea: an approval (with the approver's exceptions) or a rejection.
pub(super) enum Verdict<'a> {
    Approve(&'a [Exception]),
    Reject,
}

/// Records a decision on an ApprovalRequest as `gitea:<login>`, only on a request that is
/// Pending and not expired (see [`decidable`]). The admission policy lets only the controller's
/// service account write such a decision; the executor authorized the job through Gitea right
/// before this runs.
pub(super) async fn decide(
    ctx: &AgentContext,
    job: &AgentJob,
    request: &str,
    verdict: Verdict<'_>,
    comment: Option<&str>,
) -> Outcome {
    let api: Api<ApprovalRequest> =
        Api::namespaced(ctx.store.client().clone(), ctx.store.namespace());
    let current = match api.get_opt(request).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            return Outcome::Rejected(format!(
                "there is no ApprovalRequest `{request}` in namespace `{}`",
                ctx.store.namespace()
            ));
        }
        Err(e) => return kube_failed("reading the ApprovalRequest", e),
    };
    if let Err(refusal) = decidable(
        request,
        current.status.as_ref().and_then(|s| s.phase),
        current.spec.decision.as_ref(),
        current.spec.expires_at.0,
        Timestamp::now(),
    ) {
        return Outcome::Rejected(refusal);
    }
    let by = format!("gitea:{}", job.spec.author);
    let (word, mut decision) = match verdict {
        Verdict::Approve(_) => ("Approved", json!({"verdict": "Approve", "by": by})),
        Verdict::Reject => ("Rejected", json!({"verdict": "Reject", "by": by})),
    };
    if let Some(c) = comment {
        decision["comment"] = json!(c);
    }
    let mut edited = String::new();
    if let Verdict::Approve(except) = verdict
        && !except.is_empty()
    {
        let (edits, summary) = match super::edits::of(ctx, &current, except).await {
            Ok(found) => found,
            Err(outcome) => return outcome,
        };
        decision["edits"] = json!(edits);
        edited = format!(" with edits ({})", cell(&summary));
    }
    let patch = json!({"spec": {"decision": decision}});
    match api
        .patch(request, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Outcome::Completed(format!(
            "{word} ApprovalRequest `{request}` ({}){edited}, recorded as `{by}`.",
            cell(&current.spec.summary)
        )),
        Err(kube::Error::Api(s)) if s.code == 422 || s.code == 403 || s.code == 409 => {
            Outcome::Rejected(format!(
                "the API server refused the decision on `{request}`: {}",
                cell(&s.message)
            ))
        }
        Err(e) => kube_failed("writing the decision", e),
    }
}

/// The Budget a suggestion is for: the only one in the namespace, or the first by name.
async fn pick_budget(ctx: &AgentContext) -> Result<Option<Budget>, kube::Error> {
    let api: Api<Budget> = Api::namespaced(ctx.store.client().clone(), ctx.store.namespace());
    let mut budgets = api.list(&ListParams::default()).await?.items;
    budgets.sort_by_key(|b| b.name_any());
    Ok(budgets.into_iter().next())
}

fn plan_yaml(name: &str, namespace: &str, spec: &CategorizationPlanSpec) -> Result<String, String> {
    let plan = CategorizationPlan {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..Default::default()
        },
        spec: spec.clone(),
        status: None,
    };
    serde_yaml::to_string(&plan).map_err(|e| e.to_string())
}

/// Commits `yaml` on the job's new branch and opens a pull request; records both as soon as
/// they exist.
async fn open_pull_request(
    ctx: &AgentContext,
    job: &AgentJob,
    reporter: &Reporter<'_>,
    file: &str,
    yaml: &str,
    title: &str,
    body: &str,
) -> Result<String, Outcome> {
    let repo = &job.spec.repository;
    let branch = cleanup::branch_of(&job.name_any());
    let base = ctx
        .gitea
        .default_branch(repo)
        .await
        .map_err(|e| Outcome::Failed(e.to_string()))?;
    reporter
        .record(
            "branch".into(),
            EventKind::BranchCreated {
                branch: branch.clone(),
            },
        )
        .await
        .map_err(Outcome::Failed)?;
    let _ = reporter.progress("writing the plan to a branch").await;
    ctx.gitea
        .create_file_on_new_branch(repo, file, yaml, title, &base, &branch)
        .await
        .map_err(|e| Outcome::Failed(e.to_string()))?;
    let _ = reporter.progress("opening the pull request").await;
    let pr = ctx
        .gitea
        .create_pull_request(repo, &branch, &base, title, body)
        .await
        .map_err(|e| Outcome::Failed(e.to_string()))?;
    ctx.hooks
        .pause(
            Point::PullRequestUnrecorded,
            &job.name_any(),
            &job.spec.command,
        )
        .await;
    reporter
        .record(
            "pull-request".into(),
            EventKind::PullRequestOpened {
                url: pr.url.clone(),
            },
        )
        .await
        .map_err(Outcome::Failed)?;
    Ok(pr.url)
}

fn short_id(job: &AgentJob) -> String {
    job.name_any()
        .trim_start_matches("aj-")
        .chars()
        .take(8)
        .collect()
}

async fn suggest(
    ctx: &AgentContext,
    job: &AgentJob,
    month: Option<&str>,
    reporter: &Reporter<'_>,
) -> Outcome {
    let _ = reporter.progress("reading the budget mirror").await;
    let budget = match pick_budget(ctx).await {
        Ok(Some(b)) => b,
        Ok(None) => {
            return Outcome::Rejected(format!(
                "there is no Budget in namespace `{}`",
                ctx.store.namespace()
            ));
        }
        Err(e) => return kube_failed("listing Budgets", e),
    };
    let budget_name = budget.name_any();
    // Without the admission policies anyone could have blessed a rule: use none (fail closed).
    let (book, unused) = match ctx.admission.verified() {
        Ok(()) => {
            ctx.rules_listed.clone().wait().await;
            let rules = ctx.rules.state();
            let book = RuleBook::of_budget(
                rules.iter().map(AsRef::as_ref),
                ctx.store.namespace(),
                &budget_name,
            );
            (book, String::new())
        }
        Err(why) => (
            RuleBook::default(),
            format!("\n\nNo CategorizationRule was used: {why}"),
        ),
    };
    let (suggestions, digits) = {
        let slot = ctx.budget_links.mirror(ctx.store.namespace(), &budget_name);
        let slot = slot.state.read().await;
        if slot.mirror.server_knowledge == 0 {
            return Outcome::Rejected(format!(
                "Budget `{budget_name}` has not synced yet; try again once it is Ready"
            ));
        }
        let digits = slot
            .mirror
            .currency
            .as_ref()
            .map(|c| c.decimal_digits)
            .unwrap_or(2);
        (classify::suggest(&slot.mirror, &book, month), digits)
    };
    let scope = month.map(|m| format!(" in {m}")).unwrap_or_default();
    if suggestions.is_empty() {
        return Outcome::Completed(format!(
            "No suggestion: no Blessed CategorizationRule and no payee's history speaks for an uncategorized transaction{scope} of Budget `{budget_name}`.{unused}"
        ));
    }
    let name = format!(
        "suggest-{}{}",
        month.map(|m| format!("{m}-")).unwrap_or_default(),
        short_id(job)
    );
    let spec = CategorizationPlanSpec {
        budget_ref: LocalRef {
            name: budget_name.clone(),
        },
        assignments: Some(
            suggestions
                .iter()
                .map(|s| Assignment {
                    transaction_id: s.transaction_id.clone(),
                    category_id: s.category_id.clone(),
                })
                .collect(),
        ),
        undo_of: None,
        description: Some(format!(
            "Suggested by /agent suggest from @{} for {} uncategorized transaction(s){scope}.",
            job.spec.author,
            suggestions.len()
        )),
    };
    let yaml = match plan_yaml(&name, ctx.store.namespace(), &spec) {
        Ok(y) => y,
        Err(e) => return Outcome::Failed(e),
    };
    let table = suggestion_table(&suggestions, digits);
    let file = format!("{}/{name}.yaml", ctx.plans_dir.trim_end_matches('/'));
    let title = format!("Categorize {} transaction(s){scope}", suggestions.len());
    let pr_body = format!(
        "CategorizationPlan `{name}` for Budget `{budget_name}`, suggested from past categories.\n\n{table}\nMerging applies it through the usual preview and approval."
    );
    match open_pull_request(ctx, job, reporter, &file, &yaml, &title, &pr_body).await {
        Ok(url) => Outcome::Completed(format!(
            "Suggested categories for {} transaction(s){scope} of Budget `{budget_name}`: {url}\n\n{table}{unused}",
            suggestions.len()
        )),
        Err(o) => o,
    }
}

fn suggestion_table(suggestions: &[Suggestion], digits: u8) -> String {
    let mut t =
        String::from("| date | payee | amount | category | from |\n|---|---|---|---|---|\n");
    for s in suggestions {
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            s.date,
            cell(&s.payee),
            money::to_decimal(s.amount, digits),
            cell(&s.category_name),
            cell(&from(s))
        ));
    }
    t
}

/// Where a suggestion comes from, in words.
fn from(s: &Suggestion) -> String {
    let history = format!("history: {}% ({} before)", s.confidence, s.support);
    match &s.source {
        Source::Rules(rules) => format!("rule {}", rules.join(", ")),
        Source::History => history,
        Source::HistoryRulesDisagree(rules) => {
            format!("{history}; rules {} disagree", rules.join(", "))
        }
    }
}

async fn undo(ctx: &AgentContext, job: &AgentJob, plan: &str, reporter: &Reporter<'_>) -> Outcome {
    let api: Api<CategorizationPlan> =
        Api::namespaced(ctx.store.client().clone(), ctx.store.namespace());
    let original = match api.get_opt(plan).await {
        Ok(Some(p)) => p,
        Ok(None) => {
            return Outcome::Rejected(format!(
                "there is no CategorizationPlan `{plan}` in namespace `{}`",
                ctx.store.namespace()
            ));
        }
        Err(e) => return kube_failed("reading the CategorizationPlan", e),
    };
    if original.spec.undo_of.is_some() {
        return Outcome::Rejected(format!(
            "`{plan}` is itself an undo; undo the original instead"
        ));
    }
    let name = format!("undo-{}", crate::logic::job::state::truncate(plan, 200))
        .trim_end_matches('…')
        .to_owned();
    let spec = CategorizationPlanSpec {
        budget_ref: original.spec.budget_ref.clone(),
        assignments: None,
        undo_of: Some(plan.to_owned()),
        description: Some(format!(
            "Undo of `{plan}`, asked by @{} through /agent undo.",
            job.spec.author
        )),
    };
    let yaml = match plan_yaml(&name, ctx.store.namespace(), &spec) {
        Ok(y) => y,
        Err(e) => return Outcome::Failed(e),
    };
    let file = format!("{}/{name}.yaml", ctx.plans_dir.trim_end_matches('/'));
    let title = format!("Undo CategorizationPlan {plan}");
    let body = format!(
        "CategorizationPlan `{name}` with `undoOf: {plan}`. Merging previews the revert and asks for approval."
    );
    match open_pull_request(ctx, job, reporter, &file, &yaml, &title, &body).await {
        Ok(url) => Outcome::Completed(format!("Opened {url} to undo CategorizationPlan `{plan}`.")),
        Err(o) => o,
    }
}
