//! Reading the inbox a test's controller keeps in Gitea: the bot's issues, what they say and to
//! whom they are assigned, and the mails Gitea sends about them.

use std::time::{Duration, Instant};

use ledgerops_testenv::gitea::Gitea;
use reqwest::Method;
use serde_json::Value;

use crate::gitea_api::call as gitea_call;
use crate::scenario::WAIT;
use crate::world::World;

/// The bot's issues in `repo`, open and closed, whose first line is the inbox marker.
pub async fn inbox_issues(repo: &str) -> Vec<Value> {
    let gitea = Gitea::shared();
    let issues = gitea_call(
        Method::GET,
        &format!("/repos/{repo}/issues?state=all&type=issues&limit=50"),
        gitea.admin(),
        None,
    )
    .await;
    issues
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| {
            i["user"]["login"] == gitea.bot().login()
                && i["body"]
                    .as_str()
                    .is_some_and(|b| b.starts_with("<!-- ledgerops:inbox subject="))
        })
        .cloned()
        .collect()
}

/// Waits until `repo` has exactly one inbox issue and `done` holds of it; returns it. Failing,
/// says what Gitea showed last.
pub async fn the_issue(repo: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let issues = inbox_issues(repo).await;
        if let [issue] = &issues[..]
            && done(issue)
        {
            return issue.clone();
        }
        assert!(
            start.elapsed() < WAIT,
            "{what} did not happen within {WAIT:?}; the inbox issues: {issues:#?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Waits until `repo`'s one inbox issue has stopped changing (the same `updated_at` three
/// seconds apart: the controller follows the request and its subject as their statuses land, so
/// a first look may catch it between two edits); returns it.
pub async fn quiet_issue(repo: &str) -> Value {
    let start = Instant::now();
    let mut last = the_issue(repo, "an inbox issue", |_| true).await;
    loop {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let now = the_issue(repo, "an inbox issue", |_| true).await;
        if now["updated_at"] == last["updated_at"] {
            return now;
        }
        assert!(
            start.elapsed() < WAIT,
            "the inbox issue kept changing for {WAIT:?}: {now:#}"
        );
        last = now;
    }
}

/// Restarts `w`'s controller once `repo`'s inbox issue has stopped changing, and asserts that the
/// new one, having read its issues, edits nothing.
pub async fn a_restart_changes_nothing(w: &mut World, repo: &str) {
    let before = quiet_issue(repo).await;
    w.restart_until_logged("inbox issues found in Gitea").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let issue = the_issue(repo, "still one issue", |_| true).await;
    assert_eq!(
        issue["updated_at"], before["updated_at"],
        "a restart sends nothing; before: {before:#}\nafter: {issue:#}"
    );
}

/// Waits until `address`'s mailbox holds a mail about issue `number` of `repo` whose text says
/// `says`: Gitea's own notification, delivered to Mailpit.
pub async fn mailed(address: &str, repo: &str, number: i64, says: &str) {
    let mailpit = Gitea::shared().mailpit();
    let about = format!("[{repo}]");
    let issue = format!("(#{number})");
    let start = Instant::now();
    loop {
        let seen = mailpit.messages_to(address).await.unwrap();
        if seen.iter().any(|m| {
            m.subject.contains(&about) && m.subject.contains(&issue) && m.text.contains(says)
        }) {
            return;
        }
        let subjects: Vec<&str> = seen.iter().map(|m| m.subject.as_str()).collect();
        assert!(
            start.elapsed() < WAIT,
            "no mail to {address} about {repo}{issue} saying {says:?}; mails: {subjects:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

pub fn assignees(issue: &Value) -> Vec<String> {
    issue["assignees"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| a["login"].as_str().unwrap().to_owned())
        .collect()
}

pub fn body(issue: &Value) -> &str {
    issue["body"].as_str().unwrap()
}
