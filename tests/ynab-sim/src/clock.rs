//! The simulator's clock: real time shifted by an offset that tests set, so "today" and the
//! rolling rate-limit window can be moved without waiting.

use std::sync::Mutex;

use chrono::{DateTime, Datelike, Months, NaiveDate, TimeDelta, Utc};

#[derive(Debug, Default)]
pub struct Clock {
    offset: Mutex<TimeDelta>,
}

impl Clock {
    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + *self.offset.lock().unwrap()
    }

    pub fn now_seconds(&self) -> i64 {
        self.now().timestamp()
    }

    pub fn today(&self) -> NaiveDate {
        self.now().date_naive()
    }

    /// `YYYY-MM-01` of the current month.
    pub fn current_month(&self) -> String {
        first_of_month(self.today())
    }

    /// Makes `now()` return `at`, then run on from there.
    pub fn set(&self, at: DateTime<Utc>) {
        *self.offset.lock().unwrap() = at - Utc::now();
    }

    pub fn advance(&self, seconds: i64) {
        *self.offset.lock().unwrap() += TimeDelta::seconds(seconds);
    }

    pub fn reset_to_real(&self) {
        *self.offset.lock().unwrap() = TimeDelta::zero();
    }
}

pub fn first_of_month(d: NaiveDate) -> String {
    format!("{:04}-{:02}-01", d.year(), d.month())
}

/// The default `since_date` of transaction lists: one year before `today`.
pub fn one_year_before(today: NaiveDate) -> NaiveDate {
    today.checked_sub_months(Months::new(12)).unwrap_or(today)
}

/// Parses an ISO `YYYY-MM-DD` date, as a 400 if it is not one.
pub fn parse_date(s: &str) -> Result<NaiveDate, crate::SimError> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map_err(|_| crate::SimError::BadRequest(format!("invalid date: {s}")))
}
