//! The GitOps loop closed on a real Gitea: `/agent suggest` opens a pull request with a plan,
//! merging it makes the ConfigRepo apply the plan, the preview comes back on the merged commit
//! (a commit status) and on the pull request (one comment), and `/agent approve` on that pull
//! request approves exactly that preview: one PATCH. The undo goes the same way. A learned rule
//! is proposed the same way, and never on a branch someone else pushed.

use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use ledgerops::api::agent_job::{AgentJob, JobPhase};
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::common::LocalRef;
use ledgerops::api::config_repo::ConfigRepo;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::rule::{CategorizationRule, CategorizationRuleSpec, RuleMatch, RulePhase};
use ledgerops::logic::config_repo::feedback;
use ledgerops::logic::rule::learn::candidate_name;
use ledgerops::logic::rule::proposal;
use ledgerops_e2e::gitea_api::{self, call as gitea_call};
use ledgerops_e2e::scenario::{PATCH, WAIT, bakery_and_train_plan, category};
use ledgerops_e2e::wait;
use ledgerops_e2e::world::World;
use ledgerops_testenv::gitea::User;
use reqwest::Method;
use serde_json::json;
use ynab_sim::demo;

/// The pull-request loop's world: a Gitea repository with its own controller, which Gitea tells
/// of comments and pushes.
async fn world(prefix: &str) -> World {
    let events = ["issue_comment", "pull_request_comment", "push"];
    World::build(prefix)
        .agent(&events)
        .config_repo_cache()
        .build()
        .await
}

/// The household's Budget (writes on, plans asked for) and the ConfigRepo following the Gitea
/// repository over HTTP with a token.
async fn household(w: &World) {
    household_with(w, json!({})).await;
}

/// Like [`household`], with `extra` merged into the ConfigRepo's spec.
async fn household_with(w: &World, extra: serde_json::Value) {
    w.sc.create_budget(
        "household",
        demo::TOKEN,
        json!({"writes": {"enabled": true, "batchWindow": "300ms"}}),
    )
    .await;
    w.sc.wait_budget("household", BudgetPhase::Ready).await;
    // Made by an owner (admin): it governs, so a merged rule is blessed.
    let mut spec = json!({"authority": "Govern"});
    for (k, v) in extra.as_object().into_iter().flatten() {
        spec[k] = v.clone();
    }
    w.follow_repo(spec).await;
}

/// The household, an issue "September" and the writer's `/agent suggest 2026-09` there: the
/// issue, the pull request the suggestion opened, and the plan it adds.
async fn september_suggested(w: &World) -> (i64, i64, String) {
    household(w).await;
    let issue = w.issue("September").await;
    let job = run_command(w, w.gitea().writer(), issue, "/agent suggest 2026-09").await;
    assert_eq!(phase(&job), Some(JobPhase::Succeeded), "{}", text(&job));
    let pr = pull_request(&job);
    let plan = plan_of(w, pr).await;
    (issue, pr, plan)
}

/// Comments `body` on `issue` as `user` and waits for its job to finish.
async fn run_command(w: &World, user: &User, issue: i64, body: &str) -> AgentJob {
    let id = w.comment(user, issue, body).await;
    let name = w.job_name(issue, id);
    w.wait_job(&name, "finished", |j| {
        matches!(
            j.status.as_ref().and_then(|s| s.phase),
            Some(JobPhase::Succeeded | JobPhase::Failed | JobPhase::Rejected)
        )
    })
    .await
}

/// Merges pull request `number` as the writer would; the merge commit.
async fn merge(w: &World, number: i64) -> String {
    gitea_api::merge(w.repo(), w.gitea().writer(), number).await
}

/// The latest status of `plan` on `commit`: state and description.
async fn commit_status(w: &World, commit: &str, plan: &str) -> Option<(String, String)> {
    let path = format!("/repos/{}/commits/{commit}/status", w.repo());
    let combined = gitea_call(Method::GET, &path, w.gitea().admin(), None).await;
    let context = feedback::context(plan);
    combined["statuses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["context"] == context.as_str())
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap_or_default().to_owned();
            (text("status"), text("description"))
        })
}

