//! Optional state file: the data is written after every change (to a temporary file, then
//! renamed, so a crash never leaves half a file) and read back at start.

use std::path::Path;

use ledgerops::ynab_model::User;
use serde::{Deserialize, Serialize};

use crate::SimError;
use crate::fixture::Fixture;
use crate::store::Store;

/// Everything that survives a restart: the data and the fixture `reset` goes back to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Persisted {
    pub fixture: Option<Fixture>,
    pub store: Store,
}

impl Persisted {
    pub fn from_fixture(fixture: Option<Fixture>) -> Persisted {
        let store = match &fixture {
            Some(f) => Store::from_fixture(f),
            None => Store {
                user: User {
                    id: "00000000-0000-4000-8000-000000000001".to_string(),
                },
                tokens: Vec::new(),
                plans: Vec::new(),
            },
        };
        Persisted { fixture, store }
    }
}

pub fn load(path: &Path) -> Result<Option<Persisted>, SimError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes)?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

pub fn save(path: &Path, data: &Persisted) -> Result<(), SimError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, serde_json::to_vec(data)?)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
