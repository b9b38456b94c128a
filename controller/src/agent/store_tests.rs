use std::time::Duration;

use kube::runtime::{reflector, watcher};

use super::*;

fn job(name: &str) -> AgentJob {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "AgentJob",
        "metadata": {"name": name, "namespace": "agents"},
        "spec": {
            "deliveryId": "d", "event": "IssueComment", "repository": "household/ledger-config",
            "issueNumber": 1, "commentId": 1, "author": "writer", "command": "/agent status",
            "sequence": 1, "receivedAt": "2026-12-01T00:00:00Z"
        }
    }))
    .unwrap()
}

fn store() -> JobStore {
    let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
    JobStore::new(kube::Client::try_from(config).unwrap(), "agents")
}

/// A group's jobs are created at once and may show up in the cache in any order: the group
/// holds back the executor until the cache shows every one of them, then wakes it.
#[tokio::test]
async fn a_group_is_unseen_until_the_cache_shows_all_of_it() {
    let (cache, mut writer) = reflector::store::<AgentJob>();
    let jobs = store();
    jobs.seen_through(cache);
    assert_eq!(jobs.unseen_from(), None);
    jobs.unseen.lock().unwrap().insert(5);
    let waiting = tokio::spawn({
        let jobs = jobs.clone();
        async move { jobs.until_seen(5, vec!["a".into(), "b".into()]).await }
    });
    writer.apply_watcher_event(&watcher::Event::Apply(job("b")));
    jobs.cache_changed();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(jobs.unseen_from(), Some(5), "a is not seen yet");

    writer.apply_watcher_event(&watcher::Event::Apply(job("a")));
    jobs.cache_changed();
    tokio::time::timeout(Duration::from_secs(5), jobs.group_seen())
        .await
        .expect("woken once the group is seen");
    assert_eq!(jobs.unseen_from(), None);
    waiting.await.unwrap();
}

/// The earliest group not all seen holds back the executor, whichever was seen first.
#[tokio::test]
async fn the_earliest_unseen_group_holds_back() {
    let (cache, mut writer) = reflector::store::<AgentJob>();
    let jobs = store();
    jobs.seen_through(cache);
    jobs.unseen.lock().unwrap().extend([5, 9]);
    writer.apply_watcher_event(&watcher::Event::Apply(job("later")));
    jobs.until_seen(9, vec!["later".into()]).await;
    assert_eq!(jobs.unseen_from(), Some(5));
}

/// A replica that runs no jobs has no executor to hold back: a group is done once created.
#[tokio::test]
async fn without_an_executor_a_group_is_done_once_created() {
    let jobs = store();
    jobs.unseen.lock().unwrap().insert(5);
    jobs.until_seen(5, vec!["a".into()]).await;
    assert_eq!(jobs.unseen_from(), None);
}
