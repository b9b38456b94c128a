//! The demo plan (`examples/demo-budget.json`): a French household in EUR, July to September
//! 2026, generated deterministically (fixed seed, own PRNG) so the file can be checked against
//! this code. Run `cargo run -p ynab-sim --bin gen-demo` to rewrite it.

use ledgerops::ynab_model::{
    Account, AccountType, Category, CategoryGroup, CategoryGroupWithCategories, ClearedStatus,
    CurrencyFormat, DateFormat, FlagColor, Payee, PlanSummary, SubTransaction, TransactionDetail,
    TransactionSummary, User,
};

use crate::fixture::{Fixture, FixtureMonth, FixturePlan, MonthBudget};
use crate::store::{CREDIT_CARD_PAYMENTS, INTERNAL_GROUP, READY_TO_ASSIGN, Store, View};

pub const TOKEN: &str = "demo-token";
pub const PLAN_ID: &str = "6a1f0c2e-3b7d-4c59-9e21-5d8a7f4b2c10";
pub const CHECKING: &str = "Compte Courant";
pub const SAVINGS: &str = "Livret A";
pub const CARD: &str = "Visa Premier";
pub const TRACKING: &str = "Assurance Vie";
const MONTHS: [&str; 3] = ["2026-07", "2026-08", "2026-09"];
/// Checking is reconciled through this date.
const RECONCILED_THROUGH: &str = "2026-08-31";
/// Bank imports after this date are not yet approved.
const APPROVED_THROUGH: &str = "2026-09-14";

/// The id of the demo plan's category called `name`; panics when there is none (a test's typo).
pub fn category(name: &str) -> String {
    generate().plans[0]
        .category_groups
        .iter()
        .flat_map(|g| &g.categories)
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no category {name} in the demo plan"))
        .id
        .clone()
}

/// Stable UUID-shaped id from a name (FNV-1a), so ids never change between generations.
pub fn uuid_for(kind: &str, name: &str) -> String {
    let hash = |seed: u64| {
        format!("{kind}:{name}").bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let (a, b) = (hash(0xcbf2_9ce4_8422_2325), hash(0x8422_2325_cbf2_9ce4));
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | (b >> 48) & 0x3fff,
        b & 0xffff_ffff_ffff
    )
}

/// SplitMix64: tiny, deterministic, good enough for demo data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next() as usize % items.len()]
    }
}

const GROUPS: [(&str, &[&str]); 7] = [
    (INTERNAL_GROUP, &[READY_TO_ASSIGN, "Uncategorized"]),
    (CREDIT_CARD_PAYMENTS, &[CARD]),
    (
        "Bills",
        &[
            "Rent",
            "Electricity",
            "Internet & Phone",
            "Insurance",
            "Subscriptions",
        ],
    ),
    (
        "Everyday",
        &[
            "Groceries",
            "Restaurants",
            "Transport",
            "Fuel",
            "Household",
            "Personal Care",
        ],
    ),
    ("Family", &["Childcare", "School", "Pharmacy", "Doctor"]),
    ("Fun", &["Entertainment", "Hobbies", "Gifts"]),
    (
        "Savings Goals",
        &[
            "Holidays",
            "Emergency Fund",
            "Car Maintenance",
            "Investments",
        ],
    ),
];

/// Assigned each month (euros), by category.
const BUDGET: [(&str, i64); 20] = [
    ("Rent", 1250),
    ("Electricity", 95),
    ("Internet & Phone", 60),
    ("Insurance", 85),
    ("Subscriptions", 35),
    ("Groceries", 650),
    ("Restaurants", 150),
    ("Transport", 120),
    ("Fuel", 110),
    ("Household", 80),
    ("Personal Care", 45),
    ("Childcare", 420),
    ("School", 40),
    ("Pharmacy", 40),
    ("Doctor", 60),
    ("Entertainment", 60),
    ("Hobbies", 50),
    ("Gifts", 50),
    ("Holidays", 250),
    ("Investments", 300),
];