async fn wait_commit_state(w: &World, commit: &str, plan: &str, state: &str) -> String {
    let mut description = String::new();
    wait::eventually(
        &format!("commit status {state} for {plan}"),
        WAIT,
        async || match commit_status(w, commit, plan).await {
            Some((s, d)) if s == state => {
                description = d;
                true
            }
            _ => false,
        },
    )
    .await;
    description
}

/// The bot's comments on `number` that show a preview.
async fn previews(w: &World, number: i64) -> Vec<String> {
    w.bot_comments(number)
        .await
        .into_iter()
        .filter(|c| c.body.starts_with("<!-- ledgerops:preview "))
        .map(|c| c.body)
        .collect()
}

async fn wait_preview(w: &World, number: i64) -> String {
    wait::eventually("the preview comment", WAIT, async || {
        !previews(w, number).await.is_empty()
    })
    .await;
    previews(w, number).await.remove(0)
}

/// The pull request a finished job opened.
fn pull_request(job: &AgentJob) -> i64 {
    let url = job.status.as_ref().unwrap().pull_request_url.clone();
    let url = url.unwrap_or_else(|| panic!("no pull request: {:#?}", job.status));
    gitea_api::pull_number(&url)
}

/// The CategorizationPlan the pull request `number` adds (its only file).
async fn plan_of(w: &World, number: i64) -> String {
    let files = gitea_api::pull_request_files(w.repo(), number).await;
    let stem = files[0].rsplit('/').next().unwrap();
    stem.trim_end_matches(".yaml").to_owned()
}

/// Commits a new file `path` holding `content` on `branch` as the writer would push it; with
/// `from`, `branch` is made from that branch first.
async fn push_file(w: &World, path: &str, content: &str, branch: &str, from: Option<&str>) {
    let writer = w.gitea().writer();
    gitea_api::push_file(w.repo(), writer, path, content, branch, from).await;
}

/// Every pull request from `branch`, open or not.
async fn pulls_from(w: &World, branch: &str) -> Vec<serde_json::Value> {
    let pulls = gitea_call(
        Method::GET,
        &format!("/repos/{}/pulls?state=all&limit=50", w.repo()),
        w.gitea().admin(),
        None,
    )
    .await;
    let pulls = pulls.as_array().cloned().unwrap_or_default();
    pulls
        .into_iter()
        .filter(|p| p["head"]["ref"] == branch)
        .collect()
}

/// How often the controller logged that it refused a proposal's branch.
fn refusals(w: &World) -> usize {
    w.controller()
        .log()
        .matches("holds something other than rule")
        .count()
}

/// Waits until the controller refused a proposal's branch more than `before` times.
async fn wait_refusal(w: &World, before: usize) {
    wait::eventually("a refusal of the proposal's branch", WAIT, async || {
        refusals(w) > before
    })
    .await;
}

/// The train's rule as learning makes it from approving [`bakery_and_train_plan`], and the branch
/// ledgerops proposes it on.
fn learned_rail() -> (CategorizationRule, String) {
    let transport = category("Transport");
    let rail = candidate_name("RAIL CO", &transport);
    let learned = CategorizationRuleSpec {
        budget_ref: LocalRef {
            name: "household".into(),
        },
        matches: RuleMatch {
            payee_normalised: Some("RAIL CO".into()),
            ..RuleMatch::default()
        },
        category_id: transport,
        blessing: None,
    };
    let branch = proposal::branch(&rail, &proposal::key(&learned));
    (CategorizationRule::new(&rail, learned), branch)
}

/// A rule that would send every payee to Gifts, blessed with whatever merge brings it in.
fn everything_to_gifts() -> String {
    format!(
        "apiVersion: ledgerops.dev/v1alpha1\nkind: CategorizationRule\nmetadata:\n  name: everything-to-gifts\nspec:\n  budgetRef:\n    name: household\n  match:\n    payeePattern: \"*\"\n  categoryId: {}\n",
        category("Gifts")
    )
}

fn phase(job: &AgentJob) -> Option<JobPhase> {
    job.status.as_ref().and_then(|s| s.phase)
}

fn text(job: &AgentJob) -> String {
    serde_json::to_string(&job.status).unwrap()
}

