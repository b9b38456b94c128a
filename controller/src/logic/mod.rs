//! Pure logic: no network, no disk, no clock, no randomness. Time and state come in as
//! arguments, decisions go out as values.
//!
//! One folder per resource kind (`budget`, `transaction`, `plan`, `approval`, `rule`, `job`,
//! `config_repo`), the values they share (`values`), what every kind's status shares (`status`),
//! and decisions about running the controller itself (`runtime`). Tests sit beside the file they
//! test as `<file>_tests.rs` (`tests.rs` for a folder's `mod.rs`); builders for them are in a
//! folder's `fixtures.rs`.

pub mod approval;
pub mod budget;
pub mod config_repo;
pub mod job;
pub mod plan;
pub mod rule;
pub mod runtime;
pub mod status;
pub mod transaction;
pub mod values;
