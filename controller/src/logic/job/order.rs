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
mod tests {
    use super::*;
    use JobPhase::*;

    fn jobs(list: &[(i64, Option<JobPhase>)]) -> Vec<(i64, Option<JobPhase>, String)> {
        list.iter()
            .map(|(seq, p)| (*seq, *p, format!("j{seq}")))
            .collect()
    }

    #[test]
    fn receive_order_with_a_barrier() {
        assert_eq!(next_job(&[], None), Next::Idle);
        assert_eq!(
            next_job(
                &jobs(&[(1, Some(Succeeded)), (2, Some(Rejected)), (3, Some(Failed))]),
                None
            ),
            Next::Idle
        );
        // The earliest is still waiting for its permission check: the queued later ones wait.
        assert_eq!(
            next_job(
                &jobs(&[(3, Some(Queued)), (1, Some(Received)), (2, Some(Queued))]),
                None
            ),
            Next::Wait("j1".into())
        );
        assert_eq!(
            next_job(
                &jobs(&[(3, Some(Queued)), (1, None), (2, Some(Queued))]),
                None
            ),
            Next::Wait("j1".into())
        );
        assert_eq!(
            next_job(
                &jobs(&[(3, Some(Queued)), (1, Some(Succeeded)), (2, Some(Queued))]),
                None
            ),
            Next::Execute("j2".into())
        );
        assert_eq!(
            next_job(&jobs(&[(2, Some(Running)), (3, Some(Queued))]), None),
            Next::Orphaned("j2".into())
        );
    }

    /// A group's creates overlap, so its jobs may show up in any order: none of them runs, nor
    /// any later job, until the whole group is seen; the jobs before it run.
    #[test]
    fn a_group_runs_once_it_is_all_seen() {
        let queued = jobs(&[(1, Some(Succeeded)), (6, Some(Queued)), (7, Some(Queued))]);
        assert_eq!(next_job(&queued, Some(5)), Next::Creating(5));
        assert_eq!(next_job(&queued, Some(6)), Next::Creating(6));
        assert_eq!(next_job(&queued, Some(7)), Next::Execute("j6".into()));
        assert_eq!(next_job(&queued, None), Next::Execute("j6".into()));
        let earlier = jobs(&[(4, Some(Received)), (6, Some(Queued))]);
        assert_eq!(next_job(&earlier, Some(5)), Next::Wait("j4".into()));
        let running = jobs(&[(4, Some(Running)), (6, Some(Queued))]);
        assert_eq!(next_job(&running, Some(6)), Next::Orphaned("j4".into()));
        let finished = jobs(&[(4, Some(Succeeded))]);
        assert_eq!(next_job(&finished, Some(5)), Next::Idle);
    }
}