#[tokio::test]
async fn a_suggested_plan_merged_is_previewed_on_its_pull_request_and_approved_there_once() {
    let w = world("pr-loop").await;
    // The suggestion arrives as a pull request; nothing is applied before it is merged.
    let (issue, pr, plan) = september_suggested(&w).await;
    assert!(
        w.sc.api::<CategorizationPlan>()
            .get_opt(&plan)
            .await
            .unwrap()
            .is_none(),
        "applied before the merge"
    );

    // Merged: the push makes the ConfigRepo apply it (its interval is an hour), and the preview
    // comes back as a pending commit status and one comment on the pull request.
    let merged = merge(&w, pr).await;
    let waiting = w.sc.wait_plan(&plan, PlanPhase::AwaitingApproval).await;
    let request = waiting.status.unwrap().approval_request.unwrap();
    let description = wait_commit_state(&w, &merged, &plan, "pending").await;
    assert!(description.contains(&request), "{description}");
    let preview = wait_preview(&w, pr).await;
    assert!(
        preview.contains(&format!("request={request} ")),
        "{preview}"
    );
    assert!(
        preview.contains("| transaction | date | payee |"),
        "{preview}"
    );
    assert_eq!(w.sc.writes().await, 0, "written before anyone approved");

    // A reader's approval is refused (write permission is needed), and changes nothing.
    let refused = run_command(&w, w.gitea().reader(), pr, "/agent approve").await;
    assert_ne!(
        phase(&refused),
        Some(JobPhase::Succeeded),
        "{}",
        text(&refused)
    );
    assert_eq!(w.sc.writes().await, 0);

    // The writer approves on the pull request: applied, with one bulk update.
    let approved = run_command(
        &w,
        w.gitea().writer(),
        pr,
        "/agent approve\nmatches the receipts",
    )
    .await;
    assert_eq!(
        phase(&approved),
        Some(JobPhase::Succeeded),
        "{}",
        text(&approved)
    );
    w.sc.wait_plan(&plan, PlanPhase::Applied).await;
    wait_commit_state(&w, &merged, &plan, "success").await;
    assert_eq!(w.sc.requests(PATCH).await, 1);
    assert_eq!(w.sc.writes().await, 1);
    assert_eq!(previews(&w, pr).await.len(), 1, "one preview comment");

    // Approving again on the same pull request approves nothing more.
    let again = run_command(&w, w.gitea().writer(), pr, "/agent approve").await;
    assert_ne!(phase(&again), Some(JobPhase::Succeeded), "{}", text(&again));

    // The undo: a pull request of its own, merged, previewed there, approved there.
    let undo_job = run_command(
        &w,
        w.gitea().writer(),
        issue,
        &format!("/agent undo {plan}"),
    )
    .await;
    assert_eq!(
        phase(&undo_job),
        Some(JobPhase::Succeeded),
        "{}",
        text(&undo_job)
    );
    let undo_pr = pull_request(&undo_job);
    let undo_plan = plan_of(&w, undo_pr).await;
    let undo_merged = merge(&w, undo_pr).await;
    w.sc.wait_plan(&undo_plan, PlanPhase::AwaitingApproval)
        .await;
    wait_commit_state(&w, &undo_merged, &undo_plan, "pending").await;
    wait_preview(&w, undo_pr).await;
    assert_eq!(w.sc.requests(PATCH).await, 1, "the undo waits for a person");
    let undone = run_command(&w, w.gitea().writer(), undo_pr, "/agent approve").await;
    assert_eq!(
        phase(&undone),
        Some(JobPhase::Succeeded),
        "{}",
        text(&undone)
    );
    w.sc.wait_plan(&undo_plan, PlanPhase::Applied).await;
    wait_commit_state(&w, &undo_merged, &undo_plan, "success").await;
    assert_eq!(w.sc.requests(PATCH).await, 2);
    assert_eq!(w.sc.writes().await, 2);
    // The applied plan's own status stays on its commit.
    assert_eq!(
        commit_status(&w, &merged, &plan)
            .await
            .map(|s| s.0)
            .as_deref(),
        Some("success")
    );
    let log = w.controller().log();
    assert!(
        !log.contains(w.gitea().admin().token()),
        "a token reached the log"
    );
}

