//! TEST-ONLY pause points, so that integration tests can kill the process at an exact moment.
//! Compiled in only with the cargo feature `test-hooks` (the suites build the binary with it);
//! a release build has no pause point and ignores the variable.
//!
//! `LEDGEROPS_TEST_PAUSE` holds comma-separated `point=millis` or `point@text=millis` entries;
//! `@text` limits the pause to commands containing `text`. Each pause logs
//! `test pause: <point>` first.

use std::time::Duration;

/// The environment variable, read once at start.
pub const ENV: &str = "LEDGEROPS_TEST_PAUSE";

/// Where a job can be held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Before the permission check.
    Authorize,
    /// Before the executor looks at the job it chose.
    BeforeClaim,
    /// The executor chose the job; JobStarted is not written yet.
    AfterClaim,
    /// JobStarted is durable; the command has not run.
    AfterJobStarted,
    /// The command opened its pull request and has not recorded it yet.
    PullRequestUnrecorded,
}

impl Point {
    const ALL: [Point; 5] = [
        Point::Authorize,
        Point::BeforeClaim,
        Point::AfterClaim,
        Point::AfterJobStarted,
        Point::PullRequestUnrecorded,
    ];

    fn name(self) -> &'static str {
        match self {
            Point::Authorize => "authorize",
            Point::BeforeClaim => "before-claim",
            Point::AfterClaim => "after-claim",
            Point::AfterJobStarted => "after-job-started",
            Point::PullRequestUnrecorded => "pull-request-unrecorded",
        }
    }

    fn parse(name: &str) -> Option<Point> {
        Point::ALL.into_iter().find(|p| p.name() == name)
    }
}

#[derive(Debug, Clone, Default)]
pub struct TestHooks {
    pauses: Vec<(Point, Option<String>, Duration)>,
}

impl TestHooks {
    /// The pauses `LEDGEROPS_TEST_PAUSE` asks for; none without the `test-hooks` feature.
    pub fn from_env() -> Self {
        Self::read(
            cfg!(feature = "test-hooks"),
            std::env::var(ENV).ok().as_deref(),
        )
    }

    /// The pauses `value` asks for, if pauses are `compiled` in.
    fn read(compiled: bool, value: Option<&str>) -> Self {
        match value {
            Some(v) if compiled => Self::parse(v),
            _ => Self::default(),
        }
    }

    /// Entries naming an unknown point or without a number are skipped.
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
                Some((Point::parse(point)?, filter, Duration::from_millis(millis)))
            })
            .collect();
        Self { pauses }
    }

    pub fn is_empty(&self) -> bool {
        self.pauses.is_empty()
    }

    /// Sleeps if a pause is set for `point` and `command`.
    pub async fn pause(&self, point: Point, job: &str, command: &str) {
        for (p, filter, duration) in &self.pauses {
            if *p == point && filter.as_ref().is_none_or(|f| command.contains(f.as_str())) {
                let name = point.name();
                tracing::warn!(
                    point = name,
                    job,
                    millis = duration.as_millis() as u64,
                    "test pause: {name}"
                );
                tokio::time::sleep(*duration).await;
            }
        }
    }
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
