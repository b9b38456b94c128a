//! TEST-ONLY pause points, so that integration tests can kill the process at an exact moment.
//! Read from the environment only with the cargo feature `test-hooks` (the suites build the
//! binary with it); without it no pause can be set, and the binary does not know the variable
//! (the image's build checks).
//!
//! `LEDGEROPS_TEST_PAUSE` holds comma-separated `point=millis` or `point@text=millis` entries;
//! `@text` limits the pause to commands containing `text`. Each pause logs
//! `test pause: <point>` first.

use std::time::Duration;

/// The environment variable, read once at start.
#[cfg(feature = "test-hooks")]
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
    /// The pauses `LEDGEROPS_TEST_PAUSE` asks for.
    #[cfg(feature = "test-hooks")]
    pub fn from_env() -> Self {
        let hooks = std::env::var(ENV)
            .ok()
            .map_or_else(Self::default, |v| Self::parse(&v));
        if !hooks.is_empty() {
            tracing::warn!("{ENV} is set: test-only pauses are active");
        }
        hooks
    }

    /// None: this build has no pauses (see the module).
    #[cfg(not(feature = "test-hooks"))]
    pub fn from_env() -> Self {
        Self::default()
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
