//! What a token's request window leaves behind for the next process: how many requests went out
//! in each minute of the last hour. A replica that restarts, or takes the lead over from one that
//! died, counts them before it sends anything, so the hour's budget holds across processes (the
//! soak's `over-request-budget`: a new leader counted from zero and sent the 201st request).

use futures::future::BoxFuture;
use k8s_openapi::jiff::Timestamp;

use super::request_window::{Minutes, WINDOW, end_of};

/// Whether what went out in `minute` still counts at `now`.
fn in_window(minute: i64, now: Timestamp) -> bool {
    end_of(minute) + WINDOW > now
}

/// `recorded` and `ours` together: the larger count of each minute (a minute's count only grows,
/// and every process writes all it knows), without the minutes that left the window at `now`.
pub fn merged(recorded: &Minutes, ours: &Minutes, now: Timestamp) -> Minutes {
    let mut out = Minutes::new();
    for (minute, count) in recorded.iter().chain(ours) {
        if in_window(*minute, now) {
            let kept = out.entry(*minute).or_default();
            *kept = (*kept).max(*count);
        }
    }
    out
}

/// The record as stored: a JSON object of minute → count.
pub fn render(minutes: &Minutes) -> String {
    serde_json::to_string(minutes).expect("a map of numbers serializes")
}

/// A stored record, or why it is not one.
pub fn parse(text: &str) -> Result<Minutes, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// Where every token's record is kept. The YNAB adapter reads and writes it through this; the
/// Kubernetes adapter keeps it (in a ConfigMap); `run` hands the one to the other, so neither
/// imports the other. An error is said as the person fixing it reads it.
pub trait RecordStore: Send + Sync {
    /// What the record holds under `key` (one token and URL).
    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Minutes, String>>;
    /// Adds `ours` (the window of `key` at `now`) to the record: every minute keeps the larger
    /// count, so writes of several processes, in any order, never lower it.
    fn save<'a>(
        &'a self,
        key: &'a str,
        ours: &'a Minutes,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<(), String>>;
}

#[cfg(test)]
#[path = "request_record_tests.rs"]
mod tests;
