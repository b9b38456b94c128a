//! The shared state behind every request: YNAB data, clock, faults, counters and rate limiter.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::SimError;
use crate::clock::Clock;
use crate::counters::{Counters, now_ms};
use crate::faults::Faults;
use crate::fixture::Fixture;
use crate::journal::{By, Event, Journal};
use crate::persist::{self, Persisted};
use crate::ratelimit::RateLimiter;
use crate::store::{PlanState, Store, View};

pub struct Sim {
    data: Mutex<Persisted>,
    pub clock: Clock,
    pub faults: Mutex<Faults>,
    pub counters: Mutex<Counters>,
    pub limiter: Mutex<RateLimiter>,
    pub journal: Mutex<Journal>,
    state_file: Option<PathBuf>,
}

impl Sim {
    /// Starts from the state file if it exists, else from the fixture.
    pub fn new(
        fixture: Option<Fixture>,
        state_file: Option<PathBuf>,
        rate_limit: u32,
    ) -> Result<Sim, SimError> {
        let saved = match &state_file {
            Some(path) => persist::load(path)?,
            None => None,
        };
        let data = saved.unwrap_or_else(|| Persisted::from_fixture(fixture));
        let sim = Sim {
            data: Mutex::new(data),
            clock: Clock::default(),
            faults: Mutex::default(),
            counters: Mutex::default(),
            limiter: Mutex::new(RateLimiter::new(rate_limit)),
            journal: Mutex::default(),
            state_file,
        };
        sim.save(&sim.data.lock().unwrap())?;
        Ok(sim)
    }

    fn save(&self, data: &Persisted) -> Result<(), SimError> {
        match &self.state_file {
            Some(path) => persist::save(path, data),
            None => Ok(()),
        }
    }

    /// The server knowledge of plan `plan_id` now, if there is such a plan.
    pub fn knowledge(&self, plan_id: &str) -> Option<i64> {
        let data = self.data.lock().unwrap();
        data.store.plan(plan_id).ok().map(|p| p.server_knowledge)
    }

    pub fn knows_token(&self, token: &str) -> bool {
        self.data
            .lock()
            .unwrap()
            .store
            .tokens
            .iter()
            .any(|t| t == token)
    }

    /// Reads the whole store.
    pub fn read_store<R>(&self, f: impl FnOnce(&Store) -> R) -> R {
        f(&self.data.lock().unwrap().store)
    }

    /// Reads one plan, seen at the current month.
    pub fn read<R>(
        &self,
        plan_id: &str,
        f: impl FnOnce(&View) -> Result<R, SimError>,
    ) -> Result<R, SimError> {
        let data = self.data.lock().unwrap();
        let plan = data.store.plan(plan_id)?;
        f(&View::new(plan, self.clock.current_month()))
    }

    /// Changes one plan through the API (see [`Sim::write_as`]).
    pub fn write<R, O>(
        &self,
        plan_id: &str,
        change: impl FnOnce(&mut PlanState, i64) -> Result<R, SimError>,
        render: impl FnOnce(&View, R, i64) -> O,
    ) -> Result<O, SimError> {
        self.write_as(By::Api, plan_id, change, render)
    }

    /// Changes one plan atomically at the next server knowledge, journals what it touched as
    /// `by`'s, saves, and renders the outcome.
    pub fn write_as<R, O>(
        &self,
        by: By,
        plan_id: &str,
        change: impl FnOnce(&mut PlanState, i64) -> Result<R, SimError>,
        render: impl FnOnce(&View, R, i64) -> O,
    ) -> Result<O, SimError> {
        let mut data = self.data.lock().unwrap();
        let now = crate::clock::rfc3339_seconds(self.clock.now());
        let (result, knowledge, touched) = data.store.write(plan_id, &now, change)?;
        if !touched.is_empty() {
            self.journal.lock().unwrap().record(
                now_ms(),
                Event::Change {
                    by,
                    plan_id: plan_id.to_string(),
                    knowledge,
                    touched,
                },
            );
        }
        self.save(&data)?;
        let plan = data.store.plan(plan_id)?;
        Ok(render(
            &View::new(plan, self.clock.current_month()),
            result,
            knowledge,
        ))
    }

    /// Replaces the data and the reset point with `fixture`.
    pub fn load_fixture(&self, fixture: Fixture) -> Result<(), SimError> {
        let mut data = self.data.lock().unwrap();
        *data = Persisted::from_fixture(Some(fixture));
        self.save(&data)
    }

    /// Back to the last loaded fixture; faults, counters and rate-limit windows are cleared too.
    pub fn reset(&self) -> Result<(), SimError> {
        let mut data = self.data.lock().unwrap();
        let fixture = data.fixture.take();
        *data = Persisted::from_fixture(fixture);
        self.save(&data)?;
        *self.faults.lock().unwrap() = Faults::default();
        *self.counters.lock().unwrap() = Counters::default();
        self.journal.lock().unwrap().clear();
        self.limiter.lock().unwrap().clear();
        Ok(())
    }
}