/// Everyday card purchases: (payee as the bank prints it, category, min and max euro cents).
const DAILY: [(&str, &str, i64, i64); 14] = [
    ("CARTE {d} MONOPRIX PARIS 11", "Groceries", 1250, 8900),
    ("CARTE {d} CARREFOUR CITY", "Groceries", 890, 6400),
    ("CARTE {d} LIDL 0412", "Groceries", 1500, 9800),
    (
        "CB BOULANGERIE DU PORT FACT {f} 525130******1",
        "Groceries",
        180,
        1450,
    ),
    ("CARTE {d} RATP NAVIGO", "Transport", 250, 2500),
    ("CARTE {d} TOTALENERGIES ST 4521", "Fuel", 3500, 7800),
    ("CARTE {d} PHARMACIE DE LA GARE", "Pharmacy", 450, 3800),
    ("CARTE {d} LE PETIT ZINC", "Restaurants", 1800, 7400),
    (
        "CARTE {d} UBER EATS HELP.UBER.COM",
        "Restaurants",
        1600,
        4200,
    ),
    ("CARTE {d} LEROY MERLIN IVRY", "Household", 900, 11500),
    ("CARTE {d} FNAC BASTILLE", "Entertainment", 1200, 6500),
    ("CARTE {d} DECATHLON", "Hobbies", 1500, 8900),
    ("CARTE {d} SEPHORA", "Personal Care", 1400, 5600),
    ("CARTE {d} CINEMA MK2", "Entertainment", 1100, 2800),
];

/// Accounts: (name, type, on budget).
const ACCOUNTS: [(&str, AccountType, bool); 4] = [
    (CHECKING, AccountType::Checking, true),
    (SAVINGS, AccountType::Savings, true),
    (CARD, AccountType::CreditCard, true),
    (TRACKING, AccountType::OtherAsset, false),
];

fn account_id(name: &str) -> String {
    uuid_for("account", name)
}

fn category_id(name: &str) -> String {
    uuid_for("category", name)
}

fn transfer_payee_name(account: &str) -> String {
    format!("Transfer : {account}")
}

/// What a scripted transaction looks like before ids and names are filled in.
struct Line<'a> {
    date: String,
    account: &'a str,
    amount: i64,
    payee: String,
    category: Option<&'a str>,
    memo: Option<&'a str>,
    imported: bool,
}

fn line<'a>(
    date: String,
    account: &'a str,
    amount: i64,
    payee: &str,
    category: Option<&'a str>,
) -> Line<'a> {
    Line {
        date,
        account,
        amount,
        payee: payee.to_string(),
        category,
        memo: None,
        imported: true,
    }
}

struct Builder {
    payees: Vec<Payee>,
    transactions: Vec<TransactionDetail>,
    next_number: u32,
    imports: Vec<String>,
}

impl Builder {
    /// The next `tx-NNN` id; 48 and 49 are kept for the two scripted uncategorized imports.
    fn next_id(&mut self) -> String {
        self.next_number += 1;
        while [48, 49].contains(&self.next_number) {
            self.next_number += 1;
        }
        format!("tx-{:03}", self.next_number)
    }

    fn payee(&mut self, name: &str) -> String {
        if let Some(p) = self.payees.iter().find(|p| p.name == name) {
            return p.id.clone();
        }
        let id = uuid_for("payee", name);
        self.payees.push(Payee {
            id: id.clone(),
            name: name.to_string(),
            transfer_account_id: None,
            deleted: false,
        });
        id
    }

    /// YNAB's import id: `YNAB:<milliunits>:<date>:<occurrence>`.
    fn import_id(&mut self, amount: i64, date: &str) -> String {
        let stem = format!("YNAB:{amount}:{date}:");
        let occurrence = self.imports.iter().filter(|i| i.starts_with(&stem)).count() + 1;
        let id = format!("{stem}{occurrence}");
        self.imports.push(id.clone());
        id
    }

    fn add(&mut self, id: Option<&str>, l: Line) -> usize {
        let id = id.map_or_else(|| self.next_id(), str::to_string);
        let payee_id = self.payee(&l.payee);
        let checking_reconciled = l.account == CHECKING && l.date.as_str() <= RECONCILED_THROUGH;
        let import_id = l.imported.then(|| self.import_id(l.amount, &l.date));
        let summary = TransactionSummary {
            id,
            approved: !l.imported || l.date.as_str() <= APPROVED_THROUGH,
            cleared: if checking_reconciled {
                ClearedStatus::Reconciled
            } else if l.date.as_str() <= "2026-09-25" {
                ClearedStatus::Cleared
            } else {
                ClearedStatus::Uncleared
            },
            date: l.date,
            amount: l.amount,
            memo: l.memo.map(str::to_string),
            flag_color: None,
            flag_name: None,
            account_id: account_id(l.account),
            payee_id: Some(payee_id),
            category_id: l.category.map(category_id),
            transfer_account_id: None,
            transfer_transaction_id: None,
            matched_transaction_id: None,
            import_payee_name: import_id.as_ref().map(|_| l.payee.clone()),
            import_payee_name_original: import_id.as_ref().map(|_| l.payee.clone()),
            import_id,
            debt_transaction_type: None,
            deleted: false,
        };
        self.transactions.push(TransactionDetail {
            summary,
            account_name: String::new(),
            payee_name: None,
            category_name: None,
            subtransactions: Vec::new(),
        });
        self.transactions.len() - 1
    }

