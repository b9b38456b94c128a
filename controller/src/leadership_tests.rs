use std::time::Duration;

use super::*;

#[test]
fn a_sole_process_always_acts_an_elected_one_only_while_renewed() {
    assert!(Leadership::sole().holds());
    let timing = Timing::new(
        Duration::from_secs(15),
        Duration::from_secs(10),
        Duration::from_secs(2),
    )
    .unwrap();
    let elected = Leadership::elected(timing);
    let seen_by_the_client = elected.clone();
    assert!(!seen_by_the_client.holds(), "nothing held yet");
    elected.renewed(Instant::now());
    assert!(seen_by_the_client.holds());
    elected.renewed(Instant::now() - Duration::from_secs(11));
    assert!(!seen_by_the_client.holds(), "past the renew deadline");
    elected.renewed(Instant::now());
    elected.lost();
    assert!(!seen_by_the_client.holds());
}
