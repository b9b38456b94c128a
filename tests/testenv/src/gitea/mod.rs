//! A private Gitea for tests: `gitea web` on a free loopback port with SQLite in a temp dir,
//! provisioned with users, tokens and a private repository, so webhooks and the REST API are the
//! real thing. It mails its notifications to a Mailpit of its own ([`Gitea::mailpit`]).
//!
//! The binary comes from `tests/tools/build-gitea.sh` (built once per version, then cached), or
//! from `$LEDGEROPS_GITEA_BIN`.

mod api;
mod binary;
mod config;
mod setup;

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

pub use binary::{gitea_dir, version};

use crate::mailpit::Mailpit;
use crate::process::{Guarded, log_tail};
use crate::{Error, Result, free_port, io};
use api::{Api, Auth};

/// The webhook events of comments on issues and on pull requests (conversation comments).
pub const COMMENT_EVENTS: &[&str] = &["issue_comment", "pull_request_comment"];

/// A Gitea account with an API token (scope `all`).
pub struct User {
    login: String,
    email: String,
    password: String,
    token: String,
}

impl User {
    pub fn login(&self) -> &str {
        &self.login
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// The account's address, `<login>@example.com`: where Gitea mails it (see
    /// [`Gitea::mailpit`]).
    pub fn email(&self) -> &str {
        &self.email
    }

    pub fn password(&self) -> &str {
        &self.password
    }

    fn auth(&self) -> Auth<'_> {
        Auth::Token(&self.token)
    }
}

/// The repository the users work on.
pub struct Repo {
    owner: String,
    name: String,
    clone_url: String,
}

impl Repo {
    pub fn owner(&self) -> &str {
        &self.owner
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `owner/name`, as webhook payloads spell it in `repository.full_name`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    /// HTTP clone URL; the repository is private, so git needs a user's credentials.
    pub fn clone_url(&self) -> &str {
        &self.clone_url
    }
}

/// An issue or pull-request comment, as Gitea returns it.
#[derive(Debug, Clone, Deserialize)]
pub struct Comment {
    pub id: i64,
    pub body: String,
    pub user: Account,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Account {
    pub login: String,
}

/// A running Gitea. It stops, and its directory goes, when this is dropped; it is also killed
/// when the test process dies, however it dies.
pub struct Gitea {
    // Fields drop in order: the process first, then the Mailpit it sends mail to, then the
    // directory it used.
    process: Guarded,
    mailpit: Mailpit,
    dir: tempfile::TempDir,
    url: String,
    api: Api,
    admin: User,
    bot: User,
    writer: User,
    reader: User,
    repo: Repo,
}

impl Gitea {
    /// Starts a fresh Gitea, waits until its API answers, and provisions it: the site admin
    /// `ledgerops-admin`, `ledgerops-bot` (admin collaborator), `writer` (write collaborator),
    /// `reader` (read collaborator), and the private repository `household/ledger-config` with a
    /// README on `main`. Each user's address is `<login>@example.com`; Gitea mails its
    /// notifications to a Mailpit started first, [`Gitea::mailpit`].
    pub async fn start() -> Result<Self> {
        let mailpit = Mailpit::start().await?;
        let bin = gitea_dir()?;
        let gitea = bin.join("gitea");
        let dir = tempfile::Builder::new()
            .prefix("ledgerops-gitea-")
            .tempdir()
            .map_err(io("creating a temp dir"))?;
        let port = free_port()?;
        let layout = config::Layout {
            work: dir.path(),
            assets: &bin.join("assets"),
            port,
            smtp_port: mailpit.smtp_port(),
        };
        layout.write()?;
        let (custom, home) = (dir.path().join("custom"), layout.home());
        // The CLI must see the same work path, config and home as the server.
        let env: [(&str, &Path); 3] = [
            ("GITEA_WORK_DIR", dir.path()),
            ("GITEA_CUSTOM", &custom),
            ("HOME", &home),
        ];

        let log = dir.path().join("gitea.log");
        let mut web = Command::new(&gitea);
        web.arg("web").envs(env);
        let process = Guarded::spawn(web, &log)?;

        let url = format!("http://127.0.0.1:{port}");
        let api = Api::new(&url)?;
        wait_ready(&api, Duration::from_secs(90), &log).await?;

        let admin = setup::admin(&gitea, &env, &api).await?;
        let bot = setup::user(&api, &admin, "ledgerops-bot").await?;
        let writer = setup::user(&api, &admin, "writer").await?;
        let reader = setup::user(&api, &admin, "reader").await?;
        // The bot is a repo admin because Gitea answers "what may this commenter do" only to
        // site admins, repo admins and the commenter themself.
        let collaborators = [(&bot, "admin"), (&writer, "write"), (&reader, "read")];
        let repo = setup::repo(&api, &admin, &collaborators).await?;

        Ok(Self {
            process,
            mailpit,
            dir,
            url,
            api,
            admin,
            bot,
            writer,
            reader,
            repo,
        })
    }

