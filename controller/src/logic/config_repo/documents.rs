//! Reading a revision's YAML files into documents a ConfigRepo may apply, refusing (with file and
//! line) every document that is not a ledgerops kind, names another namespace, or sets what only
//! the controller sets.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::yaml::{self, Allowance, Part};
use super::{Live, RepoKind};
use crate::api::common::PROPOSED_BY;
use crate::api::rule::CategorizationRuleSpec;
use crate::logic::approval::lineage;
use crate::logic::rule::proposal;

/// The apiVersion of every kind a repository may declare.
const API_VERSION: &str = "ledgerops.dev/v1alpha1";
/// Documents a revision may declare (counted as the parser reads its files, so a file of markers
/// costs no more than this).
pub const MAX_DOCUMENTS: usize = 5_000;

/// One YAML file of the revision, by its path in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub path: String,
    pub text: String,
}

/// A document a ConfigRepo may apply, ready to send (namespace set).
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub file: String,
    /// Line of the document's first content line, 1-based.
    pub line: usize,
    pub kind: RepoKind,
    pub name: String,
    pub body: Value,
    /// Hex SHA-256 of `body`: an unchanged document is not applied again.
    pub digest: String,
    /// A rule's content key (its match and category, as [`crate::logic::rule::proposal::key`]).
    pub rule_key: Option<String>,
}

impl Document {
    /// `Kind/name`, as messages name objects.
    pub fn key(&self) -> (RepoKind, String) {
        (self.kind, self.name.clone())
    }
}

/// A document refused, where it is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// Who a revision's objects come from, and what they may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source<'a> {
    /// The ConfigRepo's name.
    pub repo: &'a str,
    /// What each object's `ledgerops.dev/proposed-by` says: `configrepo:<repo>`, or the
    /// ServiceAccount's user name the repository applies as.
    pub proposer: String,
    /// `Ok`: the repository governs (declares Budgets, blesses the rules merged into it);
    /// `Err(why)`: it proposes only.
    pub governs: Result<(), String>,
    /// Content keys of rules a person's override demoted: not blessed by the merge.
    pub demoted: BTreeSet<String>,
}

/// Every document of `files` for the namespace `namespace` from `source`, or every refusal
/// (nothing of the revision is applied when there is one). Reading stops at the first document
/// past a limit of the revision: what follows could not be read anyway.
pub fn parse(
    files: &[File],
    namespace: &str,
    source: &Source<'_>,
) -> Result<Vec<Document>, Vec<Refusal>> {
    let mut documents = Vec::new();
    let mut refusals = Vec::new();
    let mut allowance = Allowance::default();
    let mut count = 0;
    'files: for file in files {
        for part in yaml::documents(&file.text) {
            count += 1;
            if count > MAX_DOCUMENTS {
                refusals.push(Refusal {
                    file: file.path.clone(),
                    line: part.line,
                    message: format!(
                        "document {count} of the revision is past the limit of {MAX_DOCUMENTS} documents a revision: split the repository, or point spec.path at a smaller directory"
                    ),
                });
                break 'files;
            }
            match document(file, &part, namespace, source, &mut allowance) {
                Ok(Some(d)) => documents.push(d),
                Ok(None) => {}
                Err(r) => {
                    refusals.push(r);
                    if allowance.passed() {
                        break 'files;
                    }
                }
            }
        }
    }
    let mut seen: BTreeMap<(RepoKind, String), &Document> = BTreeMap::new();
    for d in &documents {
        if let Some(first) = seen.insert(d.key(), d) {
            refusals.push(Refusal {
                file: d.file.clone(),
                line: d.line,
                message: format!(
                    "{}/{} is declared twice (first at {}:{}): keep one",
                    d.kind.as_str(),
                    d.name,
                    first.file,
                    first.line
                ),
            });
        }
    }
    if refusals.is_empty() {
        Ok(documents)
    } else {
        Err(refusals)
    }
}

