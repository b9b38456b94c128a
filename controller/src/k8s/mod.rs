//! Kubernetes adapters: the only code that reads Secrets and writes statuses and Events.

pub mod admission_guard;
pub mod events;
pub mod journal;
pub mod lease;
pub mod objects;
pub mod secrets;
pub mod status;
