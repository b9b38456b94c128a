//! What `kubectl ledgerops apply` sends: each document of the files, a ledgerops kind a person
//! proposes, stamped with the sender as its proposer (`ledgerops.dev/proposed-by`), which the
//! admission policy `ledgerops-proposals` requires on every create and change. An object that
//! exists keeps its lineage: the sender is added to everyone who shaped it before.

use ledgerops::api::common::{GROUP, PROPOSED_BY};
use ledgerops::logic::approval::lineage;
use ledgerops::logic::config_repo::yaml;
use ledgerops::logic::transaction::step::RESOLVE;
use serde_json::{Map, Value, json};

/// The kinds `apply` sends.
pub const KINDS: &[&str] = &[
    "Transaction",
    "CategorizationPlan",
    "CategorizationRule",
    "Budget",
    "ConfigRepo",
];

/// One document ready to apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub body: Value,
}

/// Every document of `text` (from `file`), stamped with `user` as proposer, in `namespace`
/// unless a document names its own; an error names the file, the document and its line, and
/// what to fix. The files are read within the limits a ConfigRepo's revision is (text, nodes,
/// depth and aliases, aliases counted as what they expand to).
pub fn proposals(
    file: &str,
    text: &str,
    user: &str,
    namespace: &str,
) -> Result<Vec<Proposal>, String> {
    let mut out = Vec::new();
    let mut allowance = yaml::Allowance::default();
    for (i, part) in yaml::documents(text).enumerate() {
        let at = format!("{file}, document {} (line {})", i + 1, part.line);
        let (value, _) = yaml::read(&part, &mut allowance).map_err(|unread| {
            let line = unread.line.unwrap_or(part.line);
            format!(
                "{file}, document {} (line {line}): {}",
                i + 1,
                unread.message
            )
        })?;
        if value.is_null() {
            continue;
        }
        out.push(proposal(&at, value, user, namespace)?);
    }
    if out.is_empty() {
        return Err(format!("{file} holds no document to apply"));
    }
    Ok(out)
}

fn proposal(at: &str, mut body: Value, user: &str, namespace: &str) -> Result<Proposal, String> {
    let api_version = body["apiVersion"].as_str().unwrap_or_default();
    let kind = body["kind"].as_str().unwrap_or_default().to_owned();
    if api_version.split('/').next() != Some(GROUP) || !KINDS.contains(&kind.as_str()) {
        return Err(format!(
            "{at}: {} {kind} is not something kubectl ledgerops apply proposes (one of {}, apiVersion {GROUP}/v1alpha1); use kubectl apply for it",
            if api_version.is_empty() {
                "no apiVersion,"
            } else {
                api_version
            },
            KINDS.join(", ")
        ));
    }
    let Some(metadata) = body.get_mut("metadata").and_then(Value::as_object_mut) else {
        return Err(format!(
            "{at}: {kind} has no metadata: give it metadata.name"
        ));
    };
    let name = metadata
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| format!("{at}: {kind} has no metadata.name: name it"))?
        .to_owned();
    let namespace = metadata
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or(namespace)
        .to_owned();
    metadata.insert("namespace".into(), json!(namespace));
    let annotations = metadata
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    match annotations {
        Value::Object(a) => {
            a.insert(PROPOSED_BY.into(), json!(user));
        }
        _ => {
            return Err(format!(
                "{at}: metadata.annotations of {kind} {name} is not a map"
            ));
        }
    }
    Ok(Proposal {
        kind,
        name,
        namespace,
        body,
    })
}

/// Stamps `p` with the lineage `live` (the existing object's `ledgerops.dev/proposed-by`, if
/// any) and `user` added, as admission requires; returns that lineage as written.
pub fn with_lineage(p: &mut Proposal, live: Option<&str>, user: &str) -> String {
    let value = joined(live, user);
    p.body["metadata"]["annotations"][PROPOSED_BY] = json!(value);
    value
}

/// The lineage `live` with `user` added, once.
fn joined(live: Option<&str>, user: &str) -> String {
    let mut names = live.map(lineage::parse).unwrap_or_default();
    lineage::extend(&mut names, [user.to_owned()]);
    lineage::render(&names)
}

/// The merge patch that sets `spec.suspend` to `suspend`, with `user` added to the lineage
/// `live` (a change of the spec is a change of what the object proposes), guarded by the
/// `resource_version` read, so a change made meanwhile is not overwritten unseen.
pub fn suspension(live: Option<&str>, user: &str, suspend: bool, resource_version: &str) -> Value {
    json!({
        "metadata": {
            "resourceVersion": resource_version,
            "annotations": {PROPOSED_BY: joined(live, user)},
        },
        "spec": {"suspend": suspend},
    })
}

