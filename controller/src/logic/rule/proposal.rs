//! Proposing a learned rule to a config repository: which Candidates are due (enough
//! confirmations, never corrected, not proposed yet as they stand), which repository proposes,
//! and the pull request's branch and file (its words: `logic::job::rules_report`). Merging the
//! pull request is the blessing.

use super::matching::Matcher;
use super::standing::is_demoted;
use crate::api::config_repo::ConfigRepo;
use crate::api::rule::{CategorizationRule, CategorizationRuleSpec, Proposal};
use crate::logic::plan::hash::hex_sha256;

/// What a proposal is about: the rule's budget, match and category.
pub fn key(spec: &CategorizationRuleSpec) -> String {
    let about = serde_json::json!({
        "budget": spec.budget_ref.name,
        "match": spec.matches,
        "category": spec.category_id,
    });
    hex_sha256(about.to_string().as_bytes())[..16].to_owned()
}

/// Whether `rule` should be proposed now, with `after` confirmations needed: a well-formed
/// Candidate (not blessed, not demoted) with that many confirmations and no correction, not
/// proposed yet as it stands.
pub fn due(rule: &CategorizationRule, after: u32) -> bool {
    let Some(status) = &rule.status else {
        return false;
    };
    let learning = status.learning.as_ref();
    let confirmed = learning.is_some_and(|l| l.confirmations >= after && l.corrections == 0);
    after > 0
        && confirmed
        && !proposed(rule)
        && rule.spec.blessing.is_none()
        && !is_demoted(rule)
        && Matcher::new(&rule.spec).is_ok()
}

/// Whether `rule` counts as proposed: a pull request proposed it as it stands and ledgerops has
/// not withdrawn it.
pub fn proposed(rule: &CategorizationRule) -> bool {
    recorded(rule).is_some_and(|p| p.withdrawn.is_none())
}

/// The proposal recorded for `rule` as it stands, withdrawn or not.
fn recorded(rule: &CategorizationRule) -> Option<&Proposal> {
    let proposal = rule.status.as_ref()?.proposal.as_ref()?;
    (proposal.key == key(&rule.spec)).then_some(proposal)
}

/// The pull request to look at again in `repository` for `rule`: one proposed there as the rule
/// stands, not withdrawn, of a rule not blessed yet (merging it blesses it).
pub fn watched<'a>(rule: &'a CategorizationRule, repository: &str) -> Option<&'a Proposal> {
    recorded(rule).filter(|p| {
        p.withdrawn.is_none() && p.repository == repository && rule.spec.blessing.is_none()
    })
}

