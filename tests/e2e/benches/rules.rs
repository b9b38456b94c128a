//! Matching transactions against CategorizationRules: 10,000 transactions against 1,000 Blessed
//! rules (800 on a normalised payee, 150 on an exact payee, 50 patterns), through the rule book
//! `/agent suggest` and the autopilot use (indexed by normalised payee) and, as the baseline in
//! the same run, every rule tested against every transaction. Asserts that both give the same
//! verdicts. Then one learning pass: 10,000 approved writes weighed against the same 1,000 rules
//! (counts, evidence, Candidates for what no rule explains). Prints times and their ratios,
//! nothing about time is asserted.
//!
//! `cargo bench -p ledgerops-e2e --bench rules`

use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;
use ledgerops::api::common::LocalRef;
use ledgerops::api::rule::{Blessing, CategorizationRuleSpec, RuleMatch};
use ledgerops::logic::rule::learn::{self, Decision, Now, RuleView};
use ledgerops::logic::rule::{Blessed, Facts, RuleBook, Verdict, blessed};
use ledgerops::logic::values::payee::normalise_payee;

const TRANSACTIONS: usize = 10_000;
const RULES: usize = 1_000;
const ROUNDS: usize = 5;

/// A deterministic sequence of numbers (no randomness source needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % below as u64) as usize
    }
}

fn merchant(i: usize) -> String {
    format!("MERCHANT {}", words(i))
}

/// A word for `i` with no digits (normalisation drops words with digits).
fn words(mut i: usize) -> String {
    let mut w = String::new();
    loop {
        w.push((b'A' + (i % 26) as u8) as char);
        i /= 26;
        if i == 0 {
            return w;
        }
    }
}

fn rules() -> Vec<Blessed> {
    specs()
        .iter()
        .enumerate()
        .map(|(i, spec)| blessed(&format!("rule-{i}"), spec).expect("a well-formed rule"))
        .collect()
}

fn specs() -> Vec<CategorizationRuleSpec> {
    (0..RULES)
        .map(|i| {
            let m = match i {
                i if i < 800 => RuleMatch {
                    payee_normalised: Some(merchant(i)),
                    ..RuleMatch::default()
                },
                i if i < 950 => RuleMatch {
                    payee: Some(format!("POS {} 0042", merchant(i))),
                    ..RuleMatch::default()
                },
                i => RuleMatch {
                    payee_pattern: Some(format!("*{}*", words(i * 7))),
                    ..RuleMatch::default()
                },
            };
            CategorizationRuleSpec {
                budget_ref: LocalRef { name: "b".into() },
                matches: m,
                category_id: format!("cat-{}", i % 40),
                blessing: Some(Blessing {
                    by: "bench".into(),
                    at: None,
                }),
            }
        })
        .collect()
}

/// An approved write of each transaction: to its merchant's rule's category nine times in
/// ten, to another one the tenth time; one of 40 categories where no rule names the merchant.
fn decisions(txns: &[Txn]) -> Vec<Decision> {
    let at = Timestamp::from_second(1_790_000_000).expect("a time");
    txns.iter()
        .enumerate()
        .map(|(i, t)| {
            let category = match t.rule {
                Some(r) if i % 10 != 0 => r % 40,
                Some(r) => (r + 1) % 40,
                None => i % 40,
            };
            (i, t, format!("cat-{category}"))
        })
        .map(|(i, t, category_id)| Decision {
            source: format!("CategorizationPlan/p{}", i / 100),
            transaction_id: format!("t{i}"),
            now: Now::Category(Some(category_id.clone())),
            category_id,
            by: "bench".into(),
            at,
            payee: t.payee.clone(),
            account_id: "checking".into(),
            amount: t.amount,
            memo: None,
            teaches: true,
        })
        .collect()
}

struct Txn {
    payee: String,
    /// The rule written for its merchant (patterns aside).
    rule: Option<usize>,
    normalised: String,
    amount: i64,
}

