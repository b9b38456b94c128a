//! TEST-ONLY pause points, so that integration tests can kill the process at an exact moment.
//!
//! `LEDGEROPS_TEST_PAUSE` holds comma-separated `point=millis` or `point@text=millis` entries;
//! `@text` limits the pause to commands containing `text`. Points: `authorize` (before the
//! permission check), `before-claim`, `after-claim` (the executor chose the job, JobStarted not
//! yet written), `after-job-started` (JobStarted is durable, the command has not run). Each pause
//! logs `test pause: <point>` first. Never set it in production.

use std::time::Duration;

/// The environment variable, read once at start.
pub const ENV: &str = "LEDGEROPS_TEST_PAUSE";

#[derive(Debug, Clone, Default)]
pub struct TestHooks {
    pauses: Vec<(String, Option<String>, Duration)>,
}

impl TestHooks {
    pub fn from_env() -> Self {
        std::env::var(ENV)
            .map(|v| Self::parse(&v))
            .unwrap_or_default()
    }

    pub fn parse(spec: &str) -> Self {
        let pauses = spec
            .split(',')
            .filter_map(|entry| {
                let (point, millis) = entry.trim().split_once('=')?;
                let millis: u64 = millis.trim().parse().ok()?;
                let (point, filter) = match point.split_once('@') {
                    Some((p, f)) => (p, Some(f.to_owned())),
                    None => (point, None),
                };
                Some((point.to_owned(), filter, Duration::from_millis(millis)))
            })
            .collect();
        Self { pauses }
    }

    pub fn is_empty(&self) -> bool {
        self.pauses.is_empty()
    }

    /// Sleeps if a pause is set for `point` and `command`.
    pub async fn pause(&self, point: &str, job: &str, command: &str) {
        for (p, filter, duration) in &self.pauses {
            if p == point && filter.as_ref().is_none_or(|f| command.contains(f.as_str())) {
                tracing::warn!(
                    point,
                    job,
                    millis = duration.as_millis() as u64,
                    "test pause: {point}"
                );
                tokio::time::sleep(*duration).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_points_and_filters() {
        let h = TestHooks::parse("after-claim=100, authorize@first=2500,bad,x=y");
        assert_eq!(h.pauses.len(), 2);
        assert_eq!(
            h.pauses[0],
            ("after-claim".into(), None, Duration::from_millis(100))
        );
        assert_eq!(
            h.pauses[1],
            (
                "authorize".into(),
                Some("first".into()),
                Duration::from_millis(2500)
            )
        );
        assert!(TestHooks::parse("").is_empty());
    }
}
