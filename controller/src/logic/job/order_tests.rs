//! Unit tests of `logic/job/order.rs`.

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