fn transactions() -> Vec<Txn> {
    let mut lcg = Lcg(7);
    (0..TRANSACTIONS)
        .map(|_| {
            let (payee, rule) = match lcg.next(10) {
                0..=5 => {
                    let r = lcg.next(800);
                    (format!("CARTE 01/09 {}", merchant(r)), Some(r))
                }
                6 | 7 => {
                    let r = 800 + lcg.next(150);
                    (format!("POS {} 0042", merchant(r)), Some(r))
                }
                _ => (format!("SQ *SHOP {}", words(lcg.next(20_000))), None),
            };
            Txn {
                rule,
                normalised: normalise_payee(&payee),
                payee,
                amount: -(lcg.next(100_000) as i64),
            }
        })
        .collect()
}

fn facts(t: &Txn) -> Facts<'_> {
    Facts {
        payee: &t.payee,
        normalised: &t.normalised,
        account_id: "checking",
        amount: t.amount,
        memo: None,
    }
}

/// The baseline: every rule against the transaction.
fn scan(rules: &[Blessed], t: &Facts) -> Verdict {
    Verdict::of(rules.iter().filter(|r| r.matcher.matches(t)))
}

/// The fastest of `ROUNDS` runs of `f`, and its result.
fn best<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut fastest = Duration::MAX;
    let mut out = None;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let result = f();
        fastest = fastest.min(started.elapsed());
        out = Some(result);
    }
    (fastest, out.expect("at least one round"))
}

fn main() {
    let rules = rules();
    let txns = transactions();
    let (build, book) = best(|| RuleBook::new(rules.iter().cloned()));
    let (indexed, by_book) = best(|| {
        txns.iter()
            .map(|t| book.verdict(&facts(t)))
            .collect::<Vec<_>>()
    });
    let (scanned, by_scan) = best(|| {
        txns.iter()
            .map(|t| scan(&rules, &facts(t)))
            .collect::<Vec<_>>()
    });
    assert_eq!(by_book, by_scan, "the book and the scan disagree");
    let spoken = by_book
        .iter()
        .filter(|v| !matches!(v, Verdict::Silent))
        .count();
    let disagree = by_book
        .iter()
        .filter(|v| matches!(v, Verdict::Disagree { .. }))
        .count();
    println!(
        "{TRANSACTIONS} transactions against {RULES} Blessed rules, fastest of {ROUNDS} runs\n"
    );
    println!("| how | time | per transaction | ratio to the scan |");
    println!("|---|---:|---:|---:|");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let us = |d: Duration| d.as_secs_f64() * 1e6 / TRANSACTIONS as f64;
    println!(
        "| rule book (indexed by normalised payee) | {:.2} ms | {:.2} µs | {:.3} |",
        ms(indexed),
        us(indexed),
        indexed.as_secs_f64() / scanned.as_secs_f64()
    );
    println!(
        "| every rule against every transaction (baseline) | {:.2} ms | {:.2} µs | 1 |",
        ms(scanned),
        us(scanned)
    );
    println!(
        "\nbuilding the book: {:.2} ms; transactions a rule spoke for: {spoken}, of which rules disagreed on {disagree}",
        ms(build)
    );

    let specs = specs();
    let names: Vec<String> = (0..RULES).map(|i| format!("rule-{i}")).collect();
    let views: Vec<RuleView> = specs
        .iter()
        .zip(&names)
        .map(|(spec, name)| RuleView {
            name,
            spec,
            generation: 1,
            acting_since: None,
        })
        .collect();
    let decisions = decisions(&txns);
    let now = Timestamp::from_second(1_790_000_100).expect("a time");
    let (learning, learned) = best(|| learn::learn("b", &views, &decisions, now));
    let confirmations: u32 = learned.learning.values().map(|l| l.confirmations).sum();
    let corrections: u32 = learned.learning.values().map(|l| l.corrections).sum();
    println!(
        "\nlearning pass, {TRANSACTIONS} approved writes against {RULES} rules: {:.2} ms ({:.2} µs a write), {:.2} times the rule book's pass over the same transactions; {confirmations} confirmations, {corrections} corrections, {} Candidates proposed (at most {} a pass)",
        ms(learning),
        us(learning),
        learning.as_secs_f64() / indexed.as_secs_f64(),
        learned.candidates.len(),
        learn::CANDIDATES_PER_PASS
    );
}
