//! `Budget` logic: the in-memory mirror of its YNAB plan, whether a sync is due, where its token
//! may be sent, the autopilot's pass, the status after a sync, and whether its token Secret may
//! be used from where it lies and who besides its owners may read it.

pub mod api_url;
pub mod autopilot;
pub mod mirror;
pub mod status;
pub mod sync_due;
pub mod token_exposure;
pub mod token_grant;
