//! The journal of plan writes, kept in ConfigMaps that belong to no plan: deleting a plan, or a
//! GitOps prune of it, leaves its undo data in place.
//!
//! An operation writes one entry per chunk *before* the chunk's bulk update goes out (what is
//! about to be written, and from what), and one completion after the last chunk (what landed).
//! A crash between the two leaves the entries, so whatever landed is journaled whatever happens
//! meanwhile. Every ConfigMap is immutable and carries the SHA-256 of its content; admission lets
//! only the controller create ConfigMaps with `ledgerops.dev/` labels.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ListParams, PostParams};
use kube::{Api, ResourceExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::api::common::DecisionRecord;
use crate::logic::plan::AppliedChange;
use crate::logic::plan::hash::hex_sha256;

/// Marks journal ConfigMaps.
pub const JOURNAL_LABEL: &str = "ledgerops.dev/journal";
/// A hash of the plan's name (a name may be longer than a label value can be).
pub const PLAN_LABEL: &str = "ledgerops.dev/plan-sha256";
/// SHA-256 of the content as written: a ConfigMap that no longer matches it is not used.
pub const DIGEST_ANNOTATION: &str = "ledgerops.dev/entry-sha256";

/// The key of a chunk entry in its ConfigMap (a completion record has another).
pub const ENTRY_KEY: &str = "entry.json";
const COMPLETION_KEY: &str = "completion.json";

/// One chunk of an operation, recorded before it is written: what each transaction is about to
/// go from and to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub operation_id: String,
    pub plan: String,
    pub budget: String,
    /// Which chunk of the operation this is, from 0, and how many there are.
    #[serde(default)]
    pub chunk: u32,
    #[serde(default = "one")]
    pub chunks: u32,
    /// When the operation started (entries of older versions called it `appliedAt`).
    #[serde(alias = "appliedAt")]
    pub started_at: String,
    pub changes: Vec<AppliedChange>,
    /// Who decided the write: a person's approval, or the Budget's policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionRecord>,
}

fn one() -> u32 {
    1
}

/// How an operation ended, recorded after its last chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    pub operation_id: String,
    pub plan: String,
    pub budget: String,
    pub completed_at: String,
    /// `Applied`, `PartiallyApplied` or `Failed`.
    pub outcome: String,
    /// Changes YNAB holds at the end, of `total`.
    pub written: u32,
    pub total: u32,
    /// Changes YNAB does not hold at the end, by transaction id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_written: Vec<String>,
    /// Why the operation stopped short, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Every chunk recorded for one operation, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    pub operation_id: String,
    pub started_at: String,
    pub entries: Vec<Entry>,
}

impl Operation {
    /// Every change of every recorded chunk.
    pub fn changes(&self) -> Vec<AppliedChange> {
        self.entries
            .iter()
            .flat_map(|e| e.changes.iter().cloned())
            .collect()
    }
}

/// Why the journal could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("journal ConfigMap {name}: {source}")]
    Kube { name: String, source: kube::Error },
    #[error(
        "journal ConfigMap {name} does not hold a journal entry ({reason}): restore it from a backup or delete it"
    )]
    Corrupt { name: String, reason: String },
}

fn entry_name(operation_id: &str, chunk: u32) -> String {
    format!("ledgerops-journal-{operation_id}-{chunk}")
}

/// The name of an operation's completion record.
pub fn completion_name(operation_id: &str) -> String {
    format!("ledgerops-journal-{operation_id}")
}

/// The label value naming `plan`, whatever the length of its name.
fn plan_label(plan: &str) -> String {
    hex_sha256(plan.as_bytes())[..40].to_owned()
}

/// Records one chunk before it is written. Recording the same chunk again is harmless.
pub async fn record(
    client: &kube::Client,
    namespace: &str,
    entry: &Entry,
) -> Result<(), JournalError> {
    let name = entry_name(&entry.operation_id, entry.chunk);
    create(client, namespace, &name, &entry.plan, ENTRY_KEY, entry).await
}

/// Records how the operation ended. Recording it again is harmless: the first record stands.
pub async fn complete(
    client: &kube::Client,
    namespace: &str,
    completion: &Completion,
) -> Result<(), JournalError> {
    let name = completion_name(&completion.operation_id);
    create(
        client,
        namespace,
        &name,
        &completion.plan,
        COMPLETION_KEY,
        completion,
    )
    .await
}