#[tokio::test]
async fn an_approval_with_exceptions_on_the_pull_request_writes_the_edited_plan_and_says_so_there()
{
    let w = world("pr-edits").await;
    let (_, pr, plan) = september_suggested(&w).await;
    merge(&w, pr).await;
    let waiting = w.sc.wait_plan(&plan, PlanPhase::AwaitingApproval).await;
    let request = waiting.status.unwrap().approval_request.unwrap();
    wait_preview(&w, pr).await;
    let assignments =
        w.sc.api::<CategorizationPlan>()
            .get(&plan)
            .await
            .unwrap()
            .spec
            .assignments
            .unwrap();
    assert!(assignments.len() >= 2, "{assignments:?}");
    let (dropped, changed) = (&assignments[0], &assignments[1]);
    let to = if changed.category_id == category("Gifts") {
        "Groceries"
    } else {
        "Gifts"
    };

    // A stray line is refused before anything is recorded.
    let stray = format!("/agent approve {request} except tx-nope");
    let refused = run_command(&w, w.gitea().writer(), pr, &stray).await;
    assert_eq!(
        phase(&refused),
        Some(JobPhase::Rejected),
        "{}",
        text(&refused)
    );
    assert!(
        text(&refused).contains("not in the proposal"),
        "{}",
        text(&refused)
    );

    // One comment approves the plan less one line, with another line in another category.
    let command = format!(
        "/agent approve {request} except {}, {}={to}\nthe first one was a refund",
        dropped.transaction_id, changed.transaction_id
    );
    let approved = run_command(&w, w.gitea().writer(), pr, &command).await;
    assert_eq!(
        phase(&approved),
        Some(JobPhase::Succeeded),
        "{}",
        text(&approved)
    );
    let applied = w.sc.wait_plan(&plan, PlanPhase::Applied).await;
    assert_eq!(w.sc.requests(PATCH).await, 1);
    assert_eq!(w.sc.ynab_category(&dropped.transaction_id).await, None);
    assert_eq!(
        w.sc.ynab_category(&changed.transaction_id).await,
        Some(category(to))
    );
    let record = applied.status.unwrap().decision.unwrap();
    assert_eq!(record.by, format!("gitea:{}", w.gitea().writer().login()));
    assert_eq!(
        record.comment.as_deref(),
        Some("the first one was a refund")
    );
    let edits = record.edits.unwrap();
    assert_eq!(edits.drop, std::slice::from_ref(&dropped.transaction_id));
    assert_eq!(edits.set[0].category_id, category(to));

    // The pull request that brought the plan is told, once, in the bot's words.
    wait::eventually("the edits comment", WAIT, async || {
        gitea_api::comments(w.repo(), pr).await.iter().any(|c| {
            c.author == w.gitea().bot().login() && c.body.starts_with("<!-- ledgerops:edits ")
        })
    })
    .await;
    let edits_comments: Vec<String> = gitea_api::comments(w.repo(), pr)
        .await
        .into_iter()
        .filter(|c| c.body.starts_with("<!-- ledgerops:edits "))
        .map(|c| c.body)
        .collect();
    assert_eq!(edits_comments.len(), 1, "{edits_comments:?}");
    assert!(
        edits_comments[0].contains(&format!(
            "with edits: dropped {}",
            dropped.transaction_id.replace('-', "\\-")
        )) && edits_comments[0].contains(to),
        "{}",
        edits_comments[0]
    );
}

