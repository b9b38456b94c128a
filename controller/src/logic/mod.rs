//! Pure logic: no network, no disk, no clock, no randomness. Time and state come in as
//! arguments, decisions go out as values.

pub mod admission_guard;
pub mod alert_gauges;
pub mod announce;
pub mod api_url;
pub mod approval_authority;
pub mod approval_status;
pub mod authority;
pub mod autopilot;
#[cfg(test)]
mod autopilot_tests;
pub mod batch;
pub mod budget_status;
pub mod conditions;
pub mod config_repo;
pub mod converge;
pub mod duration;
pub mod escalation;
pub mod gate;
pub mod job;
pub mod kstatus;
pub mod lease;
pub mod mirror;
pub mod money;
pub mod outside_text;
pub mod payee;
pub mod plan;
pub mod plan_status;
pub mod policy;
pub mod request_window;
pub mod retention;
pub mod retry;
pub mod rule;
pub mod split;
pub mod sync_due;
pub mod transaction_check;
pub mod transaction_status;
pub mod transaction_step;
pub mod transaction_view;
pub mod url_prefix;
