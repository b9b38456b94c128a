//! Ages and deadlines as kubectl prints them: `45s`, `12m`, `5h`, `3d`.

use k8s_openapi::jiff::Timestamp;

/// A span of whole seconds, shortened the way `kubectl get` shows ages.
pub fn human(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..120 => format!("{s}s"),
        120..7_200 => format!("{}m", s / 60),
        7_200..172_800 => format!("{}h", s / 3_600),
        _ => format!("{}d", s / 86_400),
    }
}

/// How long ago `then` was, at `now`.
pub fn age(then: Timestamp, now: Timestamp) -> String {
    human(now.as_second() - then.as_second())
}

/// When `deadline` is, seen from `now`: `in 23h`, or `expired 5m ago`.
pub fn until(deadline: Timestamp, now: Timestamp) -> String {
    let left = deadline.as_second() - now.as_second();
    if left > 0 {
        format!("in {}", human(left))
    } else {
        format!("expired {} ago", human(-left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortens_like_kubectl() {
        let cases = [
            (-3, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (7_199, "119m"),
            (7_200, "2h"),
            (172_799, "47h"),
            (172_800, "2d"),
        ];
        for (seconds, text) in cases {
            assert_eq!(human(seconds), text, "{seconds}");
        }
    }

    #[test]
    fn says_whether_a_deadline_passed() {
        let now = Timestamp::from_second(1_000_000).unwrap();
        let at = |s| Timestamp::from_second(s).unwrap();
        assert_eq!(until(at(1_000_000 + 86_000), now), "in 23h");
        assert_eq!(until(at(1_000_000), now), "expired 0s ago");
        assert_eq!(until(at(1_000_000 - 300), now), "expired 5m ago");
        assert_eq!(age(at(1_000_000 - 90), now), "90s");
    }
}