    /// Both sides of a transfer; `category` goes on the `from` side (only budget → tracking).
    fn transfer(&mut self, date: &str, from: &str, to: &str, euros: i64, category: Option<&str>) {
        let mut out = line(
            date.to_string(),
            from,
            -euros * 1000,
            &transfer_payee_name(to),
            category,
        );
        out.imported = false;
        let a = self.add(None, out);
        let mut back = line(
            date.to_string(),
            to,
            euros * 1000,
            &transfer_payee_name(from),
            None,
        );
        back.imported = false;
        let b = self.add(None, back);
        let (id_a, id_b) = (
            self.transactions[a].summary.id.clone(),
            self.transactions[b].summary.id.clone(),
        );
        self.transactions[a].summary.transfer_account_id = Some(account_id(to));
        self.transactions[a].summary.transfer_transaction_id = Some(id_b);
        self.transactions[b].summary.transfer_account_id = Some(account_id(from));
        self.transactions[b].summary.transfer_transaction_id = Some(id_a);
    }

    /// A split purchase: `parts` are (category, cents).
    fn split(&mut self, date: &str, account: &str, payee: &str, parts: &[(&str, i64)]) {
        let total = -parts.iter().map(|(_, c)| c * 10).sum::<i64>();
        let i = self.add(None, line(date.to_string(), account, total, payee, None));
        let parent = self.transactions[i].summary.id.clone();
        self.transactions[i].subtransactions = parts
            .iter()
            .enumerate()
            .map(|(n, (category, cents))| SubTransaction {
                id: format!("{parent}-s{}", n + 1),
                transaction_id: parent.clone(),
                amount: -cents * 10,
                memo: None,
                payee_id: None,
                payee_name: None,
                category_id: Some(category_id(category)),
                category_name: None,
                transfer_account_id: None,
                transfer_transaction_id: None,
                deleted: false,
            })
            .collect();
    }
}

