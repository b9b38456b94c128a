//! A local stand-in for the YNAB API v1 (spec 1.86.0), used by every ledgerops test that talks
//! to YNAB. It serves `/v1/...` (and the old `/v1/budgets/...` alias) with YNAB's bodies, errors,
//! delta requests and rate limit, and offers test controls under `/__sim/...`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ynab_sim::SimError> {
//! let fixture = ynab_sim::demo::generate();
//! let sim = ynab_sim::Simulator::start(ynab_sim::SimConfig {
//!     fixture: Some(fixture),
//!     ..Default::default()
//! })
//! .await?;
//! let _api = sim.api_url(); // http://127.0.0.1:PORT/v1
//! sim.control().advance_clock(3600).await?;
//! # Ok(()) }
//! ```

mod auth;
mod clock;
mod control_client;
mod controls;
mod counters;
mod delta;
pub mod demo;
mod error;
mod extract;
mod faults;
mod fixture;
mod handlers;
mod journal;
mod legacy;
mod persist;
mod ratelimit;
mod routes;
mod server;
mod sim;
mod store;

pub use control_client::{RecordKind, SimControl};
pub use controls::{ClockSet, ClockView, Edited};
pub use counters::{Counters, Seen, now_ms};
pub use error::SimError;
pub use faults::{DropFault, Faults, RequestMatch, StatusFault};
pub use fixture::{Fixture, FixtureMonth, FixturePlan, MonthBudget};
pub use journal::{By, Entry, Event, JOURNAL_PAGE, Record, Split, Touch};
pub use server::{RunningSim, SimConfig, Simulator};
