//! The morning queue: which ApprovalRequests wait for a person, oldest first, and the row each
//! one shows.

use k8s_openapi::jiff::Timestamp;
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest, SubjectKind};
use serde::Serialize;

use super::preview;
use super::time;

/// A request waits for a person while ledgerops holds it Pending, nobody decided it and it has
/// not expired by `now`.
pub fn is_waiting(request: &ApprovalRequest, now: Timestamp) -> bool {
    let phase = request.status.as_ref().and_then(|s| s.phase);
    phase == Some(ApprovalPhase::Pending)
        && request.spec.decision.is_none()
        && request.spec.expires_at.0 > now
}

/// The waiting requests of `all`, oldest first (then by namespace and name, so equal ages keep a
/// stable order).
pub fn waiting(all: Vec<ApprovalRequest>, now: Timestamp) -> Vec<ApprovalRequest> {
    let mut out: Vec<ApprovalRequest> = all.into_iter().filter(|r| is_waiting(r, now)).collect();
    out.sort_by_key(|r| {
        (
            r.metadata.creation_timestamp.as_ref().map(|t| t.0),
            r.metadata.namespace.clone(),
            r.metadata.name.clone(),
        )
    });
    out
}

/// `CategorizationPlan/september`.
pub fn subject(request: &ApprovalRequest) -> String {
    let kind = match request.spec.subject.kind {
        SubjectKind::CategorizationPlan => "CategorizationPlan",
        SubjectKind::Transaction => "Transaction",
    };
    format!("{kind}/{}", request.spec.subject.name)
}

/// One line of the queue; also what `-o json` and `-o yaml` print.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub namespace: String,
    pub name: String,
    pub subject: String,
    pub summary: String,
    /// Money the listed changes move, sign ignored; `≥` when more changes than listed.
    pub total: String,
    pub change_count: u32,
    pub age: String,
    pub expires_at: Timestamp,
    pub expires: String,
    pub escalate_to: Vec<String>,
}

/// The row of `request` at `now`. A total that cannot be added (never written by ledgerops) shows
/// as `?` rather than hiding the request.
pub fn row(request: &ApprovalRequest, now: Timestamp) -> Row {
    let spec = &request.spec;
    Row {
        namespace: request.metadata.namespace.clone().unwrap_or_default(),
        name: request.metadata.name.clone().unwrap_or_default(),
        subject: subject(request),
        summary: spec.summary.clone(),
        total: preview::total(&spec.changes, spec.change_count)
            .map(|t| t.text())
            .unwrap_or_else(|_| "?".to_owned()),
        change_count: spec.change_count,
        age: request
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| time::age(t.0, now))
            .unwrap_or_default(),
        expires_at: spec.expires_at.0,
        expires: time::until(spec.expires_at.0, now),
        escalate_to: spec.escalate_to.clone(),
    }
}

