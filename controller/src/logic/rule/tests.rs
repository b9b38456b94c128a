//! Unit tests of `logic/rule/mod.rs`.

use k8s_openapi::jiff::Timestamp;

use super::fixtures::{demotion, spec};
use super::*;
use crate::api::rule::{
    AmountRange, CategorizationRule, CategorizationRuleSpec, CategorizationRuleStatus, RuleMatch,
    RulePhase,
};
use crate::logic::status::conditions;
use crate::logic::values::payee::normalise_payee;

fn payee(p: &str) -> RuleMatch {
    RuleMatch {
        payee: Some(p.into()),
        ..RuleMatch::default()
    }
}

fn normalised(p: &str) -> RuleMatch {
    RuleMatch {
        payee_normalised: Some(p.into()),
        ..RuleMatch::default()
    }
}

fn pattern(p: &str) -> RuleMatch {
    RuleMatch {
        payee_pattern: Some(p.into()),
        ..RuleMatch::default()
    }
}

fn range(min: Option<&str>, max: Option<&str>) -> Option<AmountRange> {
    Some(AmountRange {
        min: min.map(Into::into),
        max: max.map(Into::into),
    })
}

/// A transaction's facts, its payee normalised as the callers do.
struct Txn {
    payee: String,
    normalised: String,
    account: String,
    amount: i64,
    memo: Option<String>,
}

fn txn(payee: &str, amount: i64) -> Txn {
    Txn {
        payee: payee.into(),
        normalised: normalise_payee(payee),
        account: "checking".into(),
        amount,
        memo: None,
    }
}

impl Txn {
    fn facts(&self) -> Facts<'_> {
        Facts {
            payee: &self.payee,
            normalised: &self.normalised,
            account_id: &self.account,
            amount: self.amount,
            memo: self.memo.as_deref(),
        }
    }
}

#[test]
fn malformed_rules_are_refused_with_what_to_write() {
    let both = RuleMatch {
        payee: Some("A".into()),
        payee_pattern: Some("A*".into()),
        ..RuleMatch::default()
    };
    let cases: Vec<(&str, RuleMatch, RuleError)> = vec![
        ("no payee test", RuleMatch::default(), RuleError::Payee),
        ("two payee tests", both, RuleError::Payee),
        (
            "only wildcards",
            pattern("* *"),
            RuleError::Pattern("* *".into()),
        ),
        (
            "too many wildcards",
            pattern("a*b*c*d*e*f"),
            RuleError::Pattern("a*b*c*d*e*f".into()),
        ),
        (
            "a normalised payee of digits only",
            normalised("#1234"),
            RuleError::NoMerchant("#1234".into()),
        ),
        (
            "not an amount",
            RuleMatch {
                amount: range(Some("ten"), None),
                ..payee("A")
            },
            RuleError::Amount {
                field: "min",
                value: "ten".into(),
            },
        ),
        (
            "an empty range",
            RuleMatch {
                amount: range(Some("-1.00"), Some("-2.00")),
                ..payee("A")
            },
            RuleError::EmptyRange {
                min: "-1.00".into(),
                max: "-2.00".into(),
            },
        ),
    ];
    for (name, m, want) in cases {
        let rule = spec(m, "c", true);
        assert_eq!(Matcher::new(&rule).expect_err(name), want, "{name}");
        let s = standing(&rule, None, Ok(()), Ok(()));
        assert!(!s.ready && s.reason == "Invalid", "{name}: {s:?}");
        assert!(s.message.starts_with(&want.to_string()), "{name}: {s:?}");
    }
}

#[test]
fn each_part_of_a_match_must_hold() {
    let full = RuleMatch {
        account_id: Some("checking".into()),
        amount: range(Some("-100.00"), Some("-10.00")),
        memo_contains: Some("weekly".into()),
        ..normalised("Trader Joe's")
    };
    let m = Matcher::new(&spec(full, "groceries", true)).unwrap();
    let base = || Txn {
        memo: Some("the Weekly shop".into()),
        ..txn("SQ *TRADER JOE'S #552", -42_000)
    };
    let mut cases: Vec<(&str, Txn, bool)> = vec![("all hold", base(), true)];
    cases.push((
        "other payee",
        Txn {
            normalised: "WHOLE FOODS".into(),
            ..base()
        },
        false,
    ));
    cases.push((
        "other account",
        Txn {
            account: "savings".into(),
            ..base()
        },
        false,
    ));
    cases.push((
        "low end included",
        Txn {
            amount: -100_000,
            ..base()
        },
        true,
    ));
    cases.push((
        "below the range",
        Txn {
            amount: -100_001,
            ..base()
        },
        false,
    ));
    cases.push((
        "high end included",
        Txn {
            amount: -10_000,
            ..base()
        },
        true,
    ));
    cases.push((
        "above the range",
        Txn {
            amount: -9_999,
            ..base()
        },
        false,
    ));
    cases.push((
        "no memo",
        Txn {
            memo: None,
            ..base()
        },
        false,
    ));
    cases.push((
        "memo without the text",
        Txn {
            memo: Some("monthly".into()),
            ..base()
        },
        false,
    ));
    for (name, t, want) in cases {
        assert_eq!(m.matches(&t.facts()), want, "{name}");
    }
}

