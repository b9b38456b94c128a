//! Whether the authority behind a write still holds, asked right before it: the questions
//! `logic::approval::powers` picks, put to the API server's authorizer. Any answer but yes holds the
//! write (fail closed), with a message naming the user, the verb and the role.

use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;

use super::{Context, Error};
use crate::api::approval::ApprovalRequest;
use crate::api::budget::Budget;
use crate::api::common::GROUP;
use crate::api::config_repo::{ConfigRepo, RepoAuthority};
use crate::api::rule::CategorizationRule;
use crate::k8s::access;
use crate::logic::approval::lineage;
use crate::logic::approval::powers::{self as authority, BlessingCheck, DecisionCheck, Question};

/// `Err(message)`: the authority does not hold, and why.
pub type Verdict = Result<(), String>;

/// Whether the approval on `request` may be followed for a subject whose gathered lineage is
/// now `subject_lineage`: four eyes against everyone who shaped it (when the Budget, now or when
/// the request was opened, asks for them), then `approve`, asked afresh of the decider (a Gitea
/// login through the Budget's mapping).
pub async fn decision_followed(
    ctx: &Context,
    request: &ApprovalRequest,
    subject_lineage: &[String],
    budget: &Budget,
) -> Result<Verdict, Error> {
    let name = request.name_any();
    let gitea_users = budget.spec.approval.gitea_user_map();
    let four_eyes = budget.spec.approval.four_eyes;
    match authority::decision_on(request, subject_lineage, &gitea_users, four_eyes) {
        DecisionCheck::Ask(q) => {
            let what = format!("The approval of ApprovalRequest {name} cannot be followed");
            let namespace = request.namespace().unwrap_or_default();
            ask(ctx, &q, &namespace, &what, false).await
        }
        DecisionCheck::Gitea => Ok(Ok(())),
        DecisionCheck::Refused(message) => Ok(Err(message)),
    }
}

/// Whether `rule`'s blessing counts: four eyes against everyone who shaped it when the
/// Budget `budget` asks for them, then `bless` (or, for a merge, the ConfigRepo still governs).
pub async fn blessing_counts(
    ctx: &Context,
    rule: &CategorizationRule,
    budget: Option<&Budget>,
) -> Result<Verdict, Error> {
    let Some(blessing) = &rule.spec.blessing else {
        return Ok(Err("not blessed".into()));
    };
    let four_eyes = budget.is_none_or(|b| b.spec.approval.four_eyes);
    let namespace = rule.namespace().unwrap_or_default();
    let name = rule.name_any();
    let lineage = match super::lineage::gathered(ctx, &rule.metadata, budget) {
        Ok(lineage) => lineage,
        Err(why) => return Ok(Err(format!("CategorizationRule {name}: {why}"))),
    };
    match authority::blessing(&name, &blessing.by, &lineage, four_eyes) {
        BlessingCheck::Ask(q) => {
            let what = format!("The blessing of CategorizationRule {name} does not count");
            ask(ctx, &q, &namespace, &what, true).await
        }
        BlessingCheck::ConfigRepo(repo) => repo_governs(ctx, &namespace, &repo).await,
        BlessingCheck::Refused(message) => Ok(Err(message)),
    }
}

/// Whether the ConfigRepo `name` of `namespace` governs, as the shared cache has it (the
/// authorizer is asked afresh).
async fn repo_governs(ctx: &Context, namespace: &str, name: &str) -> Result<Verdict, Error> {
    match ctx.repos.get(&ObjectRef::new(name).within(namespace)) {
        Some(repo) => governs(ctx, &repo).await,
        None => Ok(Err(format!(
            "ConfigRepo {name} is gone: what it blessed is no longer backed by an owner"
        ))),
    }
}

/// Whether `repo` governs: it asks for `Govern` (which admission lets only an owner set), and
/// everyone who shaped it still holds `govern` on configrepos.
pub async fn governs(ctx: &Context, repo: &ConfigRepo) -> Result<Verdict, Error> {
    let name = repo.name_any();
    if repo.spec.authority != RepoAuthority::Govern {
        return Ok(Err(format!(
            "ConfigRepo {name} has authority Propose: it declares Transactions, CategorizationPlans and unblessed CategorizationRules only (an owner, holding govern, sets spec.authority: Govern)"
        )));
    }
    let lineage = lineage::of(repo.metadata.annotations.as_ref());
    let questions = match authority::repo_governors(&name, &lineage) {
        Ok(questions) => questions,
        Err(message) => return Ok(Err(message)),
    };
    // It has no more authority than the least of those who shaped it.
    let namespace = repo.namespace().unwrap_or_default();
    let what = format!("ConfigRepo {name} cannot govern");
    for q in &questions {
        if let Err(why) = ask(ctx, q, &namespace, &what, true).await? {
            return Ok(Err(why));
        }
    }
    Ok(Ok(()))
}

async fn ask(
    ctx: &Context,
    q: &Question,
    namespace: &str,
    what: &str,
    reuse: bool,
) -> Result<Verdict, Error> {
    let verb = q.power.verb();
    let answer = if !q.groups.is_empty() {
        let who = (Some(q.user.clone()), Some(q.groups.clone()));
        access::review(&ctx.client, who, (GROUP, q.resource, verb), namespace).await
    } else if reuse {
        ctx.authorizer
            .allowed_recently(&ctx.client, &q.user, verb, q.resource, namespace)
            .await
    } else {
        access::allowed(&ctx.client, &q.user, verb, q.resource, namespace).await
    };
    let allowed = match answer {
        Ok(allowed) => allowed,
        // No right to ask: nothing can be checked, so nothing is followed, and status says why.
        Err(kube::Error::Api(e)) if e.code == 403 => {
            return Ok(Err(format!(
                "{what}: ledgerops may not ask the API server whether {} holds the verb {verb} (it needs create on subjectaccessreviews.authorization.k8s.io, which the chart's ClusterRole grants); nothing is followed until it may",
                q.user
            )));
        }
        Err(e) => return Err(e.into()),
    };
    Ok(if allowed {
        Ok(())
    } else {
        Err(q.refusal(namespace, what))
    })
}
