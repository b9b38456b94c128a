//! The test Gitea itself: the built version runs, permissions answer as provisioned, and comment
//! webhooks reach a loopback listener signed with the hook's secret.

use std::net::TcpStream;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use hmac::{Hmac, KeyInit, Mac};
use ledgerops_testenv::gitea::{self, COMMENT_EVENTS, Gitea};
use serde_json::Value;
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
async fn stops_when_dropped() {
    let gitea = Gitea::start().await.unwrap();
    let port: u16 = gitea.url().rsplit(':').next().unwrap().parse().unwrap();
    let dir = gitea.dir().to_owned();
    drop(gitea);
    // SIGKILL is delivered at once, but the kernel closes the socket a moment later.
    let mut closed = false;
    for _ in 0..50 {
        if TcpStream::connect(("127.0.0.1", port)).is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(closed, "Gitea still listens on {port} after it was dropped");
    assert!(!dir.exists(), "{} was not removed", dir.display());
}
