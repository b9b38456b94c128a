use std::time::Duration;

use super::*;

#[tokio::test]
async fn a_request_reaches_every_clone_even_one_made_after_it() {
    let (asked, rx) = watch::channel(false);
    let shutdown = Shutdown(rx);
    let early = tokio::spawn(shutdown.requested());
    asked.send_replace(true);
    tokio::time::timeout(Duration::from_secs(5), early)
        .await
        .expect("the early listener hears it")
        .unwrap();
    let late = shutdown.clone().requested();
    tokio::time::timeout(Duration::from_secs(5), late)
        .await
        .expect("a listener made afterwards hears it too");
}

#[tokio::test]
async fn never_is_never_asked() {
    let waited = tokio::time::timeout(Duration::from_millis(50), Shutdown::never().requested());
    assert!(waited.await.is_err());
}
