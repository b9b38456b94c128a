//! Which job runs next: strictly in receive order, one at a time. A job that is not yet
//! authorized blocks every later one, so a slow permission check never lets a later command
//! overtake an earlier one; nor does a job that shows up before an earlier one of its group.

use crate::api::agent_job::JobPhase;

use super::state::is_terminal;

/// What the executor should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Run this job.
    Execute(String),
    /// The earliest unfinished job is not ready (still waiting for its permission check): wait.
    Wait(String),
    /// The earliest unfinished job says Running, but the executor runs nothing (it asks only
    /// when idle, and it is the only one that runs jobs): its run was cut off, or its status was
    /// written by someone else. Fail it as interrupted rather than wait for it forever.
    Orphaned(String),
    /// The earliest unfinished job is in a group of jobs whose creates overlap, from this
    /// sequence on, and not all of the group is seen yet: an earlier one may still show up.
    Creating(i64),
    /// Every job is finished.
    Idle,
}

/// Picks from `(sequence, phase, name)`; a job without a phase (status not written yet) counts
/// as received. `unseen_from`: the first sequence of the earliest group not all seen yet; every
/// job before it is.
pub fn next_job(jobs: &[(i64, Option<JobPhase>, String)], unseen_from: Option<i64>) -> Next {
    let earliest = jobs
        .iter()
        .filter(|(_, phase, _)| !phase.is_some_and(is_terminal))
        .min_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
    match (earliest, unseen_from) {
        (None, _) => Next::Idle,
        (Some((sequence, _, _)), Some(from)) if *sequence >= from => Next::Creating(from),
        (Some(earliest), _) => pick(earliest),
    }
}

fn pick(earliest: &(i64, Option<JobPhase>, String)) -> Next {
    match earliest {
        (_, Some(JobPhase::Queued), name) => Next::Execute(name.clone()),
        (_, Some(JobPhase::Running), name) => Next::Orphaned(name.clone()),
        (_, _, name) => Next::Wait(name.clone()),
    }
}

#[cfg(test)]
#[path = "order_tests.rs"]
mod tests;
