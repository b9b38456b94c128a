//! The compact record of AgentJobs deleted by retention, so that a redelivery of their comment is
//! still a duplicate: per repository, the highest comment id whose job was deleted. Gitea numbers
//! comments in the order they are written, so every comment of that repository up to that id was
//! written before a command that has since finished and outlived its retention; a delivery of
//! one of them now is a redelivery, or a command too old to run. One entry per repository that
//! ever had a job (they are on `--gitea-repository`), so the record stays a few hundred bytes
//! whatever the number of jobs, far below a ConfigMap's 1 MiB.

use std::collections::BTreeMap;

/// The ConfigMap key holding the record (in the receive-sequence ConfigMap).
pub const KEY: &str = "retired";

/// Highest retired comment id by lower-case `owner/name`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retired(BTreeMap<String, i64>);

impl Retired {
    /// Reads the record as stored; none stored is an empty record.
    pub fn parse(stored: Option<&str>) -> Result<Self, String> {
        match stored {
            None => Ok(Self::default()),
            Some(text) => serde_json::from_str(text).map(Self).map_err(|e| {
                format!("the {KEY} record is not a map of repository to comment id: {e}")
            }),
        }
    }

    /// The record as stored.
    pub fn render(&self) -> String {
        serde_json::to_string(&self.0).expect("a map of strings to numbers serializes")
    }

    /// Records that the job of `comment_id` in `repository` is deleted; false when the record
    /// already covered it.
    pub fn record(&mut self, repository: &str, comment_id: i64) -> bool {
        let highest = self.0.entry(repository.to_ascii_lowercase()).or_insert(0);
        if comment_id <= *highest {
            return false;
        }
        *highest = comment_id;
        true
    }

    /// Whether a comment of `repository` was already received (and its job deleted since).
    pub fn covers(&self, repository: &str, comment_id: i64) -> bool {
        self.0
            .get(&repository.to_ascii_lowercase())
            .is_some_and(|highest| comment_id <= *highest)
    }
}

#[cfg(test)]
#[path = "retired_tests.rs"]
mod tests;