/// The queue's table columns; `NAMESPACE` comes first with `--all-namespaces`, as in kubectl.
pub fn table(rows: &[Row], all_namespaces: bool) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let mut headers = vec![
        "NAME",
        "SUBJECT",
        "SUMMARY",
        "TOTAL",
        "CHANGES",
        "AGE",
        "EXPIRES",
        "ESCALATES TO",
    ];
    if all_namespaces {
        headers.insert(0, "NAMESPACE");
    }
    let cells = rows
        .iter()
        .map(|r| {
            let mut cells = vec![
                r.name.clone(),
                r.subject.clone(),
                r.summary.clone(),
                r.total.clone(),
                r.change_count.to_string(),
                r.age.clone(),
                r.expires.clone(),
                if r.escalate_to.is_empty() {
                    "-".to_owned()
                } else {
                    r.escalate_to.join(",")
                },
            ];
            if all_namespaces {
                cells.insert(0, r.namespace.clone());
            }
            cells
        })
        .collect();
    (headers, cells)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::logic::preview::tests::change;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use ledgerops::api::approval::{ApprovalRequestStatus, Decision, Verdict};
    use serde_json::json;

    pub(crate) const NOW: i64 = 1_760_000_000;

    pub(crate) fn at(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    /// A request in `ns`, created `age` seconds before [`NOW`], expiring `left` seconds after.
    pub(crate) fn request(
        ns: &str,
        name: &str,
        age: i64,
        left: i64,
        phase: Option<ApprovalPhase>,
    ) -> ApprovalRequest {
        let mut r: ApprovalRequest = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ApprovalRequest",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "budgetRef": {"name": "household"},
                "subject": {"kind": "CategorizationPlan", "name": "september"},
                "previewHash": "sha256:abc", "summary": "2 transactions to recategorise",
                "reason": "no auto-approve limit", "changeCount": 2,
                "expiresAt": "2000-01-01T00:00:00Z", "escalateTo": ["finance-manager"],
            }
        }))
        .unwrap();
        r.metadata.creation_timestamp = Some(Time(at(NOW - age)));
        r.spec.expires_at = Time(at(NOW + left));
        r.spec.changes = vec![
            change("tx-048", "-8.40", None),
            change("tx-049", "-45.00", None),
        ];
        r.status = Some(ApprovalRequestStatus {
            phase,
            ..Default::default()
        });
        r
    }

    #[test]
    fn waits_only_while_pending_undecided_and_unexpired() {
        let mut decided = request("a", "decided", 10, 100, Some(ApprovalPhase::Pending));
        decided.spec.decision = Some(Decision {
            verdict: Verdict::Approve,
            by: "bob".into(),
            groups: Vec::new(),
            comment: None,
            edits: None,
        });
        let cases = [
            (
                request("a", "p", 10, 100, Some(ApprovalPhase::Pending)),
                true,
            ),
            (request("a", "unissued", 10, 100, None), false),
            (
                request("a", "late", 10, 0, Some(ApprovalPhase::Pending)),
                false,
            ),
            (
                request("a", "stale", 10, 100, Some(ApprovalPhase::Stale)),
                false,
            ),
            (
                request("a", "exp", 10, 100, Some(ApprovalPhase::Expired)),
                false,
            ),
            (
                request("a", "ign", 10, 100, Some(ApprovalPhase::Ignored)),
                false,
            ),
            (
                request("a", "ok", 10, 100, Some(ApprovalPhase::Approved)),
                false,
            ),
            (decided, false),
        ];
        for (r, want) in cases {
            assert_eq!(is_waiting(&r, at(NOW)), want, "{:?}", r.metadata.name);
        }
    }

    #[test]
    fn oldest_first_then_namespace_and_name() {
        let pending = Some(ApprovalPhase::Pending);
        let all = vec![
            request("b", "young", 5, 100, pending),
            request("b", "old", 500, 100, pending),
            request("b", "same-age-z", 50, 100, pending),
            request("a", "same-age-y", 50, 100, pending),
            request("a", "stale", 900, 100, Some(ApprovalPhase::Stale)),
        ];
        let names: Vec<String> = waiting(all, at(NOW))
            .into_iter()
            .map(|r| r.metadata.name.unwrap())
            .collect();
        assert_eq!(names, ["old", "same-age-y", "same-age-z", "young"]);
    }

    #[test]
    fn a_row_shows_subject_total_age_expiry_and_escalation() {
        let r = request(
            "household",
            "september-1",
            300,
            86_000,
            Some(ApprovalPhase::Pending),
        );
        let row = row(&r, at(NOW));
        assert_eq!(row.subject, "CategorizationPlan/september");
        assert_eq!(row.total, "53.40");
        assert_eq!((row.age.as_str(), row.expires.as_str()), ("5m", "in 23h"));
        let (headers, cells) = table(std::slice::from_ref(&row), true);
        assert_eq!(headers[0], "NAMESPACE");
        assert_eq!(
            cells[0],
            [
                "household",
                "september-1",
                "CategorizationPlan/september",
                "2 transactions to recategorise",
                "53.40",
                "2",
                "5m",
                "in 23h",
                "finance-manager"
            ]
        );
        let (headers, cells) = table(&[row], false);
        assert_eq!((headers[0], cells[0][0].as_str()), ("NAME", "september-1"));
    }
}
