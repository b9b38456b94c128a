use super::Listed;

#[tokio::test]
async fn every_waiter_wakes_when_the_list_arrives() {
    let listed = tokio::sync::watch::Sender::new(false);
    let waiters: Vec<_> = (0..8)
        .map(|_| tokio::spawn(Listed(listed.subscribe()).wait()))
        .collect();
    tokio::task::yield_now().await;
    listed.send_replace(true);
    for waiter in waiters {
        assert!(waiter.await.unwrap());
    }
    assert!(Listed(listed.subscribe()).wait().await, "a late waiter");
}

#[tokio::test]
async fn a_watch_that_stops_before_its_list_says_so() {
    let listed = tokio::sync::watch::Sender::new(false);
    let waiter = tokio::spawn(Listed(listed.subscribe()).wait());
    drop(listed);
    assert!(!waiter.await.unwrap());
}
