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
pub mod secrets;
pub mod status;
pub mod watches;
