//! Unit tests of `logic/approval/digest.rs`.

use jiff::civil::date;

use super::*;
use crate::logic::approval::inbox::tests::request;

fn inbox(at: Option<&str>, zone: &str) -> Inbox {
    Inbox {
        digest_at: at.map(str::to_owned),
        time_zone: zone.to_owned(),
        ..Inbox::default()
    }
}

/// `YYYY-MM-DD HH:MM` in Paris.
fn paris(day: (i16, i8, i8), hour: i8, minute: i8) -> Timestamp {
    date(day.0, day.1, day.2)
        .at(hour, minute, 0, 0)
        .in_tz("Europe/Paris")
        .unwrap()
        .timestamp()
}

#[test]
fn a_schedule_needs_a_time_and_a_known_zone() {
    assert!(schedule(&inbox(None, "UTC")).unwrap().is_none());
    assert!(
        schedule(&inbox(Some("07:30"), "Europe/Paris"))
            .unwrap()
            .is_some()
    );
    let wrong_zone = schedule(&inbox(Some("07:30"), "Europe/Atlantis")).unwrap_err();
    assert!(
        wrong_zone.contains("\"Europe/Atlantis\" is not an IANA time zone"),
        "{wrong_zone}"
    );
    let wrong_time = schedule(&inbox(Some("7h30"), "UTC")).unwrap_err();
    assert!(wrong_time.contains("digestAt \"7h30\""), "{wrong_time}");
}

#[test]
fn the_digest_is_due_from_its_local_time_for_a_few_hours() {
    let s = schedule(&inbox(Some("07:30"), "Europe/Paris"))
        .unwrap()
        .unwrap();
    let day = (2026, 12, 6);
    let cases = [
        ("before its time", paris(day, 7, 29), None),
        ("at its time", paris(day, 7, 30), Some("2026-12-06")),
        (
            "a controller back at noon",
            paris(day, 12, 0),
            Some("2026-12-06"),
        ),
        ("in the evening: skipped", paris(day, 13, 30), None),
        (
            "just after midnight, local",
            paris((2026, 12, 7), 0, 5),
            None,
        ),
    ];
    for (case, now, expected) in cases {
        assert_eq!(s.due(now).as_deref(), expected, "{case}");
    }
    // 07:30 in Paris is 06:30 UTC in winter and 05:30 in summer.
    assert_eq!(s.next(paris(day, 6, 0)).to_string(), "2026-12-06T06:30:00Z");
    assert_eq!(
        s.next(paris(day, 7, 30)).to_string(),
        "2026-12-07T06:30:00Z"
    );
    assert_eq!(
        s.next(paris((2026, 7, 1), 8, 0)).to_string(),
        "2026-07-02T05:30:00Z"
    );
    // The night clocks go forward (29 March 2026, 02:00 → 03:00): a 02:30 digest goes at 03:30.
    let s = schedule(&inbox(Some("02:30"), "Europe/Paris"))
        .unwrap()
        .unwrap();
    assert_eq!(
        s.next(paris((2026, 3, 28), 12, 0)).to_string(),
        "2026-03-29T01:30:00Z"
    );
}

#[test]
fn the_digest_is_found_by_its_budget_and_day() {
    let body = format!("{}\nwhat waits", marker("family", "home", "2026-12-06"));
    assert_eq!(day_of(&body, "family", "home"), Some("2026-12-06"));
    assert_eq!(day_of(&body, "family", "holiday"), None);
    assert_eq!(day_of(&body, "neighbours", "home"), None);
    assert_eq!(day_of(&format!("> {body}"), "family", "home"), None);
}

#[test]
fn the_digest_lists_what_waits_oldest_first_or_is_not_sent() {
    let now = Timestamp::from_second(1_790_000_000 + 7_200).unwrap();
    let mut old = request("groceries-1", 0, &[]);
    old.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        Timestamp::from_second(1_790_000_000).unwrap(),
    ));
    let mut new = request("rent-1", 60, &[]);
    new.spec.subject.name = "rent".into();
    new.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        Timestamp::from_second(1_790_003_600).unwrap(),
    ));
    new.spec.changes = serde_json::from_value(serde_json::json!([
        {"transactionId": "tx-9", "date": "2026-09-01", "amount": "-900.00", "toCategory": "Rent"}
    ]))
    .unwrap();
    let mut lines = [
        Line {
            request: &new,
            issue: None,
        },
        Line {
            request: &old,
            issue: Some(7),
        },
    ];
    let (title, body) = render(("family", "home"), "2026-12-06", &mut lines, 2, now).unwrap();
    assert_eq!(
        title,
        "ledgerops: 2 request(s) wait in Budget home (2026-12-06)"
    );
    assert_eq!(
        body.lines().next(),
        Some("<!-- ledgerops:digest budget=family/home day=2026-12-06 -->")
    );
    let first = body.find("`groceries-1`").unwrap();
    let second = body.find("`rent-1`").unwrap();
    assert!(first < second, "oldest first: {body}");
    assert!(body.contains("| `groceries-1` | CategorizationPlan `groceries` | 3 | 0.00 | 2h 0m | 2026-09-21 14:13 UTC | #7 |"), "{body}");
    assert!(
        body.contains("| `rent-1` | CategorizationPlan `rent` | 3 | 900.00 | 1h 0m |"),
        "{body}"
    );
    assert!(body.contains("| none |"), "{body}");
    assert!(render(("family", "home"), "2026-12-06", &mut [], 2, now).is_none());
}
