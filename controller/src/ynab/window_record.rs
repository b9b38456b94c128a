//! A token's request window and its record (a [`RecordStore`], kept in Kubernetes): the window reads
//! the record back before this process's first request with the token, and every request is
//! written down before it goes out. Without the record, a restarted replica or a new leader
//! would count from zero while YNAB still counts what the one before it sent.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use k8s_openapi::jiff::Timestamp;
use sha2::{Digest, Sha256};

use crate::logic::runtime::request_record::RecordStore;
use crate::logic::runtime::request_window::RequestWindow;
use crate::logic::values::token::Token;

/// One window's place in the record.
pub struct WindowRecord {
    records: Arc<dyn RecordStore>,
    /// Names the token and URL without showing the token.
    key: String,
    read: AtomicBool,
}

impl WindowRecord {
    pub fn new(records: Arc<dyn RecordStore>, api_url: &str, token: &Token) -> Self {
        let digest = Sha256::digest(format!("{api_url}\n{}", token.expose()).as_bytes());
        let key = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        Self {
            records,
            key,
            read: AtomicBool::new(false),
        }
    }

    /// Before the first request of this process with the token: counts what the record holds.
    /// Read again until a read succeeds (counting twice what is counted already adds nothing).
    pub async fn read_once(&self, window: &Mutex<RequestWindow>) -> Result<(), String> {
        if self.read.load(Ordering::Acquire) {
            return Ok(());
        }
        let recorded = self.records.load(&self.key).await?;
        let now = Timestamp::now();
        window
            .lock()
            .expect("request window lock")
            .absorb(&recorded, now);
        self.read.store(true, Ordering::Release);
        Ok(())
    }

    /// Right after a request was counted in `window`, before it goes out.
    pub async fn write(&self, window: &Mutex<RequestWindow>) -> Result<(), String> {
        let now = Timestamp::now();
        let minutes = window.lock().expect("request window lock").minutes(now);
        self.records.save(&self.key, &minutes, now).await
    }
}
