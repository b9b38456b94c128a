//! Pure logic: no network, no disk, no clock, no randomness. Time and state come in as
//! arguments, decisions go out as values.

pub mod budget_status;
pub mod conditions;
pub mod duration;
pub mod mirror;
pub mod money;
pub mod request_window;
pub mod retry;
