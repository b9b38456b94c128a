//! A private Mailpit (<https://mailpit.axllent.org>) for tests: an SMTP server that keeps every
//! message it is given, and the HTTP API that reads them back, both on free loopback ports, its
//! SQLite store in a temp dir. The test Gitea sends its mail here (see [`crate::gitea::Gitea`]),
//! so a suite can check what landed in a person's mailbox.
//!
//! The binary comes from `tests/tools/build-mailpit.sh` (built once per version, then cached), or
//! from `$LEDGEROPS_MAILPIT_BIN`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::process::{Guarded, log_tail};
use crate::{Error, Result, free_ports, io};

/// The Mailpit version the script builds unless `MAILPIT_VERSION` says otherwise. Keep it equal
/// to the default in `tests/tools/build-mailpit.sh`.
const DEFAULT_VERSION: &str = "v1.33.1";

/// How many summaries one search page asks for.
const PAGE: usize = 100;

/// The Mailpit version under test, as `/api/v1/info` reports it (with its leading `v`).
pub fn version() -> String {
    std::env::var("MAILPIT_VERSION").unwrap_or_else(|_| DEFAULT_VERSION.into())
}

/// The directory holding the `mailpit` binary: `$LEDGEROPS_MAILPIT_BIN`, or what
/// `tests/tools/build-mailpit.sh` builds (once per version).
pub fn mailpit_dir() -> Result<PathBuf> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = match std::env::var_os("LEDGEROPS_MAILPIT_BIN") {
            Some(dir) => PathBuf::from(dir),
            None => build()?,
        };
        if dir.join("mailpit").is_file() {
            Ok(dir)
        } else {
            Err(format!("{} has no mailpit", dir.display()))
        }
    })
    .clone()
    .map_err(Error::MailpitBuild)
}

fn build() -> Result<PathBuf, String> {
    crate::binaries::run_build_script("build-mailpit.sh", &[("MAILPIT_VERSION", version())])
}

/// One message as Mailpit stored it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Mailpit's id of the message (not its `Message-ID` header).
    pub id: String,
    pub subject: String,
    /// The address of the `From` header.
    pub from: String,
    /// The addresses of the `To` header.
    pub to: Vec<String>,
    /// The addresses of the `Cc` header.
    pub cc: Vec<String>,
    /// The addresses of the `Bcc` header, and every envelope recipient the headers do not name
    /// (Mailpit records those as Bcc).
    pub bcc: Vec<String>,
    /// The text/plain body; Mailpit makes one from the HTML when the message has none.
    pub text: String,
    /// The text/html body, empty when there is none.
    pub html: String,
}

impl Message {
    /// Every address the message went to: To, Cc and Bcc.
    pub fn recipients(&self) -> impl Iterator<Item = &str> {
        self.to
            .iter()
            .chain(&self.cc)
            .chain(&self.bcc)
            .map(String::as_str)
    }
}

/// A running Mailpit. It stops, and its directory goes, when this is dropped; it is also killed
/// when the test process dies, however it dies.
pub struct Mailpit {
    // Fields drop in order: the process first, then the directory holding its store and log.
    process: Guarded,
    dir: tempfile::TempDir,
    smtp_port: u16,
    url: String,
    http: reqwest::Client,
}

