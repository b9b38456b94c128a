use super::*;

fn key(uid: &str, note: &str) -> Key {
    Key {
        uid: uid.into(),
        warning: false,
        reason: "Converged".into(),
        action: "Converge".into(),
        note: note.into(),
    }
}

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).unwrap()
}

#[test]
fn a_repeat_within_the_window_counts_on_the_same_event() {
    let mut recent = Recent::default();
    assert_eq!(recent.repeat(&key("a", "n"), at(0)), None);
    recent.remember(key("a", "n"), "a.1".into(), at(0));
    let second = recent.repeat(&key("a", "n"), at(60)).unwrap();
    assert_eq!((second.name.as_str(), second.count), ("a.1", 2));
    // The window runs from the last repeat.
    let third = recent.repeat(&key("a", "n"), at(60 + 300)).unwrap();
    assert_eq!(third.count, 3);
    // Another note, or another object, is another Event.
    assert_eq!(recent.repeat(&key("a", "other"), at(361)), None);
    assert_eq!(recent.repeat(&key("b", "n"), at(361)), None);
}

#[test]
fn after_the_window_a_repeat_is_a_new_event() {
    let mut recent = Recent::default();
    recent.remember(key("a", "n"), "a.1".into(), at(0));
    assert_eq!(recent.repeat(&key("a", "n"), at(360)), None);
    assert!(recent.0.is_empty(), "the expired one is forgotten");
}

#[test]
fn at_most_remembered_events_are_kept() {
    let mut recent = Recent::default();
    for i in 0..REMEMBERED {
        recent.remember(key(&i.to_string(), "n"), format!("e{i}"), at(0));
    }
    // Full of expired Events: they go, the new one stays.
    recent.remember(key("late", "n"), "late".into(), at(400));
    assert_eq!(recent.0.len(), 1);
    // Full of recent ones: all go rather than a sweep on every publish.
    for i in 1..REMEMBERED {
        recent.remember(key(&i.to_string(), "n"), format!("e{i}"), at(401));
    }
    assert_eq!(recent.0.len(), REMEMBERED);
    recent.remember(key("next", "n"), "next".into(), at(402));
    assert_eq!(recent.0.len(), 1);
    assert!(recent.repeat(&key("next", "n"), at(403)).is_some());
}
