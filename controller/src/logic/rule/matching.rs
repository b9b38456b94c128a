//! Whether a rule is well formed, and whether it matches a transaction.

use crate::api::rule::{CategorizationRuleSpec, MAX_WILDCARDS};
use crate::logic::values::money::parse_decimal;
use crate::logic::values::payee::{normalise_payee, plain_words};

/// Why a rule cannot be used; the message names the field and says what to write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("match.amount.{field} `{value}` is not an amount; write a decimal such as -12.50")]
    Amount { field: &'static str, value: String },
    #[error("match.amount.min {min} is above match.amount.max {max}; swap them")]
    EmptyRange { min: String, max: String },
    #[error(
        "match.payeePattern `{0}` needs some text besides at most {MAX_WILDCARDS} `*` wildcards"
    )]
    Pattern(String),
    #[error("give exactly one of match.payee, match.payeeNormalised and match.payeePattern")]
    Payee,
    #[error(
        "match.payeeNormalised `{0}` has no merchant name once normalised (digits, punctuation and card prefixes are dropped)"
    )]
    NoMerchant(String),
}

/// How a rule tests the payee.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PayeeTest {
    /// The payee exactly as YNAB shows it.
    Exact(String),
    /// The normalised payee.
    Normalised(String),
    /// `*`-separated pieces of the normalised payee, in order.
    Pattern(Vec<String>),
}

/// A rule's match, checked and ready to test transactions with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matcher {
    payee: PayeeTest,
    account_id: Option<String>,
    min: Option<i64>,
    max: Option<i64>,
    /// Upper case.
    memo_contains: Option<String>,
}

/// What a rule looks at in a transaction.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub payee: &'a str,
    /// [`normalise_payee`] of `payee`, computed once per transaction.
    pub normalised: &'a str,
    pub account_id: &'a str,
    /// Milliunits.
    pub amount: i64,
    pub memo: Option<&'a str>,
}

impl Matcher {
    pub fn new(spec: &CategorizationRuleSpec) -> Result<Self, RuleError> {
        let m = &spec.matches;
        let payee = match (&m.payee, &m.payee_normalised, &m.payee_pattern) {
            (Some(p), None, None) => PayeeTest::Exact(p.clone()),
            (None, Some(n), None) => match normalise_payee(n) {
                key if key.is_empty() => return Err(RuleError::NoMerchant(n.clone())),
                key => PayeeTest::Normalised(key),
            },
            (None, None, Some(p)) => pattern(p)?,
            _ => return Err(RuleError::Payee),
        };
        let amount = |field: &'static str, value: &Option<String>| {
            value
                .as_deref()
                .map(|v| {
                    parse_decimal(v).map_err(|_| RuleError::Amount {
                        field,
                        value: v.to_owned(),
                    })
                })
                .transpose()
        };
        let range = m.amount.clone().unwrap_or_default();
        let (min, max) = (amount("min", &range.min)?, amount("max", &range.max)?);
        if let (Some(lo), Some(hi)) = (min, max)
            && lo > hi
        {
            return Err(RuleError::EmptyRange {
                min: range.min.unwrap_or_default(),
                max: range.max.unwrap_or_default(),
            });
        }
        Ok(Self {
            payee,
            account_id: m.account_id.clone(),
            min,
            max,
            memo_contains: m.memo_contains.as_deref().map(str::to_uppercase),
        })
    }

    /// Whether the transaction is one the rule is about.
    pub fn matches(&self, t: &Facts) -> bool {
        let payee = match &self.payee {
            PayeeTest::Exact(p) => t.payee == p,
            PayeeTest::Normalised(n) => t.normalised == n,
            PayeeTest::Pattern(pieces) => glob(pieces, t.normalised),
        };
        payee
            && self.account_id.as_deref().is_none_or(|a| a == t.account_id)
            && self.min.is_none_or(|lo| t.amount >= lo)
            && self.max.is_none_or(|hi| t.amount <= hi)
            && self.memo_contains.as_deref().is_none_or(|needle| {
                t.memo
                    .is_some_and(|memo| memo.to_uppercase().contains(needle))
            })
    }

    /// The payee test in one line, for `kubectl get`.
    pub fn payee_line(&self) -> String {
        match &self.payee {
            PayeeTest::Exact(p) => format!("= {p}"),
            PayeeTest::Normalised(n) => format!("~ {n}"),
            PayeeTest::Pattern(pieces) => format!("~ {}", pieces.join("*")),
        }
    }

    /// The normalised payee every match has, when the test pins one: the index key.
    pub(super) fn key(&self) -> Option<String> {
        match &self.payee {
            PayeeTest::Exact(p) => Some(normalise_payee(p)),
            PayeeTest::Normalised(n) => Some(n.clone()),
            PayeeTest::Pattern(_) => None,
        }
    }
}

/// A pattern on the normalised payee: its text is normalised piece by piece, so that it is
/// written the way people see the payee.
fn pattern(raw: &str) -> Result<PayeeTest, RuleError> {
    let pieces: Vec<String> = raw.split('*').map(plain_words).collect();
    if pieces.len() - 1 > MAX_WILDCARDS || pieces.iter().all(String::is_empty) {
        return Err(RuleError::Pattern(raw.to_owned()));
    }
    Ok(PayeeTest::Pattern(pieces))
}

/// Whether `text` is the pieces with anything between them; the first piece is anchored at the
/// start, the last at the end (an empty piece is a leading or trailing `*`). Leftmost placement
/// of each middle piece is enough, so this is linear in the pieces' number times the text.
fn glob(pieces: &[String], text: &str) -> bool {
    let (first, rest) = pieces.split_first().expect("at least one piece");
    let Some(mut left) = text.strip_prefix(first.as_str()) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return left.is_empty();
    };
    for piece in middle {
        match left.find(piece.as_str()) {
            Some(at) => left = &left[at + piece.len()..],
            None => return false,
        }
    }
    left.len() >= last.len() && left.ends_with(last.as_str())
}
