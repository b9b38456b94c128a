//! Decisions about running the controller rather than about a budget: leader election, when a
//! YNAB request is tried again, the rolling request budget, and when finished objects are deleted.

pub mod fair_share;
pub mod lease;
pub mod pacing;
pub mod request_priority;
pub mod request_record;
pub mod request_window;
pub mod retention;
pub mod retry;
