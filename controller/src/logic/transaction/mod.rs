//! `Transaction` logic: what YNAB's data says about a target, converge-to-target for one
//! transaction, the batch of writes a plan shares with it, split lines, the next step of a
//! reconcile, and the status and view a person reads.

pub mod batch;
pub mod check;
pub mod converge;
pub mod split;
pub mod status;
pub mod step;
pub mod view;