async fn create<T: Serialize>(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    plan: &str,
    key: &str,
    value: &T,
) -> Result<(), JournalError> {
    let json = serde_json::to_string(value).expect("a journal record always serializes");
    let digest = hex_sha256(json.as_bytes());
    let map: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": name,
            "labels": {JOURNAL_LABEL: "true", PLAN_LABEL: plan_label(plan)},
            "annotations": {DIGEST_ANNOTATION: digest},
        },
        "data": {key: json},
        // A record of what was done: nobody edits it afterwards, ledgerops included.
        "immutable": true
    }))
    .expect("a valid ConfigMap");
    let api = Api::<ConfigMap>::namespaced(client.clone(), namespace);
    let kube_error = |source| JournalError::Kube {
        name: name.to_owned(),
        source,
    };
    match api.create(&PostParams::default(), &map).await {
        Ok(_) => Ok(()),
        // Written before (a retry, or a restart): ours only if it is a labelled, intact record
        // under this key. A ConfigMap someone else put under the name stops the write instead.
        Err(e) if crate::k8s::is_conflict(&e) => {
            let existing = api.get(name).await.map_err(kube_error)?;
            let labelled = existing.labels().get(JOURNAL_LABEL).map(String::as_str) == Some("true");
            match read::<serde_json::Value>(&existing, key)? {
                Some(_) if labelled => Ok(()),
                _ => Err(JournalError::Corrupt {
                    name: name.to_owned(),
                    reason: "a ConfigMap ledgerops did not write holds the name; nothing is written until it is deleted".into(),
                }),
            }
        }
        Err(source) => Err(kube_error(source)),
    }
}

/// Every chunk entry of operation `operation_id` of `plan`, oldest chunk first: empty when none
/// was recorded.
pub async fn operation(
    client: &kube::Client,
    namespace: &str,
    plan: &str,
    operation_id: &str,
) -> Result<Option<Operation>, JournalError> {
    let mut operations = operations(client, namespace, plan).await?;
    Ok(operations.remove(operation_id))
}

/// The latest operation recorded for `plan`, if it was ever applied.
pub async fn latest_for(
    client: &kube::Client,
    namespace: &str,
    plan: &str,
) -> Result<Option<Operation>, JournalError> {
    let operations = operations(client, namespace, plan).await?;
    Ok(operations
        .into_values()
        .max_by(|a, b| a.started_at.cmp(&b.started_at)))
}

/// Every operation recorded in `namespace`, of every plan: what a resumed write checks for a
/// later operation that moved its transactions on.
pub async fn all_operations(
    client: &kube::Client,
    namespace: &str,
) -> Result<Vec<Operation>, JournalError> {
    let selector = format!("{JOURNAL_LABEL}=true");
    let operations = listed(client, namespace, &selector, None).await?;
    Ok(operations.into_values().collect())
}

/// Every operation of `plan` by id, from its chunk entries.
async fn operations(
    client: &kube::Client,
    namespace: &str,
    plan: &str,
) -> Result<BTreeMap<String, Operation>, JournalError> {
    let selector = format!("{JOURNAL_LABEL}=true,{PLAN_LABEL}={}", plan_label(plan));
    listed(client, namespace, &selector, Some(plan)).await
}

/// The operations of the journal ConfigMaps `selector` selects (of `plan` only, if given), by id.
async fn listed(
    client: &kube::Client,
    namespace: &str,
    selector: &str,
    plan: Option<&str>,
) -> Result<BTreeMap<String, Operation>, JournalError> {
    let api = Api::<ConfigMap>::namespaced(client.clone(), namespace);
    let maps = api
        .list(&ListParams::default().labels(selector))
        .await
        .map_err(|source| JournalError::Kube {
            name: format!("(label {selector})"),
            source,
        })?;
    let mut operations: BTreeMap<String, Operation> = BTreeMap::new();
    for map in &maps.items {
        let Some(entry) = read::<Entry>(map, ENTRY_KEY)? else {
            continue;
        };
        if plan.is_some_and(|p| entry.plan != p) {
            continue;
        }
        let operation = operations
            .entry(entry.operation_id.clone())
            .or_insert_with(|| Operation {
                operation_id: entry.operation_id.clone(),
                started_at: entry.started_at.clone(),
                entries: Vec::new(),
            });
        operation.entries.push(entry);
    }
    for operation in operations.values_mut() {
        operation.entries.sort_by_key(|e| e.chunk);
        operation.entries.dedup_by_key(|e| e.chunk);
    }
    Ok(operations)
}

/// The record under `key` in `map`, checked against the digest recorded with it; `None` when
/// the map holds another kind of record.
fn read<T: DeserializeOwned>(map: &ConfigMap, key: &str) -> Result<Option<T>, JournalError> {
    let name = map.name_any();
    let Some(text) = map.data.as_ref().and_then(|d| d.get(key)) else {
        return Ok(None);
    };
    let recorded = map.annotations().get(DIGEST_ANNOTATION);
    if recorded.map(String::as_str) != Some(hex_sha256(text.as_bytes()).as_str()) {
        return Err(JournalError::Corrupt {
            name,
            reason: "its content does not match the digest ledgerops recorded with it".into(),
        });
    }
    serde_json::from_str(text)
        .map(Some)
        .map_err(|e| JournalError::Corrupt {
            name,
            reason: e.to_string(),
        })
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