#[tokio::test]
async fn a_rule_learned_from_approvals_is_proposed_and_blessed_by_merging_its_pull_request() {
    let w = world("pr-rules").await;
    household_with(&w, json!({"proposeRulesAfter": 1})).await;
    w.sc.create_plan("september", "household", bakery_and_train_plan())
        .await;
    w.sc.approve_plan("september").await;

    // One approval is this repository's bar: the train's rule comes as a pull request.
    let rail = candidate_name("RAIL CO", &category("Transport"));
    let rules: Api<CategorizationRule> = w.sc.api();
    let proposed = wait::until(&rules, &rail, WAIT, |r| {
        r.status.as_ref().is_some_and(|s| s.proposal.is_some())
    })
    .await;
    assert_eq!(
        proposed.status.as_ref().and_then(|s| s.phase),
        Some(RulePhase::Candidate),
        "proposed, not blessed"
    );
    let proposal = proposed.status.unwrap().proposal.unwrap();
    assert_eq!(proposal.repository, w.repo());
    let number = gitea_api::pull_number(&proposal.pull_request_url);
    let files = gitea_api::pull_request_files(w.repo(), number).await;
    assert_eq!(files, [format!("rules/{rail}.yaml")]);
    let pr = gitea_api::pull_request(w.repo(), number).await;
    let body = pr["body"].as_str().unwrap_or_default();
    assert!(
        body.contains("blesses it as `configrepo:household`") && body.contains("`tx-049`"),
        "{body}"
    );

    // Merged: the ConfigRepo applies it, blessed by the merge.
    merge(&w, number).await;
    let blessed = wait::until(&rules, &rail, WAIT, |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(RulePhase::Blessed)
    })
    .await;
    assert_eq!(blessed.spec.blessing.unwrap().by, "configrepo:household");
    let pulls = gitea_call(
        Method::GET,
        &format!("/repos/{}/pulls?state=all&limit=50", w.repo()),
        w.gitea().admin(),
        None,
    )
    .await;
    let branch = format!("ledgerops-rule-{rail}-");
    let for_rail = pulls
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["head"]["ref"]
                .as_str()
                .unwrap_or_default()
                .starts_with(&branch)
        })
        .count();
    assert_eq!(for_rail, 1, "proposed once");
    assert_eq!(
        w.sc.requests(PATCH).await,
        1,
        "proposing writes nothing to YNAB"
    );
}

#[tokio::test]
async fn a_branch_someone_else_pushed_under_a_proposals_name_is_never_vouched_for() {
    let w = world("pr-rules-foreign").await;
    let (learned, branch) = learned_rail();
    let rail = learned.name_any();
    // The writer pushes, under the name ledgerops will propose on, a rule of their own.
    let theirs = format!(
        "apiVersion: ledgerops.dev/v1alpha1\nkind: CategorizationRule\nmetadata:\n  name: {rail}\nspec:\n  budgetRef:\n    name: household\n  match:\n    payeePattern: \"*\"\n  categoryId: {}\n",
        category("Gifts")
    );
    let file = format!("rules/{rail}.yaml");
    push_file(&w, &file, &theirs, &branch, Some("main")).await;
    household_with(&w, json!({"proposeRulesAfter": 1})).await;
    w.sc.create_plan("september", "household", bakery_and_train_plan())
        .await;
    w.sc.approve_plan("september").await;

    // The Candidate is due, but its branch is not ledgerops's: no pull request, nothing recorded.
    wait_refusal(&w, 0).await;
    let rules: Api<CategorizationRule> = w.sc.api();
    let rule = rules.get(&rail).await.unwrap();
    let status = rule.status.unwrap_or_default();
    assert!(status.proposal.is_none(), "{status:?}");
    assert_eq!(status.learning.map(|l| l.confirmations), Some(1));
    let pulls = pulls_from(&w, &branch).await;
    assert!(pulls.is_empty(), "{pulls:?}");
}

#[tokio::test]
async fn a_branch_pushed_with_the_exact_manifest_and_more_gets_no_pull_request() {
    let w = world("pr-rules-more").await;
    let (learned, branch) = learned_rail();
    let rail = learned.name_any();
    // The writer pushes, under the proposal's name, exactly the file ledgerops would write, and
    // another rule beside it that merging would bless too.
    let manifest = proposal::manifest(&learned).unwrap();
    let file = format!("rules/{rail}.yaml");
    push_file(&w, &file, &manifest, &branch, Some("main")).await;
    push_file(
        &w,
        "rules/everything-to-gifts.yaml",
        &everything_to_gifts(),
        &branch,
        None,
    )
    .await;
    household_with(&w, json!({"proposeRulesAfter": 1})).await;
    w.sc.create_plan("september", "household", bakery_and_train_plan())
        .await;
    w.sc.approve_plan("september").await;

    // The whole branch is looked at before anything is opened: no pull request, nothing recorded.
    wait_refusal(&w, 0).await;
    assert!(
        w.controller()
            .log()
            .contains("found: rules/everything-to-gifts.yaml"),
        "the refusal names the other file"
    );
    let rules: Api<CategorizationRule> = w.sc.api();
    let status = rules.get(&rail).await.unwrap().status.unwrap_or_default();
    assert!(status.proposal.is_none(), "{status:?}");
    let pulls = pulls_from(&w, &branch).await;
    assert!(pulls.is_empty(), "{pulls:?}");
}