#[test]
fn payee_tests_exact_normalised_and_pattern() {
    let cases: Vec<(&str, RuleMatch, &str, bool)> = vec![
        ("exact same", payee("Trader Joe's"), "Trader Joe's", true),
        (
            "exact is exact",
            payee("Trader Joe's"),
            "TRADER JOE'S",
            false,
        ),
        (
            "normalised: another spelling is another merchant",
            normalised("trader joe's"),
            "SQ *TRADER JOES #552 PORTLAND",
            false,
        ),
        (
            "normalised, same merchant",
            normalised("Trader Joe's"),
            "POS TRADER JOE'S 0042",
            true,
        ),
        (
            "pattern prefix",
            pattern("amazon*"),
            "AMAZON MKTPLACE",
            true,
        ),
        ("pattern anchored", pattern("amazon*"), "MY AMAZON", false),
        ("pattern suffix", pattern("*market"), "FARMERS MARKET", true),
        ("pattern middle", pattern("*joe*"), "TRADER JOE S", true),
        ("pattern pieces in order", pattern("b*a"), "A B", false),
        ("pattern whole", pattern("shell"), "SHELL", true),
        (
            "pattern whole, longer",
            pattern("shell"),
            "SHELL OIL",
            false,
        ),
        ("overlapping ends need room", pattern("ab*ba"), "ABA", false),
        ("overlapping ends, enough", pattern("ab*ba"), "ABBA", true),
        (
            "middle piece at the very end",
            pattern("*market*"),
            "FARMERS MARKET",
            true,
        ),
        ("middle pieces in order", pattern("*a*b*"), "B A", false),
        (
            "middle pieces in order, found",
            pattern("*a*b*"),
            "A B A",
            true,
        ),
        (
            "an empty middle piece",
            pattern("far**market"),
            "FARMERS MARKET",
            true,
        ),
        (
            "past a character of two bytes",
            pattern("*té*"),
            "CAFÉ ÉTÉ",
            true,
        ),
        (
            "a piece longer than the payee",
            pattern("*supermarket*"),
            "MARKET",
            false,
        ),
    ];
    for (name, m, raw, want) in cases {
        let matcher = Matcher::new(&spec(m, "c", true)).unwrap();
        assert_eq!(matcher.matches(&txn(raw, -1).facts()), want, "{name}");
    }
}

#[test]
fn only_a_blessed_well_formed_rule_may_act() {
    let cases: Vec<(&str, CategorizationRuleSpec, RulePhase, bool, &str)> = vec![
        (
            "candidate",
            spec(payee("A"), "c", false),
            RulePhase::Candidate,
            false,
            "Candidate",
        ),
        (
            "blessed",
            spec(payee("A"), "c", true),
            RulePhase::Blessed,
            true,
            "Blessed",
        ),
        (
            "blessed but malformed",
            spec(pattern("*"), "c", true),
            RulePhase::Blessed,
            false,
            "Invalid",
        ),
    ];
    for (name, s, phase, ready, reason) in cases {
        let got = standing(&s, None, Ok(()), Ok(()));
        assert_eq!(
            (got.phase, got.ready, got.reason),
            (phase, ready, reason),
            "{name}"
        );
        assert_eq!(blessed(name, &s).is_some(), ready, "{name}");
    }
}

#[test]
fn blessed_rules_speak_together_or_not_at_all() {
    let rule = |name: &str, m: RuleMatch, category: &str| {
        blessed(name, &spec(m, category, true)).expect("blessed")
    };
    let book = RuleBook::new([
        rule("tj", normalised("Trader Joe's"), "groceries"),
        rule("tj-exact", payee("TRADER JOE'S #1"), "groceries"),
        rule("shell", pattern("shell*"), "fuel"),
        rule("shell-snacks", pattern("*shell*"), "snacks"),
        rule("amazon", pattern("amazon*"), "shopping"),
    ]);
    let category = |c: &str, rules: &[&str]| Verdict::Category {
        category_id: c.into(),
        rules: rules.iter().map(|r| r.to_string()).collect(),
    };
    let cases: Vec<(&str, Txn, Verdict)> = vec![
        ("no rule", txn("Costco", -1), Verdict::Silent),
        (
            "one rule",
            txn("Trader Joe's", -1),
            category("groceries", &["tj"]),
        ),
        (
            "two rules that agree",
            txn("TRADER JOE'S #1", -1),
            category("groceries", &["tj", "tj-exact"]),
        ),
        (
            "rules that disagree: none speaks",
            txn("SHELL 1234", -1),
            Verdict::Disagree {
                rules: vec!["shell".into(), "shell-snacks".into()],
                categories: vec!["fuel".into(), "snacks".into()],
            },
        ),
        (
            "a pattern alone",
            txn("Amazon Mktplace", -1),
            category("shopping", &["amazon"]),
        ),
    ];
    for (name, t, want) in cases {
        assert_eq!(book.verdict(&t.facts()), want, "{name}");
    }
    assert!(RuleBook::new([]).is_empty());
    // A candidate never enters the book.
    assert!(blessed("c", &spec(payee("Costco"), "bulk", false)).is_none());
}

