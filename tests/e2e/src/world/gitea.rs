//! A world's Gitea side: issues and comments in its repository, the AgentJobs they become, and
//! deliveries made as Gitea makes them.

use std::time::{Duration, Instant};

use kube::api::Api;
use ledgerops::api::agent_job::{AgentJob, JobPhase};
use ledgerops::logic::job::webhook::sign;
use ledgerops_testenv::gitea::User;
use serde_json::json;

use super::World;
use crate::gitea_api::{self, Comment};
use crate::scenario::WAIT;

impl World {
    /// Opens an issue titled `title` in the world's repository as the writer; its number.
    pub async fn issue(&self, title: &str) -> i64 {
        gitea_api::open_issue(self.repo(), title).await
    }

    /// Comments `body` on `issue` as `user`; the comment's id.
    pub async fn comment(&self, user: &User, issue: i64, body: &str) -> i64 {
        gitea_api::comment(self.repo(), user, issue, body).await
    }

    /// Every comment of `issue`, oldest first.
    pub async fn comments(&self, issue: i64) -> Vec<Comment> {
        gitea_api::comments(self.repo(), issue).await
    }

    /// The bot's comments on `issue`, oldest first.
    pub async fn bot_comments(&self, issue: i64) -> Vec<Comment> {
        let bot = self.gitea().bot().login();
        let all = self.comments(issue).await;
        all.into_iter().filter(|c| c.author == bot).collect()
    }

    /// The name of the AgentJob comment `comment_id` on `issue` becomes.
    pub fn job_name(&self, issue: i64, comment_id: i64) -> String {
        gitea_api::job_name(self.repo(), issue, comment_id)
    }

    /// The AgentJobs of the namespace the world's controller stores them in.
    pub fn jobs(&self) -> Api<AgentJob> {
        Api::namespaced(self.sc.client.clone(), &self.agent().ns)
    }

    /// Polls job `name` until `done` holds; failing after [`WAIT`], says it never did `what`,
    /// with the last state seen and the controller's log.
    pub async fn wait_job(
        &self,
        name: &str,
        what: &str,
        done: impl Fn(&AgentJob) -> bool,
    ) -> AgentJob {
        let start = Instant::now();
        let mut last = None;
        while start.elapsed() < WAIT {
            if let Ok(Some(j)) = self.jobs().get_opt(name).await {
                if done(&j) {
                    return j;
                }
                last = Some(j);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "job {name} never {what}; last: {last:#?}\ncontroller log:\n{}",
            self.controller().log()
        );
    }

    /// Waits until job `name` is in `phase`.
    pub async fn wait_phase(&self, name: &str, phase: JobPhase) -> AgentJob {
        self.wait_job(name, &format!("{phase:?}"), |j| {
            j.status.as_ref().and_then(|s| s.phase) == Some(phase)
        })
        .await
    }

    /// Waits until the controller has logged `test pause: <point>`: it is paused there now.
    pub async fn wait_paused(&self, point: &str) {
        let line = format!("test pause: {point}");
        let start = Instant::now();
        while !self.controller().log().contains(&line) {
            assert!(
                start.elapsed() < WAIT,
                "never paused at {point}:\n{}",
                self.controller().log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Posts `body` to the controller's webhook as Gitea posts a comment event, with delivery
    /// id `delivery` (when given), signed with `secret`; the HTTP status.
    pub async fn deliver(&self, delivery: Option<&str>, body: &[u8], secret: &str) -> u16 {
        let mut req = reqwest::Client::new()
            .post(self.controller().webhook_url())
            .header("Content-Type", "application/json")
            .header("X-Gitea-Event", "issue_comment")
            .header("X-Gitea-Event-Type", "issue_comment")
            .header("X-Gitea-Signature", sign(secret.as_bytes(), body));
        if let Some(d) = delivery {
            req = req.header("X-Gitea-Delivery", d);
        }
        req.body(body.to_vec())
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    /// The body of Gitea's event for comment `comment_id` by `login` saying `text` on `issue` of
    /// the world's repository.
    pub fn payload(&self, issue: i64, comment_id: i64, login: &str, text: &str) -> Vec<u8> {
        serde_json::to_vec_pretty(&json!({
            "action": "created",
            "issue": {"number": issue, "pull_request": null},
            "comment": {"id": comment_id, "body": text, "user": {"login": login}},
            "repository": {"full_name": self.repo()},
            "sender": {"login": login},
            "is_pull": false,
        }))
        .unwrap()
    }
}
