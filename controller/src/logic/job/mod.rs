//! The `/agent` job: its state machine, command syntax, status comment, webhook conversion,
//! execution order, the trust checks (allowlist, comment authenticity, bounded retries, which
//! requests may be decided), escaping of echoed text, the reports and suggestions commands
//! produce, what deciding a request and proposing a plan write and answer, and the cleanup of
//! what a failed one left in Gitea. All pure.

pub mod check;
pub mod classify;
pub mod cleanup;
pub mod command;
pub mod decidable;
pub mod decision;
pub mod escape;
pub mod event;
pub mod order;
pub mod persisted;
pub mod plan_pull_request;
pub mod render;
pub mod report;
pub mod retired;
pub mod rules_report;
pub mod state;
pub mod trust;
pub mod webhook;