fn document(
    file: &File,
    part: &Part<'_>,
    namespace: &str,
    source: &Source<'_>,
    allowance: &mut Allowance,
) -> Result<Option<Document>, Refusal> {
    let refuse = |line: usize, message: String| Refusal {
        file: file.path.clone(),
        line,
        message,
    };
    let (value, keys) =
        yaml::read(part, allowance).map_err(|u| refuse(u.line.unwrap_or(part.line), u.message))?;
    // A key's line, or the document's when it has no such key.
    let key_line = |path: &[&str]| keys.line(path).unwrap_or(part.line);
    if value.is_null() {
        return Ok(None);
    }
    let at = part.line;
    let Value::Object(mut object) = value else {
        return Err(refuse(
            at,
            "is not a Kubernetes object (a mapping with apiVersion, kind, metadata, spec)".into(),
        ));
    };
    let api_version = object.get("apiVersion").and_then(Value::as_str);
    let kind_text = object.get("kind").and_then(Value::as_str);
    let kind = match (api_version, kind_text.and_then(RepoKind::parse)) {
        (Some(API_VERSION), Some(kind)) => kind,
        _ => {
            return Err(refuse(
                key_line(&["kind"]),
                format!(
                    "{} (apiVersion {}) is not a kind a ConfigRepo applies: only Budget, Transaction, CategorizationPlan and CategorizationRule of {API_VERSION}; a repository never creates Secrets, RBAC or other objects — remove this document",
                    kind_text.unwrap_or("an object without kind"),
                    api_version.unwrap_or("missing")
                ),
            ));
        }
    };
    if let Some(extra) = object
        .keys()
        .find(|k| !["apiVersion", "kind", "metadata", "spec"].contains(&k.as_str()))
    {
        return Err(refuse(
            key_line(&[extra]),
            format!(
                "top-level field {extra} is not applied from a repository (only apiVersion, kind, metadata, spec; status is the controller's): remove it"
            ),
        ));
    }
    let metadata = match object.get_mut("metadata") {
        Some(Value::Object(m)) => m,
        _ => {
            return Err(refuse(at, "has no metadata: give it metadata.name".into()));
        }
    };
    check_metadata(metadata, namespace, key_line).map_err(|(line, m)| refuse(line, m))?;
    let name = metadata
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    metadata.insert("namespace".into(), Value::String(namespace.to_owned()));
    // The repository proposes: whatever a file says, the proposer is the repository.
    let annotations = metadata
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(a) = annotations {
        a.insert(PROPOSED_BY.into(), Value::String(source.proposer.clone()));
    }
    if let (RepoKind::Budget, Err(why)) = (kind, &source.governs) {
        return Err(refuse(at, format!("Budget {name} is not applied: {why}")));
    }
    let rule_key = if kind == RepoKind::CategorizationRule {
        bless(&mut object, source).map_err(|m| refuse(key_line(&["spec", "blessing"]), m))?
    } else {
        None
    };
    let body = Value::Object(object);
    let digest = hex::encode(Sha256::digest(body.to_string().as_bytes()));
    Ok(Some(Document {
        file: file.path.clone(),
        line: at,
        kind,
        name,
        body,
        digest,
        rule_key,
    }))
}

/// A rule merged into a governing repository is blessed by the merge: as `configrepo:<repo>`;
/// one merged into a repository that proposes only, or one a person's override demoted, stays
/// a Candidate. A blessing written in the file would speak for a person who never gave it, so
/// it is refused. Returns the rule's content key (none: a spec the API server will refuse).
fn bless(object: &mut Map<String, Value>, source: &Source<'_>) -> Result<Option<String>, String> {
    let repo = source.repo;
    let Some(Value::Object(spec)) = object.get_mut("spec") else {
        return Ok(None);
    };
    if spec.contains_key("blessing") {
        return Err(format!(
            "spec.blessing is not written in a config repository: merging the rule blesses it (as configrepo:{repo}); remove spec.blessing"
        ));
    }
    let key = serde_json::from_value::<CategorizationRuleSpec>(Value::Object(spec.clone()))
        .ok()
        .map(|s| proposal::key(&s));
    let demoted = key.as_ref().is_some_and(|k| source.demoted.contains(k));
    if source.governs.is_ok() && !demoted {
        spec.insert(
            "blessing".into(),
            serde_json::json!({"by": format!("configrepo:{repo}")}),
        );
    }
    Ok(key)
}

/// Only a name, this namespace, labels and annotations; no `ledgerops.dev/` label (those are the
/// controller's).
fn check_metadata(
    metadata: &Map<String, Value>,
    namespace: &str,
    key_line: impl Fn(&[&str]) -> usize,
) -> Result<(), (usize, String)> {
    match metadata.get("name").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => {}
        _ => {
            return Err((
                key_line(&["metadata"]),
                "has no metadata.name: name it".into(),
            ));
        }
    }
    if let Some(other) = metadata.get("namespace")
        && other.as_str() != Some(namespace)
    {
        return Err((
            key_line(&["metadata", "namespace"]),
            format!(
                "names namespace {other}: a ConfigRepo applies only into its own namespace {namespace}; remove metadata.namespace"
            ),
        ));
    }
    if let Some(extra) = metadata
        .keys()
        .find(|k| !["name", "namespace", "labels", "annotations"].contains(&k.as_str()))
    {
        return Err((
            key_line(&["metadata", extra]),
            format!(
                "metadata.{extra} is not applied from a repository (only name, namespace, labels, annotations): remove it"
            ),
        ));
    }
    let reserved = metadata
        .get("labels")
        .and_then(Value::as_object)
        .and_then(|l| l.keys().find(|k| k.starts_with("ledgerops.dev/")));
    if let Some(label) = reserved {
        return Err((
            key_line(&["metadata", "labels", label]),
            format!("label {label} is set only by the ledgerops controller: remove it"),
        ));
    }
    Ok(())
}

/// Keeps, on each document, the names its live object's lineage holds besides the
/// repository's: whoever changed an object the repository made shaped it too, and an apply never
/// drops them (four eyes would lose them). The digest stays as parsed: a lineage is not the
/// repository's content, and does not make a document change.
pub fn keep_lineages(documents: &mut [Document], live: &[Live]) {
    for d in documents.iter_mut() {
        let Some((before, _)) = live
            .iter()
            .find(|l| l.kind == d.kind && l.name == d.name)
            .and_then(|l| l.made.as_ref())
        else {
            continue;
        };
        let annotation = &mut d.body["metadata"]["annotations"][PROPOSED_BY];
        let mut names = lineage::parse(annotation.as_str().unwrap_or_default());
        lineage::extend(&mut names, lineage::parse(before));
        *annotation = Value::String(lineage::render(&names));
    }
}

#[cfg(test)]
#[path = "documents_tests.rs"]
mod tests;
