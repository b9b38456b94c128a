//! The `/agent` job: its state machine, command syntax, status comment, webhook conversion,
//! execution order, and the reports and suggestions commands produce. All pure.

pub mod classify;
pub mod command;
pub mod order;
pub mod render;
pub mod report;
pub mod state;
#[cfg(test)]
mod state_tests;
pub mod webhook;