#[test]
fn the_status_says_whether_the_rule_may_act_and_keeps_its_transition_time() {
    let t0 = Timestamp::from_second(1_790_000_000).unwrap();
    let t1 = Timestamp::from_second(1_790_000_100).unwrap();
    let candidate = spec(normalised("Trader Joe's"), "groceries", false);
    let first = status(
        &candidate,
        &CategorizationRuleStatus::default(),
        Some(1),
        Ok(()),
        Ok(()),
        t0,
    );
    assert_eq!(first.phase, Some(RulePhase::Candidate));
    assert_eq!(first.payee.as_deref(), Some("~ TRADER JOE"));
    let ready = conditions::get(&first.conditions, conditions::READY).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "Candidate")
    );
    assert_eq!(ready.observed_generation, Some(1));
    // Nothing changed: the same status, transition time kept.
    assert_eq!(
        status(&candidate, &first, Some(1), Ok(()), Ok(()), t1),
        first
    );
    let blessed = spec(normalised("Trader Joe's"), "groceries", true);
    let second = status(&blessed, &first, Some(2), Ok(()), Ok(()), t1);
    let ready = conditions::get(&second.conditions, conditions::READY).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Blessed")
    );
    assert_eq!(ready.last_transition_time.0, t1);
    assert!(
        ready.message.contains("blessed by alice"),
        "{}",
        ready.message
    );
    assert_eq!(second.phase, Some(RulePhase::Blessed));
    // An Event when where it stands changes, none when only the generation moved.
    let (warning, reason, _) = announcement(&first, &second).unwrap();
    assert_eq!((warning, reason.as_str()), (false, "Blessed"));
    assert_eq!(
        announcement(
            &second,
            &status(&blessed, &second, Some(3), Ok(()), Ok(()), t1)
        ),
        None
    );
    let broken = spec(pattern("*"), "groceries", true);
    let (warning, reason, note) = announcement(
        &second,
        &status(&broken, &second, Some(4), Ok(()), Ok(()), t1),
    )
    .unwrap();
    assert_eq!((warning, reason.as_str()), (true, "Invalid"));
    assert!(note.contains("payeePattern"), "{note}");
    assert!(announcement(&CategorizationRuleStatus::default(), &first).is_some());
    // Without the admission policies a blessing proves nothing: the rule does not act.
    let unguarded = status(
        &blessed,
        &second,
        Some(2),
        Err("policy missing"),
        Ok(()),
        t1,
    );
    let ready = conditions::get(&unguarded.conditions, conditions::READY).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "AdmissionPolicyMissing")
    );
    assert!(
        ready.message.ends_with("policy missing"),
        "{}",
        ready.message
    );
    let candidate_unguarded = standing(&candidate, None, Err("policy missing"), Ok(()));
    assert_eq!(candidate_unguarded.reason, "Candidate");
}

#[test]
fn a_budgets_book_holds_its_own_blessed_rules_only() {
    // As the controller leaves them: their status says where each stands.
    let now = Timestamp::from_second(1_790_000_000).unwrap();
    let object = |name: &str, namespace: &str, budget: &str, blessed: bool| {
        let mut s = spec(payee("Costco"), "bulk", blessed);
        s.budget_ref.name = budget.into();
        let mut r = CategorizationRule::new(name, s);
        r.metadata.namespace = Some(namespace.into());
        r.metadata.generation = Some(1);
        let standing = status(
            &r.spec,
            &CategorizationRuleStatus::default(),
            Some(1),
            Ok(()),
            Ok(()),
            now,
        );
        r.status = Some(standing);
        r
    };
    // Blessed in its spec, but ledgerops has not vouched for it (no status yet, or its blessing
    // did not count): it does not speak.
    let mut unvouched = object("unvouched", "home", "household", true);
    unvouched.status = None;
    let mut refused = object("refused", "home", "household", true);
    refused.status = Some(status(
        &refused.spec,
        &CategorizationRuleStatus::default(),
        Some(1),
        Ok(()),
        Err("alice does not hold bless"),
        now,
    ));
    let mut demoted = object("demoted", "home", "household", true);
    demoted.metadata.generation = Some(3);
    demoted.status = Some(CategorizationRuleStatus {
        demotion: Some(demotion(3)),
        ..CategorizationRuleStatus::default()
    });
    let rules = [
        object("mine", "home", "household", true),
        object("candidate", "home", "household", false),
        demoted,
        object("other-budget", "home", "travel", true),
        object("other-namespace", "elsewhere", "household", true),
        unvouched,
        refused,
    ];
    let book = RuleBook::of_budget(&rules, "home", "household");
    let costco = txn("Costco", -1);
    assert_eq!(
        book.verdict(&costco.facts()),
        Verdict::Category {
            category_id: "bulk".into(),
            rules: vec!["mine".into()]
        }
    );
}