impl Mailpit {
    /// Starts a fresh Mailpit, SMTP and HTTP on free loopback ports, and waits until its API
    /// answers.
    pub async fn start() -> Result<Self> {
        let mailpit = mailpit_dir()?.join("mailpit");
        let dir = tempfile::Builder::new()
            .prefix("ledgerops-mailpit-")
            .tempdir()
            .map_err(io("creating a temp dir"))?;
        let [smtp_port, http_port] = free_ports()?;
        let log = dir.path().join("mailpit.log");
        let mut cmd = Command::new(&mailpit);
        cmd.arg(format!("--smtp=127.0.0.1:{smtp_port}"))
            .arg(format!("--listen=127.0.0.1:{http_port}"))
            // In the temp dir, not Mailpit's default (a file in /tmp it removes only when it
            // is asked to stop, and it is killed).
            .arg(format!(
                "--database={}",
                dir.path().join("mailpit.db").display()
            ))
            // Keep every message: by default the oldest go past 500, and a test binary's shared
            // Gitea may send more than that.
            .arg("--max=0")
            // Offline: no release check, no reverse DNS lookup of each SMTP client.
            .arg("--disable-version-check")
            .arg("--smtp-disable-rdns");
        // Mailpit reads its settings from MP_* variables too: none of the caller's may apply.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("MP_") {
                cmd.env_remove(name);
            }
        }
        let process = Guarded::spawn(cmd, &log)?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            // A shared Mailpit outlives the runtimes of the tests that use it, and a pooled
            // connection belongs to the runtime that opened it: never reuse one.
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| api_error("building the HTTP client", e))?;
        let mailpit = Self {
            process,
            dir,
            smtp_port,
            url: format!("http://127.0.0.1:{http_port}"),
            http,
        };
        mailpit.wait_ready(Duration::from_secs(30), &log).await?;
        Ok(mailpit)
    }

    /// The SMTP port on 127.0.0.1 (plain SMTP, no authentication).
    pub fn smtp_port(&self) -> u16 {
        self.smtp_port
    }

    /// Base URL of the web UI and API, e.g. `http://127.0.0.1:40125` (the API is under
    /// `/api/v1`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The directory holding the store and `mailpit.log`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `GET /api/v1{path}`: Mailpit's JSON answer, for anything [`Mailpit::messages_to`] does
    /// not cover (`/info`, say).
    pub async fn get(&self, path: &str) -> Result<serde_json::Value> {
        self.get_json(path, &[]).await
    }

    /// Every message whose To, Cc or Bcc is `address` (compared whole, ignoring case), oldest
    /// first: what that person's mailbox received. Reading a message marks it read in Mailpit.
    pub async fn messages_to(&self, address: &str) -> Result<Vec<Message>> {
        // Mailpit's `to:` matches a substring of the To header alone (`to:bob@x` finds
        // `jimbob@x`, and misses Cc and Bcc); `addressed:` looks in every address header. The
        // exact match is made here, on the summaries, before reading each message.
        let query = format!("addressed:{address}");
        let mut ids = Vec::new();
        let mut seen = HashSet::new();
        let mut start = 0;
        loop {
            let page: SearchPage = self
                .get_parsed(
                    "/search",
                    &[
                        ("query", query.clone()),
                        ("start", start.to_string()),
                        ("limit", PAGE.to_string()),
                    ],
                )
                .await?;
            let got = page.messages.len();
            for summary in page.messages {
                let to_address = summary
                    .addresses()
                    .any(|a| a.address.eq_ignore_ascii_case(address));
                if to_address && seen.insert(summary.id.clone()) {
                    ids.push(summary.id);
                }
            }
            start += got;
            if got == 0 || start as u64 >= page.messages_count {
                break;
            }
        }
        // The search answers newest first.
        ids.reverse();
        let mut messages = Vec::with_capacity(ids.len());
        for id in ids {
            let detail: Detail = self.get_parsed(&format!("/message/{id}"), &[]).await?;
            messages.push(detail.into());
        }
        Ok(messages)
    }

    async fn get_parsed<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<T> {
        let value = self.get_json(path, query).await?;
        serde_json::from_value(value)
            .map_err(|e| api_error(&format!("GET {path}"), format!("unexpected answer: {e}")))
    }

    async fn get_json(&self, path: &str, query: &[(&str, String)]) -> Result<serde_json::Value> {
        let call = format!("GET {path}");
        let resp = self
            .http
            .get(format!("{}/api/v1{path}", self.url))
            .query(query)
            .send()
            .await
            .map_err(|e| api_error(&call, e))?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| api_error(&call, e))?;
        if !status.is_success() {
            return Err(api_error(&call, format!("HTTP {status}: {text}")));
        }
        serde_json::from_str(&text)
            .map_err(|e| api_error(&call, format!("answer is not JSON ({e}): {text}")))
    }

    /// Polls `/readyz` until Mailpit answers 200 (its store is open and both servers listen).
    async fn wait_ready(&self, limit: Duration, log: &Path) -> Result<()> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.process.exited() {
                return Err(Error::Exited("mailpit", log_tail(log)));
            }
            let ready = self
                .http
                .get(format!("{}/readyz", self.url))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if ready {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(Error::NotReady("mailpit", limit, log_tail(log)))
    }
}

fn api_error(call: &str, detail: impl ToString) -> Error {
    Error::MailpitApi {
        call: call.to_owned(),
        detail: detail.to_string(),
    }
}

/// An address as Mailpit's API spells it.
#[derive(Debug, Deserialize)]
struct Address {
    #[serde(rename = "Address")]
    address: String,
}

/// One page of `GET /api/v1/search`.
#[derive(Debug, Deserialize)]
struct SearchPage {
    /// How many messages match the search, over all pages.
    messages_count: u64,
    messages: Vec<Summary>,
}

/// A message summary, as searches list them. Address lists may be `null`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Summary {
    #[serde(rename = "ID")]
    id: String,
    to: Option<Vec<Address>>,
    cc: Option<Vec<Address>>,
    bcc: Option<Vec<Address>>,
}

