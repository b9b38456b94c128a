//! YNAB's limit: N requests per token within any rolling hour (default 200).

use std::collections::{BTreeMap, VecDeque};

use crate::SimError;

const WINDOW_SECONDS: i64 = 3600;

#[derive(Debug)]
pub struct RateLimiter {
    per_hour: u32,
    /// Token → times (simulated clock, seconds) of its accepted requests within the window.
    windows: BTreeMap<String, VecDeque<i64>>,
}

impl RateLimiter {
    pub fn new(per_hour: u32) -> Self {
        RateLimiter {
            per_hour,
            windows: BTreeMap::new(),
        }
    }

    pub fn set_limit(&mut self, per_hour: u32) {
        self.per_hour = per_hour;
    }

    pub fn clear(&mut self) {
        self.windows.clear();
    }

    /// Admits one request at `now`, or answers 429. Refused requests do not fill the window.
    pub fn check(&mut self, token: &str, now: i64) -> Result<(), SimError> {
        let window = self.windows.entry(token.to_string()).or_default();
        while window.front().is_some_and(|t| *t <= now - WINDOW_SECONDS) {
            window.pop_front();
        }
        if window.len() >= self.per_hour as usize {
            return Err(SimError::TooManyRequests(self.per_hour));
        }
        window.push_back(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_rolls() {
        let mut limiter = RateLimiter::new(2);
        assert!(limiter.check("t", 0).is_ok());
        assert!(limiter.check("t", 10).is_ok());
        assert!(limiter.check("t", 20).is_err());
        assert!(limiter.check("other", 20).is_ok());
        assert!(limiter.check("t", 3600).is_ok());
        assert!(limiter.check("t", 3605).is_err());
        assert!(limiter.check("t", 3610).is_ok());
    }
}
