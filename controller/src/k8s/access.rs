//! Asking the API server's authorizer whether a user holds a verb: a SubjectAccessReview, made
//! right before a write that follows someone's decision, blessing or policy.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;

use crate::api::common::GROUP;

/// Whether `user` may `verb` the `resource` of group `ledgerops.dev` in `namespace`. The user
/// name alone is checked: roles bound to a group the user is in are not seen ([`review`] asks
/// with groups where admission vouched for them).
pub async fn allowed(
    client: &kube::Client,
    user: &str,
    verb: &str,
    resource: &str,
    namespace: &str,
) -> Result<bool, kube::Error> {
    let who = (Some(user.to_owned()), None);
    review(client, who, (GROUP, resource, verb), namespace).await
}

/// Whether the subject `(user, groups)` may `verb` the `resource` of `group` in `namespace`, as
/// the authorizer answers a SubjectAccessReview (a denial, or no answer, is a no).
pub async fn review(
    client: &kube::Client,
    (user, groups): (Option<String>, Option<Vec<String>>),
    (group, resource, verb): (&str, &str, &str),
    namespace: &str,
) -> Result<bool, kube::Error> {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user,
            groups,
            resource_attributes: Some(ResourceAttributes {
                group: Some(group.to_owned()),
                resource: Some(resource.to_owned()),
                verb: Some(verb.to_owned()),
                namespace: Some(namespace.to_owned()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let answer = Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await?;
    Ok(answer
        .status
        .is_some_and(|s| s.allowed && s.denied != Some(true)))
}

/// The authorizer's answers, each reused for a few seconds where a write follows a standing
/// policy (a Budget's owner): thousands of writes in one wave ask once. A person's decision is
/// always asked afresh.
#[derive(Default)]
pub struct Authorizer {
    recent: std::sync::Mutex<std::collections::HashMap<Key, (std::time::Instant, bool)>>,
}

type Key = (String, String, String, String);

/// How long a standing answer is reused.
const REUSE: std::time::Duration = std::time::Duration::from_secs(5);

impl Authorizer {
    /// [`allowed`], reusing an answer younger than a few seconds.
    pub async fn allowed_recently(
        &self,
        client: &kube::Client,
        user: &str,
        verb: &str,
        resource: &str,
        namespace: &str,
    ) -> Result<bool, kube::Error> {
        let key: Key = (user.into(), verb.into(), resource.into(), namespace.into());
        let now = std::time::Instant::now();
        if let Some((at, answer)) = self.lock().get(&key)
            && now.duration_since(*at) < REUSE
        {
            return Ok(*answer);
        }
        let answer = allowed(client, user, verb, resource, namespace).await?;
        let mut recent = self.lock();
        recent.retain(|_, (at, _)| now.duration_since(*at) < REUSE);
        recent.insert(key, (now, answer));
        Ok(answer)
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<Key, (std::time::Instant, bool)>> {
        self.recent.lock().unwrap_or_else(|e| e.into_inner())
    }
}