fn scripted(b: &mut Builder) {
    for (name, ..) in ACCOUNTS {
        let payee = b.payee(&transfer_payee_name(name));
        let p = b
            .payees
            .iter_mut()
            .find(|p| p.id == payee)
            .expect("just added");
        p.transfer_account_id = Some(account_id(name));
    }
    let start = |account, euros: i64, category| {
        let mut l = line(
            "2026-07-01".to_string(),
            account,
            euros * 1000,
            "Starting Balance",
            category,
        );
        l.imported = false;
        l
    };
    b.add(None, start(CHECKING, 3150, Some(READY_TO_ASSIGN)));
    b.add(None, start(SAVINGS, 8400, Some(READY_TO_ASSIGN)));
    b.add(None, start(TRACKING, 24500, None));
    for (n, month) in MONTHS.iter().enumerate() {
        let d = |day: u32| format!("{month}-{day:02}");
        let ddmm = |day: u32| format!("{day:02}/{}", &month[5..7]);
        b.add(
            None,
            line(
                d(28),
                CHECKING,
                3_240_000,
                "VIR SEPA ACME SAS SALAIRE",
                Some(READY_TO_ASSIGN),
            ),
        );
        b.add(
            None,
            line(
                d(27),
                CHECKING,
                2_180_000,
                "VIR SEPA HOPITAL ST LOUIS PAIE",
                Some(READY_TO_ASSIGN),
            ),
        );
        b.add(
            None,
            line(
                d(5),
                CHECKING,
                -1_250_000,
                "PRLV SEPA FONCIA LOYER",
                Some("Rent"),
            ),
        );
        b.add(
            None,
            line(
                d(8),
                CHECKING,
                -(88_000 + n as i64 * 6_310),
                "PRLV SEPA EDF CLIENTS PARTICULIERS",
                Some("Electricity"),
            ),
        );
        b.add(
            None,
            line(
                d(10),
                CHECKING,
                -39_990,
                "PRLV SEPA FREE MOBILE",
                Some("Internet & Phone"),
            ),
        );
        b.add(
            None,
            line(
                d(10),
                CHECKING,
                -19_990,
                "PRLV SEPA FREE TELECOM",
                Some("Internet & Phone"),
            ),
        );
        b.add(
            None,
            line(
                d(12),
                CHECKING,
                -84_270,
                "PRLV SEPA MAIF ASSURANCES",
                Some("Insurance"),
            ),
        );
        b.add(
            None,
            line(
                d(3),
                CHECKING,
                -415_000,
                "PRLV SEPA CRECHE LES PETITS PAS",
                Some("Childcare"),
            ),
        );
        b.add(
            None,
            line(
                d(15),
                CARD,
                -13_490,
                &format!("CARTE {} NETFLIX.COM", ddmm(15)),
                Some("Subscriptions"),
            ),
        );
        b.add(
            None,
            line(
                d(16),
                CARD,
                -10_990,
                &format!("CARTE {} SPOTIFY P2F4", ddmm(16)),
                Some("Subscriptions"),
            ),
        );
        b.transfer(&d(2), CHECKING, SAVINGS, 400, None);
        b.transfer(&d(20), SAVINGS, TRACKING, 300, Some("Investments"));
        b.transfer(&d(6), CHECKING, CARD, 350 + n as i64 * 40, None);
        let mut valuation = line(
            d(28),
            TRACKING,
            120_000 + n as i64 * 35_500,
            "Market Valuation",
            None,
        );
        valuation.imported = false;
        b.add(None, valuation);
    }
    b.split(
        "2026-07-19",
        CARD,
        "CARTE 19/07 CARREFOUR MARKET",
        &[("Groceries", 8730), ("Household", 2340)],
    );
    b.split(
        "2026-08-09",
        CARD,
        "CARTE 09/08 AMAZON EU SARL",
        &[("Household", 3499), ("Gifts", 2450), ("School", 1290)],
    );
    b.split(
        "2026-09-03",
        CHECKING,
        "CB DECATHLON RENTREE FACT 030926 525130******1",
        &[("School", 6480), ("Hobbies", 4390)],
    );
    let mut dentist = line(
        "2026-08-21".to_string(),
        CHECKING,
        -70_000,
        "Dr Martin Dentiste",
        Some("Doctor"),
    );
    dentist.memo = Some("Consultation, remboursement CPAM attendu");
    dentist.imported = false;
    b.add(None, dentist);
    b.add(
        None,
        line(
            "2026-08-27".to_string(),
            CHECKING,
            49_000,
            "VIR CPAM PARIS REMBOURSEMENT",
            Some("Doctor"),
        ),
    );
    b.add(
        Some("tx-048"),
        line(
            "2026-09-16".to_string(),
            CHECKING,
            -8_400,
            "CB BOULANGERIE DU PORT FACT 160926 525130******1",
            None,
        ),
    );
    b.add(
        Some("tx-049"),
        line("2026-09-18".to_string(), CHECKING, -45_000, "RAIL CO", None),
    );
}

/// Card purchases every day, from a fixed seed; the latest ones are left uncategorized.
fn daily(b: &mut Builder) {
    let mut rng = Rng(0x1ed6_e305);
    for month in MONTHS {
        for day in 1..=30u32 {
            let date = format!("{month}-{day:02}");
            for _ in 0..rng.range(1, 4) {
                let (pattern, category, lo, hi) = *rng.pick(&DAILY);
                let payee = pattern
                    .replace("{d}", &format!("{day:02}/{}", &month[5..7]))
                    .replace("{f}", &format!("{day:02}{}{}", &month[5..7], &month[2..4]));
                let account = if rng.range(0, 2) == 0 { CARD } else { CHECKING };
                let amount = -rng.range(lo, hi) * 10;
                let category =
                    (date.as_str() <= "2026-09-22" || rng.range(0, 2) == 0).then_some(category);
                let i = b.add(None, line(date.clone(), account, amount, &payee, category));
                if rng.range(0, 24) == 0 {
                    b.transactions[i].summary.flag_color =
                        Some(*rng.pick(&[FlagColor::Red, FlagColor::Blue, FlagColor::Orange]));
                }
            }
        }
    }
}

fn plan_summary() -> PlanSummary {
    PlanSummary {
        id: PLAN_ID.to_string(),
        name: "Famille Durand".to_string(),
        last_modified_on: Some("2026-09-30T19:12:04Z".to_string()),
        first_month: Some("2026-07-01".to_string()),
        last_month: Some("2026-09-01".to_string()),
        date_format: Some(DateFormat {
            format: "DD/MM/YYYY".to_string(),
        }),
        currency_format: Some(CurrencyFormat {
            iso_code: "EUR".to_string(),
            example_format: "123 456,78".to_string(),
            decimal_digits: 2,
            decimal_separator: ",".to_string(),
            symbol_first: false,
            group_separator: " ".to_string(),
            currency_symbol: "€".to_string(),
            display_symbol: true,
        }),
        accounts: None,
    }
}