/// Which of `repos` (one namespace's, each with the Gitea repository it is, when it is one the
/// agent may speak in) proposes: the first by name that can. A repository that applies as its
/// own ServiceAccount cannot bless (only the controller records a `configrepo:` blessing), and
/// one with `proposeRulesAfter: 0` does not want proposals.
pub fn proposer<'a>(
    repos: &[(&'a ConfigRepo, Option<String>)],
) -> Option<(&'a ConfigRepo, String)> {
    let mut able: Vec<(&ConfigRepo, String)> = repos
        .iter()
        .filter(|(r, _)| {
            r.spec.service_account_name.is_none()
                && r.spec.propose_rules_after > 0
                && !r.spec.suspend
        })
        .filter_map(|(r, target)| Some((*r, target.clone()?)))
        .collect();
    able.sort_by(|(a, _), (b, _)| a.metadata.name.cmp(&b.metadata.name));
    able.into_iter().next()
}

/// The branch a proposal is made on: one per rule and key, so that a proposal interrupted
/// half-way is found again, never made twice.
pub fn branch(rule: &str, key: &str) -> String {
    format!("{BRANCH_PREFIX}{rule}-{}", &key[..8])
}

const BRANCH_PREFIX: &str = "ledgerops-rule-";

/// Whether `branch` is one a proposal is made on: a push to it is looked at.
pub fn is_branch(branch: &str) -> bool {
    branch.starts_with(BRANCH_PREFIX)
}

/// Where the rule's file goes in the repository: under the repository's `spec.path`, in
/// `rules/`.
pub fn file(repo_path: &str, rule: &str) -> String {
    let base = repo_path.trim_start_matches("./").trim_matches('/');
    if base.is_empty() || base == "." {
        format!("rules/{rule}.yaml")
    } else {
        format!("{base}/rules/{rule}.yaml")
    }
}

/// The rule's file: its name and spec without a blessing (the merge blesses it).
pub fn manifest(rule: &CategorizationRule) -> Result<String, serde_yaml::Error> {
    let spec = CategorizationRuleSpec {
        blessing: None,
        ..rule.spec.clone()
    };
    let object = CategorizationRule {
        metadata: kube::api::ObjectMeta {
            name: rule.metadata.name.clone(),
            ..Default::default()
        },
        spec,
        status: None,
    };
    let yaml = serde_yaml::to_string(&object)?;
    Ok(format!(
        "# Learned by ledgerops from approved decisions. Merging blesses it as\n# configrepo:<ConfigRepo name>; never write spec.blessing here.\n{yaml}"
    ))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;

    use super::*;
    use crate::api::rule::{Blessing, Withdrawal};
    use crate::logic::rule::fixtures::{demotion, merchant, rule, spec};

    fn candidate(confirmations: u32, corrections: u32) -> CategorizationRule {
        let spec = spec(merchant("RAIL CO"), "transport", false);
        rule("learned-rail-co", spec, (confirmations, corrections))
    }

    fn at() -> Time {
        Time(Timestamp::from_second(1_790_000_000).unwrap())
    }

    fn proposed(confirmations: u32) -> CategorizationRule {
        let mut rule = candidate(confirmations, 0);
        rule.status.as_mut().unwrap().proposal = Some(Proposal {
            repository: "household/config".into(),
            pull_request_url: "http://gitea/household/config/pulls/1".into(),
            key: key(&rule.spec),
            at: at(),
            withdrawn: None,
        });
        rule
    }

    fn withdrawn(mut rule: CategorizationRule) -> CategorizationRule {
        let proposal = rule.status.as_mut().unwrap().proposal.as_mut().unwrap();
        proposal.withdrawn = Some(Withdrawal {
            at: at(),
            found: vec!["budget.yaml".into()],
        });
        rule
    }

    #[test]
    fn a_candidate_is_due_once_confirmed_enough_never_corrected_and_not_proposed_as_it_stands() {
        let proposed = proposed(5);
        let mut changed_since = proposed.clone();
        changed_since.spec.category_id = "gifts".into();
        let mut blessed = candidate(9, 0);
        blessed.spec.blessing = Some(Blessing {
            by: "alice".into(),
            at: None,
        });
        let mut demoted = candidate(9, 0);
        demoted.status.as_mut().unwrap().demotion = Some(demotion(1));
        let mut malformed = candidate(9, 0);
        malformed.spec.matches.payee = Some("RAIL CO".into());
        let cases = [
            ("enough", candidate(5, 0), 5, true),
            ("more than enough", candidate(7, 0), 5, true),
            ("not enough", candidate(4, 0), 5, false),
            ("corrected once", candidate(9, 1), 5, false),
            (
                "never learned",
                CategorizationRule::new("x", candidate(0, 0).spec),
                1,
                false,
            ),
            ("proposed as it stands", proposed.clone(), 5, false),
            ("its proposal withdrawn", withdrawn(proposed), 5, true),
            ("changed since its proposal", changed_since, 5, true),
            ("blessed already", blessed, 5, false),
            ("demoted", demoted, 5, false),
            ("malformed", malformed, 5, false),
            ("proposals off", candidate(9, 0), 0, false),
        ];
        for (what, rule, after, want) in cases {
            assert_eq!(due(&rule, after), want, "{what}");
        }
    }

    #[test]
    fn a_proposal_is_watched_in_its_repository_until_withdrawn_or_the_rule_is_blessed_or_changed() {
        let mut blessed = proposed(5);
        blessed.spec.blessing = Some(Blessing {
            by: "configrepo:household".into(),
            at: None,
        });
        let mut changed_since = proposed(5);
        changed_since.spec.category_id = "gifts".into();
        let cases = [
            ("proposed here", proposed(5), "household/config", true),
            ("proposed elsewhere", proposed(5), "household/other", false),
            (
                "withdrawn",
                withdrawn(proposed(5)),
                "household/config",
                false,
            ),
            ("blessed", blessed, "household/config", false),
            ("changed since", changed_since, "household/config", false),
            ("never proposed", candidate(5, 0), "household/config", false),
        ];
        for (what, rule, repository, want) in cases {
            assert_eq!(watched(&rule, repository).is_some(), want, "{what}");
        }
    }

    #[test]
    fn the_first_repository_that_can_bless_proposes() {
        let repo = |name: &str, after: u32, account: Option<&str>| {
            let mut r: ConfigRepo = serde_json::from_value(serde_json::json!({
                "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ConfigRepo",
                "metadata": {"name": name},
                "spec": {"url": "http://gitea/o/r.git", "proposeRulesAfter": after}
            }))
            .unwrap();
            r.spec.service_account_name = account.map(Into::into);
            r
        };
        let (a, b, c, d) = (
            repo("a-own-account", 5, Some("deployer")),
            repo("b-off", 0, None),
            repo("c-elsewhere", 5, None),
            repo("d-household", 5, None),
        );
        let repos = [
            (&d, Some("o/household".to_owned())),
            (&c, None),
            (&b, Some("o/b".to_owned())),
            (&a, Some("o/a".to_owned())),
        ];
        let (chosen, target) = proposer(&repos).unwrap();
        assert_eq!(
            (chosen.metadata.name.as_deref(), target.as_str()),
            (Some("d-household"), "o/household")
        );
        assert!(proposer(&repos[1..]).is_none());
    }

    #[test]
    fn the_file_and_branch_are_the_rules_and_the_file_carries_no_blessing() {
        assert_eq!(file(".", "r"), "rules/r.yaml");
        assert_eq!(file("./", "r"), "rules/r.yaml");
        assert_eq!(file("./household/", "r"), "household/rules/r.yaml");
        let rule = candidate(5, 0);
        let k = key(&rule.spec);
        assert_eq!(
            branch("learned-rail-co", &k),
            format!("ledgerops-rule-learned-rail-co-{}", &k[..8])
        );
        assert!(is_branch(&branch("learned-rail-co", &k)));
        assert!(!is_branch("main") && !is_branch("agent-plan-1"));
        let mut blessed = rule.clone();
        blessed.spec.blessing = Some(Blessing {
            by: "mallory".into(),
            at: None,
        });
        let yaml = manifest(&blessed).unwrap();
        let doc: serde_yaml::Value = serde_yaml::from_str(&yaml).unwrap();
        assert!(doc["spec"].get("blessing").is_none(), "{yaml}");
        assert!(doc.get("status").is_none(), "{yaml}");
        assert_eq!(doc["metadata"]["name"], "learned-rail-co");
        assert_eq!(doc["kind"], "CategorizationRule");
        assert_eq!(doc["spec"]["match"]["payeeNormalised"], "RAIL CO");
    }
}
