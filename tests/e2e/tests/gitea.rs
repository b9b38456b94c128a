//! The test Gitea itself: the built version runs, permissions answer as provisioned, comment
//! webhooks reach a loopback listener signed with the hook's secret, and its notifications reach
//! the mailbox of the person notified, in its Mailpit.

use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use hmac::{Hmac, KeyInit, Mac};
use ledgerops_e2e::gitea_api;
use ledgerops_e2e::scenario::WAIT;
use ledgerops_e2e::wait::eventually;
use ledgerops_testenv::gitea::{self, COMMENT_EVENTS, Gitea};
use ledgerops_testenv::mailpit::Message;
use reqwest::Method;
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::sync::mpsc;

#[tokio::test]
async fn reports_the_built_version() {
    let gitea = Gitea::shared();
    let answer = gitea.get(gitea.admin(), "/version").await.unwrap();
    // "development" would mean the build lost its -X main.Version.
    assert_eq!(answer["version"], gitea::version().as_str(), "{answer}");
}

#[tokio::test]
async fn permission_api_tells_write_from_read() {
    let gitea = Gitea::shared();
    for (user, expected) in [(gitea.writer(), "write"), (gitea.reader(), "read")] {
        let path = format!(
            "/repos/{}/collaborators/{}/permission",
            gitea.repo().full_name(),
            user.login()
        );
        // Asked as the bot, as the controller will ask before obeying a comment.
        let answer = gitea.get(gitea.bot(), &path).await.unwrap();
        assert_eq!(answer["permission"], expected, "{}: {answer}", user.login());
    }
}

/// One webhook request as the listener saw it.
struct Delivery {
    headers: HeaderMap,
    body: Bytes,
}

/// Serves `POST /hook` on a free loopback port, handing every request to the returned channel.
async fn listen() -> (String, mpsc::UnboundedReceiver<Delivery>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let app = Router::new().route(
        "/hook",
        post(move |headers: HeaderMap, body: Bytes| async move {
            let _ = tx.send(Delivery { headers, body });
            StatusCode::OK
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), rx)
}

fn header<'a>(d: &'a Delivery, name: &str) -> &'a str {
    d.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("delivery without a readable {name} header"))
}

#[tokio::test]
async fn comment_webhook_is_signed_and_delivered_once() {
    let gitea = Gitea::shared();
    let (url, mut deliveries) = listen().await;
    let secret = "webhook-test-secret";
    gitea
        .create_webhook(&url, secret, COMMENT_EVENTS)
        .await
        .unwrap();

    // Issues are not among the hook's events, so only the comment is delivered.
    let writer = gitea.writer();
    let issue = gitea
        .create_issue(writer, "webhook round trip")
        .await
        .unwrap();
    let posted = gitea.comment(writer, issue, "/agent status").await.unwrap();
    let listed = gitea.list_comments(issue).await.unwrap();
    assert!(listed.iter().any(|c| c.id == posted.id), "{listed:?}");

    // Gitea delivers from a queue, shortly after the comment is stored.
    let delivery = tokio::time::timeout(Duration::from_secs(30), deliveries.recv())
        .await
        .expect("no webhook delivery within 30s")
        .expect("listener stopped");
    assert_eq!(header(&delivery, "X-Gitea-Event"), "issue_comment");
    assert!(!header(&delivery, "X-Gitea-Delivery").is_empty());
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(&delivery.body);
    let expected = hex::encode(mac.finalize().into_bytes());
    assert_eq!(header(&delivery, "X-Gitea-Signature"), expected);

    let payload: Value = serde_json::from_slice(&delivery.body).unwrap();
    assert_eq!(payload["action"], "created");
    assert_eq!(payload["comment"]["id"], posted.id);
    assert_eq!(payload["comment"]["body"], "/agent status");
    assert_eq!(payload["sender"]["login"], writer.login());
    assert_eq!(payload["comment"]["user"]["login"], writer.login());
    assert_eq!(
        payload["repository"]["full_name"],
        gitea.repo().full_name().as_str()
    );

    // No other test in this binary comments, so anything more would be a duplicate.
    let extra = tokio::time::timeout(Duration::from_secs(2), deliveries.recv()).await;
    assert!(extra.is_err(), "a second delivery arrived");
}

