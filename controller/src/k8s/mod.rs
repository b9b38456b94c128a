//! Kubernetes adapters: the only code that reads Secrets, writes statuses and Events, and applies
//! what a ConfigRepo declares.

pub mod access;
pub mod admission_guard;
pub mod client;
pub mod events;
pub mod git_credentials;
pub mod journal;
pub mod lease;
pub mod objects;
pub mod repo_objects;
pub mod request_record;
pub mod secret_readers;
pub mod secrets;
pub mod status;
pub mod watches;

/// Whether the API server refused a write because the object changed (or exists) already:
/// someone else's write won, and the caller reads again or lets it stand.
pub fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(e) if e.code == 409)
}

/// Whether the API server answered that the object does not exist.
pub fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(e) if e.code == 404)
}
