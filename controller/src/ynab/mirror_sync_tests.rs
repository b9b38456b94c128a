//! Unit tests of `ynab/mirror_sync.rs`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::logic::budget::api_url::ApiUrlAllowlist;
use crate::logic::runtime::request_window::RequestWindow;
use crate::logic::values::token::Token;

fn paced(until: Timestamp) -> YnabError {
    YnabError::Paced {
        priority: "approved",
        reserved: 50,
        limit: 200,
        until,
    }
}

#[tokio::test]
async fn a_read_back_held_for_its_turn_is_not_asked_again_before_then() {
    // A port nothing listens on any more: a read that goes out fails as unreachable.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = ApiUrlAllowlist::parse(["http://127.0.0.1:*/v1"])
        .unwrap()
        .check(&format!("http://127.0.0.1:{port}/v1"))
        .unwrap();
    let window = Arc::new(Mutex::new(RequestWindow::new(200)));
    let client = YnabClient::new(&url, Token::new("t"), window, Arc::default()).unwrap();
    let cell = MirrorCell::default();
    let key = MirrorKey {
        namespace: "ns".into(),
        budget: "home".into(),
        budget_links: Arc::default(),
    };
    let hour = Duration::from_secs(3600);
    let held = paced(Timestamp::now() + hour);
    *cell.read_back_held.lock().unwrap() = Some(held.clone());
    let again = reach_back(&client, "plan-1", &cell, &key, 5, Priority::Approved).await;
    assert_eq!(again, Err(held), "not asked again before its turn");
    // Once its time has come, the read goes out.
    *cell.read_back_held.lock().unwrap() = Some(paced(Timestamp::now() - hour));
    let sent = reach_back(&client, "plan-1", &cell, &key, 5, Priority::Approved).await;
    assert!(
        matches!(sent, Err(YnabError::Unreachable { .. })),
        "{sent:?}"
    );
}