#[tokio::test]
async fn a_push_to_a_proposed_rule_s_branch_closes_its_pull_request_and_withdraws_the_proposal() {
    let w = world("pr-rules-pushed").await;
    household_with(&w, json!({"proposeRulesAfter": 1})).await;
    w.sc.create_plan("september", "household", bakery_and_train_plan())
        .await;
    w.sc.approve_plan("september").await;
    let (_, branch) = learned_rail();
    let rail = candidate_name("RAIL CO", &category("Transport"));
    let rules: Api<CategorizationRule> = w.sc.api();
    let proposed = wait::until(&rules, &rail, WAIT, |r| {
        r.status.as_ref().is_some_and(|s| s.proposal.is_some())
    })
    .await;
    let number =
        gitea_api::pull_number(&proposed.status.unwrap().proposal.unwrap().pull_request_url);
    assert_eq!(
        gitea_api::pull_request(w.repo(), number).await["head"]["ref"],
        branch.as_str()
    );

    // After the pull request was opened and recorded, the writer adds a file to its branch.
    push_file(
        &w,
        "rules/everything-to-gifts.yaml",
        &everything_to_gifts(),
        &branch,
        None,
    )
    .await;

    // The push has the pull request looked at again: closed, saying what was found and why.
    wait::eventually("the pull request closed", WAIT, async || {
        gitea_api::pull_request(w.repo(), number).await["state"] == "closed"
    })
    .await;
    let pr = gitea_api::pull_request(w.repo(), number).await;
    assert_eq!(pr["merged"], false, "{pr}");
    let withdrawals = async || -> Vec<String> {
        gitea_api::comments(w.repo(), number)
            .await
            .into_iter()
            .filter(|c| c.author == w.gitea().bot().login())
            .filter(|c| {
                c.body
                    .contains("does not vouch for content it did not write")
            })
            .map(|c| c.body)
            .collect()
    };
    let said = withdrawals().await;
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("`rules/everything-to-gifts.yaml`"),
        "{}",
        said[0]
    );
    assert!(!said[0].contains("payeePattern"), "no content: {}", said[0]);

    // The rule no longer counts as proposed, and says why.
    let rule = wait::until(&rules, &rail, WAIT, |r| {
        r.status
            .as_ref()
            .and_then(|s| s.proposal.as_ref())
            .is_some_and(|p| p.withdrawn.is_some())
    })
    .await;
    assert!(!proposal::proposed(&rule), "{:?}", rule.status);
    let withdrawn = rule.status.unwrap().proposal.unwrap().withdrawn.unwrap();
    assert_eq!(withdrawn.found, ["rules/everything-to-gifts.yaml"]);

    // Another push to the branch: refused again, neither commented twice nor proposed anew.
    let before = refusals(&w);
    push_file(&w, "rules/more.yaml", "kind: ConfigMap\n", &branch, None).await;
    wait_refusal(&w, before).await;
    assert_eq!(withdrawals().await.len(), 1, "commented once");
    assert_eq!(
        pulls_from(&w, &branch).await.len(),
        1,
        "no new pull request"
    );

    // The branch deleted, ledgerops proposes the rule again in a new pull request of its own
    // (the ConfigRepo touched so that it looks before its resync).
    let path = format!("/repos/{}/branches/{branch}", w.repo());
    gitea_call(Method::DELETE, &path, w.gitea().writer(), None).await;
    let touch = json!({"metadata": {"labels": {"touched": "yes"}}});
    w.sc.api::<ConfigRepo>()
        .patch("household", &PatchParams::default(), &Patch::Merge(touch))
        .await
        .unwrap();
    let again = wait::until(&rules, &rail, WAIT, proposal::proposed).await;
    let url = again.status.unwrap().proposal.unwrap().pull_request_url;
    let renewed = gitea_api::pull_number(&url);
    assert_ne!(renewed, number);
    let files = gitea_api::pull_request_files(w.repo(), renewed).await;
    assert_eq!(files, [format!("rules/{rail}.yaml")]);
}
