//! The morning queue: once a day, at the time and in the time zone a Budget names, one issue
//! lists every request of the Budget that waits for a person, oldest first, each with its inbox
//! issue, amount and expiry. Nothing is opened when nothing waits. The issue is its own record:
//! its hidden marker names the Budget and the day, so a restart or a new leader finds it instead
//! of opening another.

use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;

use super::inbox_body::{kind, total};
use crate::api::approval::ApprovalRequest;
use crate::api::budget::Inbox;
use crate::logic::job::report::cell_code;

/// A digest is still opened this long after its time (a controller that was down, or a Budget
/// that asked for one just now); later, that day's is skipped rather than sent in the evening.
pub const LATE: SignedDuration = SignedDuration::from_hours(6);

/// When a Budget's digest goes out.
#[derive(Debug, Clone)]
pub struct Schedule {
    at: Time,
    zone: TimeZone,
}

/// The Budget's schedule: None without `digestAt`; an error naming what is wrong.
pub fn schedule(inbox: &Inbox) -> Result<Option<Schedule>, String> {
    let Some(at) = inbox.digest_at.as_deref() else {
        return Ok(None);
    };
    let time = Time::strptime("%H:%M", at).map_err(|_| {
        format!("spec.approval.inbox.digestAt {at:?} is not a time of day such as 07:30")
    })?;
    let zone = TimeZone::get(&inbox.time_zone).map_err(|_| {
        format!(
            "spec.approval.inbox.timeZone {:?} is not an IANA time zone: use for example Europe/Paris or UTC",
            inbox.time_zone
        )
    })?;
    Ok(Some(Schedule { at: time, zone }))
}

impl Schedule {
    /// The digest time of local day `day` (a time a change of clocks skips is taken as the
    /// next one that exists).
    fn on(&self, day: Date) -> Timestamp {
        day.to_datetime(self.at)
            .to_zoned(self.zone.clone())
            .map_or(Timestamp::MAX, |z| z.timestamp())
    }

    fn today(&self, now: Timestamp) -> Date {
        now.to_zoned(self.zone.clone()).date()
    }

    /// The local day (`YYYY-MM-DD`) whose digest is due at `now`: today's, once its time has
    /// come and for [`LATE`] after.
    pub fn due(&self, now: Timestamp) -> Option<String> {
        let today = self.today(now);
        let at = self.on(today);
        (at <= now && now.duration_since(at) < LATE).then(|| today.to_string())
    }

    /// The first digest time after `now`.
    pub fn next(&self, now: Timestamp) -> Timestamp {
        let today = self.today(now);
        let at = self.on(today);
        if at > now {
            return at;
        }
        today.tomorrow().map_or(Timestamp::MAX, |d| self.on(d))
    }
}

/// The hidden first line of Budget `namespace/budget`'s digest of `day`.
pub fn marker(namespace: &str, budget: &str, day: &str) -> String {
    format!("<!-- ledgerops:digest budget={namespace}/{budget} day={day} -->")
}

/// The day of the digest whose body is `body`, if it is one of Budget `namespace/budget`.
pub fn day_of<'a>(body: &'a str, namespace: &str, budget: &str) -> Option<&'a str> {
    let prefix = format!("<!-- ledgerops:digest budget={namespace}/{budget} day=");
    body.lines()
        .next()?
        .strip_prefix(&prefix)?
        .strip_suffix(" -->")
        .filter(|d| d.len() == 10)
}

/// One waiting request, and the number of its inbox issue if it has one.
pub struct Line<'a> {
    pub request: &'a ApprovalRequest,
    pub issue: Option<i64>,
}

/// The digest of `day` for Budget `namespace/budget`: its title and body, `waiting` oldest
/// first; None when nothing waits.
pub fn render(
    (namespace, budget): (&str, &str),
    day: &str,
    waiting: &mut [Line],
    decimal_digits: u8,
    now: Timestamp,
) -> Option<(String, String)> {
    if waiting.is_empty() {
        return None;
    }
    waiting.sort_by_key(|l| {
        (
            l.request.metadata.creation_timestamp.clone().map(|t| t.0),
            l.request.name_any(),
        )
    });
    let title = format!(
        "ledgerops: {} request(s) wait in Budget {budget} ({day})",
        waiting.len()
    );
    let mut body = marker(namespace, budget, day);
    body.push_str(&format!(
        "\nWhat waits for a decision in Budget {} of namespace {}, oldest first. Each line's issue holds its review and the words to answer with.\n\n| request | what | changes | amount | waiting | expires | issue |\n|---|---|---|---|---|---|---|\n",
        cell_code(budget),
        cell_code(namespace),
    ));
    for line in waiting.iter() {
        let r = line.request;
        let waited = r
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| now.duration_since(t.0))
            .unwrap_or_default();
        body.push_str(&format!(
            "| {} | {} {} | {} | {} | {} | {} | {} |\n",
            cell_code(&r.name_any()),
            kind(r),
            cell_code(&r.spec.subject.name),
            r.spec.change_count,
            total(r, decimal_digits),
            hours(waited),
            r.spec.expires_at.0.strftime("%Y-%m-%d %H:%M UTC"),
            line.issue
                .map_or_else(|| "none".to_owned(), |n| format!("#{n}")),
        ));
    }
    body.push_str("\nThis issue is closed when the next digest opens; nothing is opened on a day when nothing waits.\n");
    Some((title, body))
}

/// A duration as whole hours and minutes, such as `26h 5m`.
fn hours(d: SignedDuration) -> String {
    let minutes = d.as_secs().max(0) / 60;
    format!("{}h {}m", minutes / 60, minutes % 60)
}

#[cfg(test)]
#[path = "digest_tests.rs"]
mod tests;
