//! A running command's progress, recorded as the job's events (JobProgress, BranchCreated,
//! PullRequestOpened) so that the status comment shows how far it got.

use std::sync::atomic::{AtomicU32, Ordering};

use k8s_openapi::jiff::Timestamp;

use crate::agent::context::AgentContext;
use crate::agent::store::Latest;
use crate::backoff;
use crate::logic::job::event::{EventKind, JobEvent};

/// Records a running command's progress as events, each with its own id.
pub struct Reporter<'a> {
    ctx: &'a AgentContext,
    job: &'a Latest,
    step: AtomicU32,
}

impl<'a> Reporter<'a> {
    pub fn new(ctx: &'a AgentContext, job: &'a Latest) -> Self {
        Self {
            ctx,
            job,
            step: AtomicU32::new(0),
        }
    }

    /// Records `kind` under `id`, which keeps a retried write from applying twice.
    pub(super) async fn record(&self, id: String, kind: EventKind) -> Result<(), String> {
        let event = JobEvent::new(id, Timestamp::now(), kind);
        let (mut attempt, mut delays) = (0, backoff::retries());
        loop {
            attempt += 1;
            match self.ctx.store.evolve_latest(self.job, &event).await {
                Ok(_) => return Ok(()),
                Err(e) if attempt >= 5 => return Err(e.to_string()),
                Err(_) => tokio::time::sleep(backoff::next(&mut delays)).await,
            }
        }
    }

    pub(super) async fn progress(&self, stage: &str) -> Result<(), String> {
        let n = self.step.fetch_add(1, Ordering::Relaxed) + 1;
        self.record(
            format!("progress:{n}"),
            EventKind::JobProgress {
                stage: stage.into(),
            },
        )
        .await
    }
}
