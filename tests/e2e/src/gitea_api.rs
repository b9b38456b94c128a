//! Calls to the test Gitea's API as one of its users, for suites that set up repositories,
//! comments and webhooks the way a person would.

use ledgerops_testenv::gitea::{Gitea, User};
use reqwest::Method;
use serde_json::Value;

/// `method path` on the shared Gitea's `/api/v1` as `user`, with an optional JSON body; panics
/// on anything but success, and returns the JSON answer (`Null` for an empty one).
pub async fn call(method: Method, path: &str, user: &User, body: Option<Value>) -> Value {
    let gitea = Gitea::shared();
    let mut req = reqwest::Client::new()
        .request(method.clone(), format!("{}/api/v1{path}", gitea.url()))
        .header("Authorization", format!("token {}", user.token()));
    if let Some(b) = &body {
        req = req.json(b);
    }
    let resp = req.send().await.expect("Gitea answers");
    let status = resp.status();
    let text = resp.text().await.unwrap();
    assert!(
        status.is_success(),
        "{method} {path}: HTTP {status}: {text}"
    );
    if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    }
}