#[tokio::test]
async fn assignee_is_mailed_the_issue() {
    let gitea = Gitea::shared();
    let (admin, writer) = (gitea.admin(), gitea.writer());
    // The mailbox read below is the address Gitea has for writer.
    let account = gitea
        .get(admin, &format!("/users/{}", writer.login()))
        .await
        .unwrap();
    assert_eq!(account["email"], writer.email(), "{account}");

    // The admin opens an issue assigned to writer (a write collaborator of the private
    // repository) that also mentions them.
    let repo = gitea.repo().full_name();
    let title = "The October budget needs your review";
    let body = format!("@{} please check the groceries line.", writer.login());
    let opened = Instant::now();
    let issue = gitea_api::call(
        Method::POST,
        &format!("/repos/{repo}/issues"),
        admin,
        Some(json!({"title": title, "body": body, "assignees": [writer.login()]})),
    )
    .await;
    let number = issue["number"].as_u64().unwrap();

    // Gitea mails writer twice: that they were assigned, and the new issue that mentions them
    // (with its text). Both subjects name the repository, the title and the number.
    let subject = format!("[{repo}] {title} (#{number})");
    let assigned = format!("@{} assigned you to issue #{number}", admin.login());
    // Gitea's plain text of the HTML mail: the mentioner comes emphasized, `*@login*`.
    let mentioned = format!("*@{}* mentioned you", admin.login());
    let mailpit = gitea.mailpit();
    let mut mails = Vec::new();
    let find = |mails: &[Message], words: &str| {
        mails
            .iter()
            .find(|m| m.subject.ends_with(&subject) && m.text.contains(words))
            .cloned()
    };
    eventually(
        "both mails about the issue in writer's mailbox",
        WAIT,
        async || {
            mails = mailpit.messages_to(writer.email()).await.unwrap();
            find(&mails, &assigned).is_some() && find(&mails, &mentioned).is_some()
        },
    )
    .await;
    eprintln!(
        "writer's mails about #{number} arrived within {:?} of opening it",
        opened.elapsed()
    );
    let link = format!("{}/{repo}/issues/{number}", gitea.url());
    for words in [&assigned, &mentioned] {
        let mail = find(&mails, words).unwrap();
        assert_eq!(mail.to, [writer.email()], "{mail:#?}");
        assert_eq!(mail.from, "gitea@example.com", "{mail:#?}");
        assert!(mail.text.contains(&link), "no link to the issue: {mail:#?}");
        assert!(mail.html.contains(&link), "no link to the issue: {mail:#?}");
    }
    let mention = find(&mails, &mentioned).unwrap();
    assert!(
        mention.text.contains("please check the groceries line."),
        "{mention:#?}"
    );

    // Nobody else was told: not the admin who opened it (Gitea does not mail the doer), nor
    // reader, a collaborator who neither watches the repository nor was named.
    for user in [admin, gitea.reader()] {
        let theirs = mailpit.messages_to(user.email()).await.unwrap();
        assert!(
            !theirs.iter().any(|m| m.subject.ends_with(&subject)),
            "{}: {theirs:#?}",
            user.login()
        );
    }
}

#[tokio::test]
async fn stops_when_dropped() {
    let gitea = Gitea::start().await.unwrap();
    let port: u16 = gitea.url().rsplit(':').next().unwrap().parse().unwrap();
    let mailpit = gitea.mailpit();
    let mailpit_http: u16 = mailpit.url().rsplit(':').next().unwrap().parse().unwrap();
    let ports = [port, mailpit.smtp_port(), mailpit_http];
    let dirs = [gitea.dir().to_owned(), mailpit.dir().to_owned()];
    drop(gitea);
    for port in ports {
        assert!(
            ledgerops_testenv::port_closes(port).await,
            "Gitea or its Mailpit still listens on {port} after it was dropped"
        );
    }
    for dir in dirs {
        assert!(!dir.exists(), "{} was not removed", dir.display());
    }
}
