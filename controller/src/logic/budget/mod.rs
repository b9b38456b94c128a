//! `Budget` logic: the in-memory mirror of its YNAB plan, whether a sync is due, where its token
//! may be sent, the autopilot's pass, and the status after a sync.

pub mod api_url;
pub mod autopilot;
pub mod mirror;
pub mod status;
pub mod sync_due;
