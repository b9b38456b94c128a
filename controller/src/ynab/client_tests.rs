use super::*;

#[tokio::test]
async fn a_refused_connection_says_so_not_just_that_sending_failed() {
    // A port nothing listens on any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let error = http()
        .unwrap()
        .get(format!("http://127.0.0.1:{port}/v1/user"))
        .send()
        .await
        .unwrap_err();
    let reason = causes(&error);
    assert!(reason.to_lowercase().contains("refused"), "{reason}");
    assert!(
        !reason.contains("127.0.0.1"),
        "the URL is named elsewhere: {reason}"
    );
}