#[test]
fn a_demotion_holds_for_its_generation_only() {
    let blessed = spec(payee("RAIL CO"), "transport", true);
    let previous = CategorizationRuleStatus {
        demotion: Some(demotion(3)),
        ..CategorizationRuleStatus::default()
    };
    let now = Timestamp::from_second(1_790_000_200).unwrap();
    let cases = [
        (
            "demoted at this generation",
            Some(3),
            RulePhase::Demoted,
            "False",
            "Demoted",
        ),
        (
            "blessed again since",
            Some(4),
            RulePhase::Blessed,
            "True",
            "Blessed",
        ),
    ];
    for (name, generation, phase, ready, reason) in cases {
        let got = status(&blessed, &previous, generation, Ok(()), Ok(()), now);
        assert_eq!(got.phase, Some(phase), "{name}");
        let condition = conditions::get(&got.conditions, conditions::READY).unwrap();
        assert_eq!(
            (condition.status.as_str(), condition.reason.as_str()),
            (ready, reason),
            "{name}"
        );
        assert_eq!(
            got.demotion, previous.demotion,
            "{name}: learning's part is kept"
        );
        assert_eq!(
            reconciler_part(&got).demotion,
            None,
            "{name}: and never written by the reconciler"
        );
    }
    let demoted = status(&blessed, &previous, Some(3), Ok(()), Ok(()), now);
    let message = &conditions::get(&demoted.conditions, conditions::READY)
        .unwrap()
        .message;
    for needle in [
        "tx-1",
        "transport",
        "gifts",
        "CategorizationPlan/march",
        "alice",
        "bless it again",
    ] {
        assert!(message.contains(needle), "{message} names {needle}");
    }
    let (warning, reason, _) =
        announcement(&CategorizationRuleStatus::default(), &demoted).unwrap();
    assert!(warning && reason == "Demoted");
    // A candidate is never demoted: it never acted.
    let candidate = spec(payee("RAIL CO"), "transport", false);
    assert_eq!(
        standing(&candidate, Some(&demotion(3)), Ok(()), Ok(())).phase,
        RulePhase::Candidate
    );
}

#[test]
fn a_rule_acts_since_its_ready_turned_true_and_not_once_demoted() {
    let now = Timestamp::from_second(1_790_000_000).unwrap();
    let mut rule = CategorizationRule::new("r", spec(payee("RAIL CO"), "transport", true));
    rule.metadata.generation = Some(2);
    rule.status = Some(status(
        &rule.spec,
        &CategorizationRuleStatus::default(),
        Some(2),
        Ok(()),
        Ok(()),
        now,
    ));
    assert_eq!(acting_since(&rule), Some(now));
    let mut behind = rule.clone();
    behind.metadata.generation = Some(3);
    assert_eq!(
        acting_since(&behind),
        None,
        "status not caught up with the spec"
    );
    let mut demoted = rule.clone();
    demoted.status.as_mut().unwrap().demotion = Some(demotion(2));
    assert_eq!(acting_since(&demoted), None);
    let mut unguarded = rule.clone();
    unguarded.status = Some(status(
        &rule.spec,
        &CategorizationRuleStatus::default(),
        Some(2),
        Err("missing"),
        Ok(()),
        now,
    ));
    assert_eq!(acting_since(&unguarded), None);
}

#[test]
fn a_blessing_that_does_not_count_leaves_a_candidate_that_says_why() {
    let blessed = spec(normalised("Trader Joe's"), "groceries", true);
    let s = standing(
        &blessed,
        None,
        Ok(()),
        Err("alice wrote it and cannot bless it"),
    );
    assert_eq!(s.phase, RulePhase::Candidate);
    assert!(!s.ready);
    assert_eq!(s.reason, "NotAuthorized");
    assert!(s.message.contains("alice wrote it"), "{}", s.message);
    // Without the admission policies, that is what it says first.
    let s = standing(&blessed, None, Err("policy missing"), Err("not checked"));
    assert_eq!(s.reason, "AdmissionPolicyMissing");
}