    /// One Gitea per test binary, started on first use. Tests share its repository, so each
    /// works on issues of its own, and a webhook receives the comments of every test: match
    /// deliveries on the issue number.
    pub fn shared() -> &'static Gitea {
        static SHARED: OnceLock<Gitea> = OnceLock::new();
        SHARED.get_or_init(|| {
            // Start on a runtime of its own: each #[tokio::test] has a runtime that ends with it.
            let gitea = std::thread::spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(Gitea::start())
            })
            .join()
            .expect("Gitea start thread panicked")
            .unwrap_or_else(|e| panic!("starting the test Gitea: {e}"));
            crate::process::remove_at_exit(gitea.dir().to_owned());
            crate::process::remove_at_exit(gitea.mailpit().dir().to_owned());
            gitea
        })
    }

    /// Base URL, e.g. `http://127.0.0.1:40123` (the API is under `/api/v1`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The site admin; it owns the `household` org and so the repository.
    pub fn admin(&self) -> &User {
        &self.admin
    }

    /// `ledgerops-bot`, the controller's account: an admin collaborator, so it may read other
    /// users' permissions on the repository.
    pub fn bot(&self) -> &User {
        &self.bot
    }

    /// `writer`, a write collaborator.
    pub fn writer(&self) -> &User {
        &self.writer
    }

    /// `reader`, a read-only collaborator.
    pub fn reader(&self) -> &User {
        &self.reader
    }

    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// The Mailpit this Gitea sends its mail to: what each user's mailbox received.
    pub fn mailpit(&self) -> &Mailpit {
        &self.mailpit
    }

    /// Makes Gitea unavailable (SIGSTOP: connections are accepted by the kernel and never
    /// answered, as a hung server's are) until [`Gitea::resume`].
    pub fn pause(&self) {
        self.process.signal(libc::SIGSTOP);
    }

    /// Lets a paused Gitea answer again (SIGCONT).
    pub fn resume(&self) {
        self.process.signal(libc::SIGCONT);
    }

    /// The directory holding the database, repositories, app.ini and `gitea.log`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `GET /api/v1{path}` as `user`, for anything the helpers below do not cover.
    pub async fn get(&self, user: &User, path: &str) -> Result<Value> {
        self.api.call(Method::GET, path, user.auth(), None).await
    }

    /// Adds an active `gitea` webhook with a JSON body, signed with `secret`, on the repository
    /// for `events` (e.g. [`COMMENT_EVENTS`]); returns its id.
    pub async fn create_webhook(&self, url: &str, secret: &str, events: &[&str]) -> Result<i64> {
        // The API creates hooks inactive unless told otherwise.
        let body = json!({
            "type": "gitea",
            "active": true,
            "events": events,
            "config": {"url": url, "content_type": "json", "secret": secret},
        });
        let hook = self
            .api
            .call(
                Method::POST,
                &self.repo_path("/hooks"),
                self.admin.auth(),
                Some(&body),
            )
            .await?;
        hook["id"]
            .as_i64()
            .ok_or_else(|| api::api_error("POST hooks", format!("no id in {hook}")))
    }

    /// Opens an issue as `user`; returns its number.
    pub async fn create_issue(&self, user: &User, title: &str) -> Result<u64> {
        let body = json!({ "title": title });
        let issue = self
            .api
            .call(
                Method::POST,
                &self.repo_path("/issues"),
                user.auth(),
                Some(&body),
            )
            .await?;
        issue["number"]
            .as_u64()
            .ok_or_else(|| api::api_error("POST issues", format!("no number in {issue}")))
    }

    /// Comments `body` on issue or pull request `issue` as `user`.
    pub async fn comment(&self, user: &User, issue: u64, body: &str) -> Result<Comment> {
        let path = self.repo_path(&format!("/issues/{issue}/comments"));
        let comment = self
            .api
            .call(
                Method::POST,
                &path,
                user.auth(),
                Some(&json!({ "body": body })),
            )
            .await?;
        parse(&path, comment)
    }

    /// The comments on issue or pull request `issue`, oldest first.
    pub async fn list_comments(&self, issue: u64) -> Result<Vec<Comment>> {
        let path = self.repo_path(&format!("/issues/{issue}/comments"));
        let comments = self.get(&self.admin, &path).await?;
        parse(&path, comments)
    }

    fn repo_path(&self, rest: &str) -> String {
        format!("/repos/{}/{}{rest}", self.repo.owner, self.repo.name)
    }
}

fn parse<T: serde::de::DeserializeOwned>(path: &str, value: Value) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| api::api_error(path, format!("unexpected answer: {e}")))
}

/// Polls `/version` until Gitea answers (it migrates the fresh database first).
async fn wait_ready(api: &Api, limit: Duration, log: &Path) -> Result<()> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if api
            .call(Method::GET, "/version", Auth::None, None)
            .await
            .is_ok()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Err(Error::GiteaNotReady(limit, log_tail(log)))
}
