use super::*;

#[test]
fn parses_points_and_filters() {
    let h = TestHooks::parse(
        "after-claim=100, authorize@first=2500,bad,x=y,nowhere=5,after-job-started=1",
    );
    assert_eq!(
        h.pauses,
        [
            (Point::AfterClaim, None, Duration::from_millis(100)),
            (
                Point::Authorize,
                Some("first".into()),
                Duration::from_millis(2500)
            ),
            (Point::AfterJobStarted, None, Duration::from_millis(1)),
        ]
    );
    assert!(TestHooks::parse("").is_empty());
}

#[test]
fn every_point_is_found_by_its_name() {
    for p in Point::ALL {
        assert_eq!(Point::parse(p.name()), Some(p));
    }
}
