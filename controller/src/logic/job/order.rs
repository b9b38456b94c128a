//! Which job runs next: strictly in receive order, one at a time. A job that is not yet
//! authorized blocks every later one, so a slow permission check never lets a later command
//! overtake an earlier one.

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
    /// Every job is finished.
    Idle,
}

/// Picks from `(sequence, phase, name)`; a job without a phase (status not written yet) counts
/// as received.
pub fn next_job(jobs: &[(i64, Option<JobPhase>, String)]) -> Next {
    let earliest = jobs
        .iter()
        .filter(|(_, phase, _)| !phase.is_some_and(is_terminal))
        .min_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
    match earliest {
        None => Next::Idle,
        Some((_, Some(JobPhase::Queued), name)) => Next::Execute(name.clone()),
        Some((_, Some(JobPhase::Running), name)) => Next::Orphaned(name.clone()),
        Some((_, _, name)) => Next::Wait(name.clone()),
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
        assert_eq!(next_job(&[]), Next::Idle);
        assert_eq!(
            next_job(&jobs(&[
                (1, Some(Succeeded)),
                (2, Some(Rejected)),
                (3, Some(Failed))
            ])),
            Next::Idle
        );
        // The earliest is still waiting for its permission check: the queued later ones wait.
        assert_eq!(
            next_job(&jobs(&[
                (3, Some(Queued)),
                (1, Some(Received)),
                (2, Some(Queued))
            ])),
            Next::Wait("j1".into())
        );
        assert_eq!(
            next_job(&jobs(&[(3, Some(Queued)), (1, None), (2, Some(Queued))])),
            Next::Wait("j1".into())
        );
        assert_eq!(
            next_job(&jobs(&[
                (3, Some(Queued)),
                (1, Some(Succeeded)),
                (2, Some(Queued))
            ])),
            Next::Execute("j2".into())
        );
        assert_eq!(
            next_job(&jobs(&[(2, Some(Running)), (3, Some(Queued))])),
            Next::Orphaned("j2".into())
        );
    }
}
