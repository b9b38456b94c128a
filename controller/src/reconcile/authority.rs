//! Whether the authority behind a write still holds, asked right before it: the questions
//! `logic::approval::powers` picks, put to the API server's authorizer. Any answer but yes holds the
//! write (fail closed), with a message naming the user, the verb and the role.

use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;

use super::{Context, Error};
use crate::api::approval::ApprovalRequest;
use crate::api::config_repo::{ConfigRepo, RepoAuthority};
use crate::api::rule::CategorizationRule;
use crate::k8s::access;
use crate::logic::approval::powers::{
    self as authority, BlessingCheck, DecisionCheck, Question, proposer,
};

/// `Err(message)`: the authority does not hold, and why.
pub type Verdict = Result<(), String>;

/// Whether the approval on `request` may be followed for a subject now proposed by
/// `subject_proposer`: four eyes against everyone who proposed it (when the Budget, now or when
/// the request was opened, asks for them), then `approve`, asked afresh.
pub async fn decision_followed(
    ctx: &Context,
    request: &ApprovalRequest,
    subject_proposer: Option<&str>,
    four_eyes: bool,
) -> Result<Verdict, Error> {
    let name = request.name_any();
    match authority::decision_on(request, subject_proposer, four_eyes) {
        DecisionCheck::Ask(q) => {
            let what = format!("The approval of ApprovalRequest {name} cannot be followed");
            let namespace = request.namespace().unwrap_or_default();
            ask(ctx, &q, &namespace, &what, false).await
        }
        DecisionCheck::Gitea => Ok(Ok(())),
        DecisionCheck::Refused(message) => Ok(Err(message)),
    }
}

/// Whether `rule`'s blessing counts: four eyes against its author when `four_eyes`, then
/// `bless` (or, for a merge, the ConfigRepo still governs).
pub async fn blessing_counts(
    ctx: &Context,
    rule: &CategorizationRule,
    four_eyes: bool,
) -> Result<Verdict, Error> {
    let Some(blessing) = &rule.spec.blessing else {
        return Ok(Err("not blessed".into()));
    };
    let namespace = rule.namespace().unwrap_or_default();
    let name = rule.name_any();
    let author = proposer(rule.metadata.annotations.as_ref());
    match authority::blessing(&name, &blessing.by, author, four_eyes) {
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
/// whoever last changed it still holds `govern` on configrepos.
pub async fn governs(ctx: &Context, repo: &ConfigRepo) -> Result<Verdict, Error> {
    let name = repo.name_any();
    if repo.spec.authority != RepoAuthority::Govern {
        return Ok(Err(format!(
            "ConfigRepo {name} has authority Propose: it declares Transactions, CategorizationPlans and unblessed CategorizationRules only (an owner, holding govern, sets spec.authority: Govern)"
        )));
    }
    match authority::repo_governor(&name, proposer(repo.metadata.annotations.as_ref())) {
        Ok(q) => {
            let namespace = repo.namespace().unwrap_or_default();
            let what = format!("ConfigRepo {name} cannot govern");
            ask(ctx, &q, &namespace, &what, true).await
        }
        Err(message) => Ok(Err(message)),
    }
}

async fn ask(
    ctx: &Context,
    q: &Question,
    namespace: &str,
    what: &str,
    reuse: bool,
) -> Result<Verdict, Error> {
    let verb = q.power.verb();
    let answer = if reuse {
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
