//! The simulator's clock: real time shifted by an offset that tests set, so "today" and the
//! rolling rate-limit window can be moved without waiting.

use std::sync::Mutex;

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ToSpan};

#[derive(Debug, Default)]
pub struct Clock {
    offset: Mutex<SignedDuration>,
}

impl Clock {
    pub fn now(&self) -> Timestamp {
        Timestamp::now()
            .checked_add(*self.offset.lock().unwrap())
            .expect("the simulator's clock within jiff's range")
    }

    pub fn now_seconds(&self) -> i64 {
        self.now().as_second()
    }

    /// Today in UTC.
    pub fn today(&self) -> Date {
        self.now().to_zoned(TimeZone::UTC).date()
    }

    /// `YYYY-MM-01` of the current month.
    pub fn current_month(&self) -> String {
        first_of_month(self.today())
    }

    /// Makes `now()` return `at`, then run on from there.
    pub fn set(&self, at: Timestamp) {
        *self.offset.lock().unwrap() = at.duration_since(Timestamp::now());
    }

    pub fn advance(&self, seconds: i64) {
        *self.offset.lock().unwrap() += SignedDuration::from_secs(seconds);
    }

    pub fn reset_to_real(&self) {
        *self.offset.lock().unwrap() = SignedDuration::ZERO;
    }
}

pub fn first_of_month(d: Date) -> String {
    d.first_of_month().to_string()
}

/// The default `since_date` of transaction lists: one year before `today`.
pub fn one_year_before(today: Date) -> Date {
    today.checked_sub(12.months()).unwrap_or(today)
}

/// The month after `d`'s (its day kept where the month has it, else the month's last).
pub fn month_after(d: Date) -> Option<Date> {
    d.checked_add(1.month()).ok()
}

/// Parses an ISO `YYYY-MM-DD` date, as a 400 if it is not one.
pub fn parse_date(s: &str) -> Result<Date, crate::SimError> {
    jiff::fmt::strtime::parse("%Y-%m-%d", s)
        .and_then(|parsed| parsed.to_date())
        .map_err(|_| crate::SimError::BadRequest(format!("invalid date: {s}")))
}

/// `at` as RFC 3339 in UTC with whole seconds, as YNAB writes its timestamps.
pub fn rfc3339_seconds(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}
