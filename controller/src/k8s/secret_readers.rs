//! Who may read a namespace's Secrets: the subjects of its RoleBindings and of every
//! ClusterRoleBinding, each asked about with a SubjectAccessReview. The answers are kept a few
//! minutes per pair of namespaces, so Budgets that sync often never list bindings each time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding};
use kube::api::ListParams;
use kube::{Api, ResourceExt};
use tokio::sync::OnceCell;

use super::admission_guard::whoami;
use crate::api::common::GROUP;
use crate::logic::budget::token_exposure::{self, Answer, Subject};

/// How long the answers about a namespace are reused: a binding made or removed shows within it.
const KEEP: Duration = Duration::from_secs(300);

type Key = (String, String);
/// The answers about one [`Key`], with when they were asked.
type Kept = HashMap<Key, (Instant, Arc<Vec<Answer>>)>;

/// The answers about each (Secret namespace, Budget namespace), with when they were asked.
#[derive(Default)]
pub struct SecretReaders {
    recent: Mutex<Kept>,
    me: OnceCell<String>,
}

impl SecretReaders {
    /// Whether each subject bound in `secret_ns` or cluster-wide (not the controller, not the
    /// cluster's own components) may read Secrets there, and whether it governs Budgets in
    /// `budget_ns`. An error says what failed, for the Budget's status.
    pub async fn answers(
        &self,
        client: &kube::Client,
        secret_ns: &str,
        budget_ns: &str,
    ) -> Result<Arc<Vec<Answer>>, String> {
        let key: Key = (secret_ns.into(), budget_ns.into());
        let now = Instant::now();
        if let Some((at, answers)) = self.lock().get(&key)
            && now.duration_since(*at) < KEEP
        {
            return Ok(answers.clone());
        }
        let me = self.me.get_or_try_init(|| whoami(client)).await?;
        let subjects = bound(client, secret_ns)
            .await
            .map_err(|e| format!("listing the role bindings: {e}"))?;
        let mut answers = Vec::new();
        for subject in token_exposure::to_ask(subjects, me) {
            let reads = ask(client, &subject, ("", "secrets", "get"), secret_ns).await?;
            // Only a reader's ownership matters.
            let governs =
                reads && ask(client, &subject, (GROUP, "budgets", "govern"), budget_ns).await?;
            answers.push(Answer {
                subject,
                reads,
                governs,
            });
        }
        let answers = Arc::new(answers);
        let mut recent = self.lock();
        recent.retain(|_, (at, _)| now.duration_since(*at) < KEEP);
        recent.insert(key, (now, answers.clone()));
        Ok(answers)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.recent.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The subjects of the RoleBindings of `namespace` and of every ClusterRoleBinding.
async fn bound(client: &kube::Client, namespace: &str) -> Result<Vec<Subject>, kube::Error> {
    let params = ListParams::default();
    let local = Api::<RoleBinding>::namespaced(client.clone(), namespace)
        .list(&params)
        .await?;
    let cluster = Api::<ClusterRoleBinding>::all(client.clone())
        .list(&params)
        .await?;
    let local = local.items.into_iter().flat_map(|b| {
        let ns = b.namespace();
        b.subjects
            .unwrap_or_default()
            .into_iter()
            .map(move |s| (s, ns.clone()))
    });
    let cluster = cluster.items.into_iter().flat_map(|b| {
        b.subjects
            .unwrap_or_default()
            .into_iter()
            .map(|s| (s, None))
    });
    Ok(local
        .chain(cluster)
        .filter_map(|(s, binding_ns)| {
            Subject::of_binding(
                &s.kind,
                &s.name,
                s.namespace.as_deref(),
                binding_ns.as_deref(),
            )
        })
        .collect())
}

/// Whether `subject` may `verb` the `resource` of `group` in `namespace`.
async fn ask(
    client: &kube::Client,
    subject: &Subject,
    (group, resource, verb): (&str, &str, &str),
    namespace: &str,
) -> Result<bool, String> {
    let (user, groups) = subject.identity();
    super::access::review(
        client,
        (user, Some(groups)),
        (group, resource, verb),
        namespace,
    )
    .await
    .map_err(|e| format!("asking whether {subject} may {verb} {resource}: {e}"))
}
