//! Unit tests of `logic/runtime/lease.rs`.

use super::*;

fn timing() -> Timing {
    Timing::new(
        Duration::from_secs(15),
        Duration::from_secs(10),
        Duration::from_secs(2),
    )
    .unwrap()
}

fn record(version: &str, holder: Option<&str>, transitions: i32) -> Record {
    Record {
        version: version.into(),
        holder: holder.map(str::to_owned),
        lease_seconds: 15,
        transitions,
    }
}

fn claim(transitions: i32, new_term: bool) -> Claim {
    Claim {
        holder: "me".into(),
        lease_seconds: 15,
        transitions,
        new_term,
    }
}

#[test]
fn timing_is_refused_unless_deadline_and_retry_nest_inside_the_term() {
    let s = Duration::from_secs;
    let cases = [
        (s(15), s(10), s(2), None),
        (s(15), s(15), s(2), Some("renew-deadline")),
        (s(15), s(20), s(2), Some("renew-deadline")),
        (s(15), s(10), s(10), Some("retry-period")),
        (
            Duration::from_millis(1500),
            s(1),
            Duration::from_millis(100),
            Some("whole seconds"),
        ),
        (
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
            Some("whole seconds"),
        ),
    ];
    for (lease, renew, retry, refused) in cases {
        let got = Timing::new(lease, renew, retry);
        match refused {
            None => assert!(got.is_ok(), "{lease:?} {renew:?} {retry:?}"),
            Some(word) => {
                let e = got.unwrap_err().to_string();
                assert!(e.contains(word), "{lease:?} {renew:?} {retry:?}: {e}");
            }
        }
    }
}

#[test]
fn what_to_do_with_the_lease() {
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let seen = |r: Record, at: Instant| {
        Some(Seen {
            record: r,
            since: at,
        })
    };
    let cases: Vec<(&str, Option<Seen>, Instant, Step)> = vec![
        ("no lease yet", None, t0, Step::Create(claim(0, true))),
        (
            "ours: renew, same term",
            seen(record("1", Some("me"), 3), t0),
            t0 + s(30),
            Step::Write(claim(3, false)),
        ),
        (
            "released: take, a new term",
            seen(record("1", None, 3), t0),
            t0,
            Step::Write(claim(4, true)),
        ),
        (
            "released as an empty holder",
            seen(record("1", Some(""), 3), t0),
            t0,
            Step::Write(claim(4, true)),
        ),
        (
            "theirs, just renewed: wait a retry period",
            seen(record("1", Some("other"), 3), t0),
            t0 + s(1),
            Step::Wait {
                holder: "other".into(),
                for_at_most: s(2),
            },
        ),
        (
            "theirs, about to expire: wait only until then",
            seen(record("1", Some("other"), 3), t0),
            t0 + s(14),
            Step::Wait {
                holder: "other".into(),
                for_at_most: s(1),
            },
        ),
        (
            "theirs, unchanged for the whole term: take",
            seen(record("1", Some("other"), 3), t0),
            t0 + s(15),
            Step::Write(claim(4, true)),
        ),
    ];
    for (what, seen, now, want) in cases {
        assert_eq!(next(seen.as_ref(), "me", &timing(), now), want, "{what}");
    }
}

#[test]
fn a_term_counts_from_when_we_saw_the_record_change_not_from_its_clock() {
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let first = observe(None, record("1", Some("other"), 0), t0);
    // The same record seen again keeps its time: the holder has stopped renewing.
    let same = observe(
        Some(first.clone()),
        record("1", Some("other"), 0),
        t0 + s(10),
    );
    assert_eq!(same.since, t0);
    assert!(matches!(
        next(Some(&same), "me", &timing(), t0 + s(15)),
        Step::Write(_)
    ));
    // A renewal (a new resourceVersion) restarts the term on our clock.
    let renewed = observe(Some(same), record("2", Some("other"), 0), t0 + s(12));
    assert_eq!(renewed.since, t0 + s(12));
    assert!(matches!(
        next(Some(&renewed), "me", &timing(), t0 + s(15)),
        Step::Wait { .. }
    ));
}

#[test]
fn a_holder_acts_only_within_the_renew_deadline() {
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let cases = [
        (None, t0, false),
        (Some(t0), t0, true),
        (Some(t0), t0 + s(9), true),
        (Some(t0), t0 + s(10), false),
        (Some(t0), t0 + s(60), false),
        // A renewal stamped after `now` (read before it was written) still counts.
        (Some(t0 + s(1)), t0, true),
    ];
    for (renewed, now, want) in cases {
        assert_eq!(
            may_act(renewed, &timing(), now),
            want,
            "{renewed:?} {now:?}"
        );
    }
}
