//! The journal of applied plans, kept in ConfigMaps that belong to no plan: deleting a plan, or
//! a GitOps prune of it, leaves its undo data in place.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ListParams, PostParams};
use kube::{Api, ResourceExt};
use serde::{Deserialize, Serialize};

use crate::api::common::DecisionRecord;
use crate::logic::plan::AppliedChange;
use crate::logic::plan::hash::hex_sha256;

/// Marks journal ConfigMaps.
pub const JOURNAL_LABEL: &str = "ledgerops.dev/journal";
/// Names the plan a journal entry records.
pub const PLAN_LABEL: &str = "ledgerops.dev/plan";
/// SHA-256 of the entry as written: an entry that no longer matches it is not used for an undo.
pub const DIGEST_ANNOTATION: &str = "ledgerops.dev/entry-sha256";

/// One applied operation: what each transaction was before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub operation_id: String,
    pub plan: String,
    pub budget: String,
    pub applied_at: String,
    pub changes: Vec<AppliedChange>,
    /// Who decided the write: a person's approval, or the Budget's policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionRecord>,
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

fn name_of(operation_id: &str) -> String {
    format!("ledgerops-journal-{operation_id}")
}

/// Records `entry`. Recording the same operation again is harmless.
pub async fn record(
    client: &kube::Client,
    namespace: &str,
    entry: &Entry,
) -> Result<(), JournalError> {
    let name = name_of(&entry.operation_id);
    let json = serde_json::to_string_pretty(entry).expect("an entry always serializes");
    let digest = hex_sha256(json.as_bytes());
    let map: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": name,
            "labels": {JOURNAL_LABEL: "true", PLAN_LABEL: entry.plan},
            "annotations": {DIGEST_ANNOTATION: digest},
        },
        "data": {"entry.json": json},
        // A record of what was done: nobody edits it afterwards, ledgerops included.
        "immutable": true
    }))
    .expect("a valid ConfigMap");
    match Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &map)
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(source) => Err(JournalError::Kube { name, source }),
    }
}

/// The latest entry recorded for `plan`, if it was ever applied.
pub async fn latest_for(
    client: &kube::Client,
    namespace: &str,
    plan: &str,
) -> Result<Option<Entry>, JournalError> {
    let api = Api::<ConfigMap>::namespaced(client.clone(), namespace);
    let selector = format!("{JOURNAL_LABEL}=true,{PLAN_LABEL}={plan}");
    let maps = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| JournalError::Kube {
            name: format!("(label {selector})"),
            source,
        })?;
    let mut entries = Vec::new();
    for map in maps.items {
        let name = map.metadata.name.clone().unwrap_or_default();
        let text = map
            .data
            .as_ref()
            .and_then(|d| d.get("entry.json"))
            .cloned()
            .unwrap_or_default();
        let recorded = map.annotations().get(DIGEST_ANNOTATION).cloned();
        if recorded.as_deref() != Some(hex_sha256(text.as_bytes()).as_str()) {
            return Err(JournalError::Corrupt {
                name,
                reason: "its content does not match the digest ledgerops recorded with it".into(),
            });
        }
        let entry: Entry = serde_json::from_str(&text).map_err(|e| JournalError::Corrupt {
            name,
            reason: e.to_string(),
        })?;
        entries.push(entry);
    }
    Ok(entries
        .into_iter()
        .max_by(|a, b| a.applied_at.cmp(&b.applied_at)))
}