impl Summary {
    fn addresses(&self) -> impl Iterator<Item = &Address> {
        [&self.to, &self.cc, &self.bcc]
            .into_iter()
            .flatten()
            .flatten()
    }
}

/// `GET /api/v1/message/{ID}`: the message, parsed.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Detail {
    #[serde(rename = "ID")]
    id: String,
    subject: String,
    from: Option<Address>,
    to: Option<Vec<Address>>,
    cc: Option<Vec<Address>>,
    bcc: Option<Vec<Address>>,
    text: String,
    #[serde(rename = "HTML")]
    html: String,
}

impl From<Detail> for Message {
    fn from(d: Detail) -> Self {
        let addresses =
            |list: Option<Vec<Address>>| list.into_iter().flatten().map(|a| a.address).collect();
        Self {
            id: d.id,
            subject: d.subject,
            from: d.from.map(|a| a.address).unwrap_or_default(),
            to: addresses(d.to),
            cc: addresses(d.cc),
            bcc: addresses(d.bcc),
            text: d.text,
            html: d.html,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpStream;

    use super::*;

    /// Sends `data` from `from` to the envelope recipients `rcpt` over plain SMTP, checking each
    /// reply's code.
    fn send(port: u16, from: &str, rcpt: &[&str], data: &str) {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut writer = stream;
        let mut expect = |code: &str| {
            // Multi-line replies continue with `code-`; the last line is `code `.
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                assert!(line.starts_with(code), "expected {code}, got {line:?}");
                if line.as_bytes().get(3) == Some(&b' ') {
                    break;
                }
            }
        };
        expect("220");
        let mut say = |line: &str, code: &str| {
            write!(writer, "{line}\r\n").unwrap();
            expect(code);
        };
        say("EHLO localhost", "250");
        say(&format!("MAIL FROM:<{from}>"), "250");
        for r in rcpt {
            say(&format!("RCPT TO:<{r}>"), "250");
        }
        say("DATA", "354");
        say(&format!("{}\r\n.", data.replace('\n', "\r\n")), "250");
        say("QUIT", "221");
    }

    #[tokio::test]
    async fn a_mailbox_is_every_message_to_cc_or_bcc_that_address() {
        let mailpit = Mailpit::start().await.unwrap();
        let info = mailpit.get("/info").await.unwrap();
        assert_eq!(info["Version"], version().as_str(), "{info}");

        let port = mailpit.smtp_port();
        send(
            port,
            "gitea@example.com",
            &["writer@example.com", "cowriter@example.com"],
            "From: Gitea <gitea@example.com>\nTo: Writer <Writer@Example.com>\nCc: cowriter@example.com\nSubject: first\n\nplain body\n",
        );
        // writer only on the envelope: Mailpit records it as Bcc.
        send(
            port,
            "gitea@example.com",
            &["reader@example.com", "writer@example.com"],
            "From: gitea@example.com\nTo: reader@example.com\nSubject: second\n\nanother body\n",
        );
        send(
            port,
            "gitea@example.com",
            &["cowriter@example.com"],
            "From: gitea@example.com\nTo: cowriter@example.com\nSubject: not writer's\n\nx\n",
        );

        let writer = mailpit.messages_to("writer@example.com").await.unwrap();
        let subjects: Vec<&str> = writer.iter().map(|m| m.subject.as_str()).collect();
        // Oldest first; cowriter@ contains writer@ but is another mailbox.
        assert_eq!(subjects, ["first", "second"], "{writer:#?}");
        let first = &writer[0];
        assert_eq!(first.from, "gitea@example.com");
        assert_eq!(first.to, ["Writer@Example.com"]);
        assert_eq!(first.cc, ["cowriter@example.com"]);
        assert_eq!(first.text.trim_end(), "plain body");
        assert_eq!(first.html, "");
        assert_eq!(writer[1].bcc, ["writer@example.com"]);
        assert!(writer[1].recipients().any(|r| r == "writer@example.com"));

        let cowriter = mailpit.messages_to("cowriter@example.com").await.unwrap();
        assert_eq!(cowriter.len(), 2, "{cowriter:#?}");
        assert!(
            mailpit
                .messages_to("nobody@example.com")
                .await
                .unwrap()
                .is_empty()
        );
    }

    #[tokio::test]
    async fn stops_when_dropped() {
        let mailpit = Mailpit::start().await.unwrap();
        let http: u16 = mailpit.url().rsplit(':').next().unwrap().parse().unwrap();
        let ports = [mailpit.smtp_port(), http];
        let dir = mailpit.dir().to_owned();
        drop(mailpit);
        for port in ports {
            assert!(
                crate::port_closes(port).await,
                "Mailpit still listens on {port} after it was dropped"
            );
        }
        assert!(!dir.exists(), "{} was not removed", dir.display());
    }
}
