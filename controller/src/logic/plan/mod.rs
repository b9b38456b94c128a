//! `CategorizationPlan` logic: check the assignments against the mirror, preview what applying
//! them (or undoing an applied plan) would change, and hash that preview so an approval binds
//! to it exactly.

pub mod approved;
pub mod assess;
mod categories;
pub mod category_name;
pub mod edit;
pub mod end;
pub mod hash;
pub mod operation;
pub mod outcome;
pub mod preview;
mod preview_step;
pub mod rest;
pub mod review;
pub mod status;
pub mod step;
pub mod undo;
pub mod validate;

#[cfg(test)]
pub(crate) mod fixtures;

pub use approved::{Approved, Basis};
pub use categories::is_uncategorized;
pub use preview::{CategoryRef, LineMoves, PlanPreview, PlannedChange, State, preview};
pub use undo::{AppliedChange, undo_preview};
pub use validate::{PlanError, guarded, validate};
