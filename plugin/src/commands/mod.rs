//! One module per group of commands: read through the cluster adapter, decide with `logic`,
//! print through the printer.

pub mod apply;
pub mod check;
pub mod decide;
pub mod nudge;
pub mod queue;
pub mod show;
pub mod status;
pub mod suspend;
pub mod undo;
pub mod version;

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use ledgerops::logic::values::duration;

use crate::error::PluginError;

/// A `--wait` value.
pub fn wait_limit(text: &str) -> Result<Duration, PluginError> {
    duration::parse(text).map_err(|e| PluginError::Usage(format!("--wait: {e}")))
}

/// The clock, read once per decision at the edge of the program.
pub fn now() -> Timestamp {
    Timestamp::now()
}