fn accounts() -> Vec<Account> {
    ACCOUNTS
        .iter()
        .map(|(name, account_type, on_budget)| Account {
            id: account_id(name),
            name: name.to_string(),
            account_type: *account_type,
            on_budget: *on_budget,
            closed: false,
            note: None,
            balance: 0,
            cleared_balance: 0,
            uncleared_balance: 0,
            transfer_payee_id: Some(uuid_for("payee", &transfer_payee_name(name))),
            direct_import_linked: *name == CHECKING || *name == CARD,
            direct_import_in_error: false,
            last_reconciled_at: (*name == CHECKING)
                .then(|| format!("{RECONCILED_THROUGH}T20:00:00Z")),
            debt_original_balance: None,
            debt_interest_rates: None,
            debt_minimum_payments: None,
            debt_escrow_amounts: None,
            deleted: false,
        })
        .collect()
}

fn category_groups() -> Vec<CategoryGroupWithCategories> {
    GROUPS
        .iter()
        .map(|(group, names)| {
            let group_id = uuid_for("group", group);
            let internal = *group == INTERNAL_GROUP;
            CategoryGroupWithCategories {
                group: CategoryGroup {
                    id: group_id.clone(),
                    name: group.to_string(),
                    hidden: false,
                    internal,
                    deleted: false,
                },
                categories: names
                    .iter()
                    .map(|name| Category {
                        id: category_id(name),
                        category_group_id: group_id.clone(),
                        category_group_name: Some(group.to_string()),
                        name: name.to_string(),
                        hidden: false,
                        internal,
                        original_category_group_id: None,
                        note: None,
                        budgeted: 0,
                        activity: 0,
                        balance: 0,
                        goal_type: None,
                        goal_needs_whole_amount: None,
                        goal_day: None,
                        goal_cadence: None,
                        goal_cadence_frequency: None,
                        goal_creation_month: None,
                        goal_target: None,
                        goal_target_month: None,
                        goal_target_date: None,
                        goal_percentage_complete: None,
                        goal_months_to_budget: None,
                        goal_under_funded: None,
                        goal_overall_funded: None,
                        goal_overall_left: None,
                        goal_snoozed_at: None,
                        deleted: false,
                    })
                    .collect(),
            }
        })
        .collect()
}

fn months() -> Vec<FixtureMonth> {
    MONTHS
        .iter()
        .map(|m| FixtureMonth {
            month: format!("{m}-01"),
            note: None,
            categories: BUDGET
                .iter()
                .map(|(name, euros)| MonthBudget {
                    category_id: category_id(name),
                    budgeted: euros * 1000,
                })
                .collect(),
        })
        .collect()
}

/// Fills the amounts and names YNAB derives (as of September 2026), so the file reads like an
/// export; the simulator recomputes them anyway.
fn with_derived(mut fixture: Fixture) -> Fixture {
    let store = Store::from_fixture(&fixture);
    let view = View::new(&store.plans[0], "2026-09-01".to_string());
    let plan = &mut fixture.plans[0];
    for account in &mut plan.accounts {
        *account = view.account(account);
    }
    for group in &mut plan.category_groups {
        for category in &mut group.categories {
            *category = view.category(category);
        }
    }
    for tx in &mut plan.transactions {
        *tx = view.transaction(tx);
    }
    fixture
}

pub fn generate() -> Fixture {
    let mut b = Builder {
        payees: Vec::new(),
        transactions: Vec::new(),
        next_number: 0,
        imports: Vec::new(),
    };
    scripted(&mut b);
    daily(&mut b);
    b.transactions
        .sort_by(|x, y| (&x.summary.date, &x.summary.id).cmp(&(&y.summary.date, &y.summary.id)));
    with_derived(Fixture {
        tokens: vec![TOKEN.to_string()],
        user: User {
            id: uuid_for("user", "durand"),
        },
        plans: vec![FixturePlan {
            summary: plan_summary(),
            server_knowledge: 100,
            accounts: accounts(),
            category_groups: category_groups(),
            payees: b.payees,
            months: months(),
            transactions: b.transactions,
        }],
    })
}

/// The file's text: pretty JSON with a final newline.
pub fn render() -> String {
    let mut text = serde_json::to_string_pretty(&generate()).expect("fixture serializes");
    text.push('\n');
    text
}