/// The merge patch that sets a Transaction's `ledgerops.dev/resolve` to `side`, with `user`
/// added to the lineage `live`: whoever asks for `ours` shaped the write over someone's edit,
/// and admission holds them to it, so they do not approve it themselves.
pub fn resolution(live: Option<&str>, user: &str, side: &str) -> Value {
    json!({"metadata": {"annotations": {PROPOSED_BY: joined(live, user), RESOLVE: side}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suspension_adds_the_sender_to_the_lineage_once_and_keeps_the_version() {
        let patch = suspension(Some("alice, carol"), "carol", true, "42");
        assert_eq!(
            patch,
            json!({"metadata": {"resourceVersion": "42", "annotations": {PROPOSED_BY: "alice,carol"}}, "spec": {"suspend": true}})
        );
        let patch = suspension(None, "carol", false, "7");
        assert_eq!(patch["metadata"]["annotations"][PROPOSED_BY], "carol");
        assert_eq!(patch["spec"]["suspend"], false);
    }

    #[test]
    fn a_resolution_adds_the_sender_to_the_lineage() {
        let patch = resolution(Some("admin"), "alice", "ours");
        assert_eq!(
            patch,
            json!({"metadata": {"annotations": {PROPOSED_BY: "admin,alice", RESOLVE: "ours"}}})
        );
        assert_eq!(
            resolution(Some("alice"), "alice", "theirs")["metadata"]["annotations"][PROPOSED_BY],
            "alice"
        );
    }

    const PLAN: &str = "apiVersion: ledgerops.dev/v1alpha1\nkind: CategorizationPlan\nmetadata:\n  name: september\nspec:\n  budgetRef:\n    name: household\n";

    #[test]
    fn each_document_is_stamped_with_the_sender_in_the_namespace() {
        let text = format!(
            "{PLAN}---\n---\napiVersion: ledgerops.dev/v1alpha1\nkind: Transaction\nmetadata:\n  name: bakery\n  namespace: other\n  annotations:\n    ledgerops.dev/proposed-by: mallory\n    note: kept\nspec: {{}}\n"
        );
        let got = proposals("p.yaml", &text, "alice", "home").unwrap();
        assert_eq!(got.len(), 2, "the empty document is skipped");
        assert_eq!(
            (
                got[0].kind.as_str(),
                got[0].name.as_str(),
                got[0].namespace.as_str()
            ),
            ("CategorizationPlan", "september", "home")
        );
        assert_eq!(got[0].body["metadata"]["annotations"][PROPOSED_BY], "alice");
        assert_eq!(got[1].namespace, "other");
        assert_eq!(got[1].body["metadata"]["annotations"][PROPOSED_BY], "alice");
        assert_eq!(got[1].body["metadata"]["annotations"]["note"], "kept");
    }

    #[test]
    fn an_existing_object_keeps_its_lineage_and_gains_the_sender() {
        let mut p = proposals("p.yaml", PLAN, "alice", "home")
            .unwrap()
            .remove(0);
        let cases = [
            (None, "alice"),
            (Some("carol"), "carol,alice"),
            (Some("alice,carol"), "alice,carol"),
            (
                Some(" carol , configrepo:mine "),
                "carol,configrepo:mine,alice",
            ),
        ];
        for (live, want) in cases {
            assert_eq!(with_lineage(&mut p, live, "alice"), want, "{live:?}");
            assert_eq!(p.body["metadata"]["annotations"][PROPOSED_BY], want);
        }
    }

    /// Nine levels of ten aliases each: a billion scalars from a few hundred bytes.
    static ALIAS_BOMB: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..=9 {
            let refs = vec![format!("*a{}", level - 1); 10].join(", ");
            text.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
        }
        text
    });

    #[test]
    fn anything_else_is_refused_naming_the_file_and_document() {
        let cases = [
            (
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n",
                "document 1 (line 1): v1 Secret is not something",
            ),
            (
                "apiVersion: ledgerops.dev/v1alpha1\nkind: ApprovalRequest\nmetadata:\n  name: r\n",
                "ApprovalRequest is not something",
            ),
            (
                "apiVersion: ledgerops.dev/v1alpha1\nkind: Transaction\nspec: {}\n",
                "Transaction has no metadata",
            ),
            (
                "apiVersion: ledgerops.dev/v1alpha1\nkind: Transaction\nmetadata:\n  labels: {}\n",
                "has no metadata.name",
            ),
            ("", "holds no document"),
            ("kind: [", "p.yaml"),
            // An alias bomb costs what it expands to, and is refused at the limit.
            (ALIAS_BOMB.as_str(), "document 1"),
        ];
        for (text, says) in cases {
            let err = proposals("p.yaml", text, "alice", "home").unwrap_err();
            assert!(err.contains(says), "{text:?}: {err}");
            assert!(err.contains("p.yaml"), "{err}");
        }
    }
}
