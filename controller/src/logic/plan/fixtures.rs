//! A small plan shaped like the demo budget, shared by the plan and policy tests.

// A fixture is data: it reads best whole.
#![allow(clippy::too_many_lines)]

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::api::budget::Currency;
use crate::api::plan::Assignment;
use crate::logic::budget::mirror::Mirror;
use crate::ynab_model::TransactionSummary;

/// The plan's currency decimals (EUR).
pub const DIGITS: u8 = 2;

fn model<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid YNAB record")
}

/// The scope the tests' previews are bound to.
pub const SCOPE: &str = "ns/household/plan";

/// The mirror as a preview reads it, in [`SCOPE`].
pub fn at(mirror: &Mirror) -> super::preview::State<'_> {
    super::preview::State::new(SCOPE, mirror, DIGITS)
}

/// `basis` previewed on `m` in [`SCOPE`], approved as it is.
pub fn approved(m: &Mirror, basis: super::Basis) -> super::Approved {
    let p = basis.preview(&at(m));
    super::Approved {
        scope: SCOPE.into(),
        basis,
        changes: p
            .changes
            .iter()
            .map(|c| super::AppliedChange::from(&c.change))
            .collect(),
        hash: p.hash,
        decimal_digits: DIGITS,
    }
}

/// `{transactionId, categoryId}`.
pub fn assign(transaction_id: &str, category_id: &str) -> Assignment {
    Assignment {
        transaction_id: transaction_id.into(),
        category_id: category_id.into(),
    }
}

/// Accounts, categories, payees and transactions covering every case the plan logic tells
/// apart: uncategorised spending (seed 002's tx-048 and tx-049), a payee categorised before,
/// a split, an off-budget account, transfers between budget accounts and to a tracking account,
/// and internal, credit card payment and hidden categories.
pub fn mirror() -> Mirror {
    let mut m = Mirror {
        server_knowledge: 100,
        history_from: 100,
        plan_name: "Famille Durand".into(),
        currency: Some(Currency {
            iso_code: "EUR".into(),
            decimal_digits: DIGITS,
        }),
        ..Mirror::default()
    };
    for (id, name, kind, on_budget) in [
        ("acc-checking", "Compte Courant", "checking", true),
        ("acc-savings", "Livret A", "savings", true),
        ("acc-visa", "Visa Premier", "creditCard", true),
        ("acc-tracking", "Assurance Vie", "otherAsset", false),
    ] {
        m.accounts.insert(
            id.into(),
            model(
                json!({"id": id, "name": name, "type": kind, "on_budget": on_budget,
                "closed": false, "balance": 0, "cleared_balance": 0, "uncleared_balance": 0,
                "transfer_payee_id": format!("payee-to-{id}"), "deleted": false}),
            ),
        );
    }
    for (id, name, internal, hidden) in [
        ("grp-internal", "Internal Master Category", true, false),
        ("grp-cc", "Credit Card Payments", false, false),
        ("grp-everyday", "Everyday", false, false),
        ("grp-archive", "Archive", false, true),
    ] {
        m.category_groups.insert(
            id.into(),
            model(
                json!({"id": id, "name": name, "hidden": hidden, "internal": internal,
                "deleted": false}),
            ),
        );
    }
    for (id, group, name, internal, hidden) in [
        (
            "cat-rta",
            "grp-internal",
            "Inflow: Ready to Assign",
            true,
            false,
        ),
        (
            "cat-uncategorized",
            "grp-internal",
            "Uncategorized",
            true,
            false,
        ),
        ("cat-visa", "grp-cc", "Visa Premier", false, false),
        ("cat-groceries", "grp-everyday", "Groceries", false, false),
        ("cat-transport", "grp-everyday", "Transport", false, false),
        (
            "cat-investments",
            "grp-everyday",
            "Investments",
            false,
            false,
        ),
        ("cat-old", "grp-everyday", "Old hobby", false, true),
        ("cat-archived", "grp-archive", "Archived", false, false),
    ] {
        m.categories.insert(
            id.into(),
            model(
                json!({"id": id, "category_group_id": group, "name": name, "hidden": hidden,
                "internal": internal, "budgeted": 0, "activity": 0, "balance": 0,
                "deleted": false}),
            ),
        );
    }
    for (id, name) in [
        (
            "payee-boulangerie",
            "CB BOULANGERIE DU PORT FACT 160926 525130******1",
        ),
        ("payee-rail", "RAIL CO"),
        ("payee-carrefour", "CARTE 19/07 CARREFOUR MARKET"),
        ("payee-salary", "VIR SEPA ACME SAS SALAIRE"),
        ("payee-amazon", "CARTE 09/08 AMAZON EU SARL"),
        ("payee-to-acc-checking", "Transfer : Compte Courant"),
        ("payee-to-acc-savings", "Transfer : Livret A"),
        ("payee-to-acc-tracking", "Transfer : Assurance Vie"),
    ] {
        m.payees.insert(
            id.into(),
            model(json!({"id": id, "name": name, "deleted": false})),
        );
    }
    let transactions = [
        json!({"id": "tx-048", "date": "2026-09-16", "amount": -8_400,
            "payee_id": "payee-boulangerie"}),
        json!({"id": "tx-049", "date": "2026-09-18", "amount": -45_000, "payee_id": "payee-rail"}),
        json!({"id": "tx-065", "date": "2026-07-01", "amount": -37_050,
            "payee_id": "payee-carrefour", "category_id": "cat-groceries"}),
        json!({"id": "tx-066", "date": "2026-09-20", "amount": -12_000,
            "payee_id": "payee-carrefour"}),
        json!({"id": "tx-038", "date": "2026-09-28", "amount": 3_240_000,
            "payee_id": "payee-salary", "category_id": "cat-rta"}),
        json!({"id": "tx-090", "date": "2026-09-29", "amount": -5_000, "account_id": "acc-visa"}),
        json!({"id": "tx-split", "date": "2026-08-09", "amount": -60_000, "account_id": "acc-visa",
            "payee_id": "payee-amazon"}),
        // Between two budget accounts.
        json!({"id": "tx-014", "date": "2026-07-02", "amount": -400_000,
            "payee_id": "payee-to-acc-savings", "transfer_account_id": "acc-savings"}),
        json!({"id": "tx-015", "date": "2026-07-02", "amount": 400_000,
            "account_id": "acc-savings", "payee_id": "payee-to-acc-checking",
            "transfer_account_id": "acc-checking"}),
        // From the budget to a tracking account: the budget side has a category.
        json!({"id": "tx-052", "date": "2026-09-20", "amount": -300_000,
            "account_id": "acc-savings", "payee_id": "payee-to-acc-tracking",
            "category_id": "cat-investments", "transfer_account_id": "acc-tracking"}),
        json!({"id": "tx-053", "date": "2026-09-20", "amount": 300_000,
            "account_id": "acc-tracking", "payee_id": "payee-to-acc-savings",
            "transfer_account_id": "acc-savings"}),
        // A tracking account's own transaction.
        json!({"id": "tx-056", "date": "2026-09-28", "amount": 191_000,
            "account_id": "acc-tracking"}),
    ];
    for fields in transactions {
        let mut record = json!({"memo": null, "cleared": "cleared", "approved": true,
            "flag_color": null, "account_id": "acc-checking", "payee_id": null,
            "category_id": null, "transfer_account_id": null, "deleted": false});
        record
            .as_object_mut()
            .expect("an object")
            .extend(fields.as_object().expect("an object").clone());
        let tx: TransactionSummary = model(record);
        m.transactions.insert(tx.id.clone(), tx);
    }
    m.subtransactions.insert(
        "tx-split".into(),
        ["cat-groceries", "cat-transport"]
            .iter()
            .enumerate()
            .map(|(i, category)| {
                model(
                    json!({"id": format!("sub-{i}"), "transaction_id": "tx-split",
                    "amount": -30_000, "memo": null, "payee_id": null, "category_id": category,
                    "transfer_account_id": null, "deleted": false}),
                )
            })
            .collect(),
    );
    m
}

/// Puts a transaction of the mirror in a category, as an edit in the YNAB app would.
pub fn recategorise(mirror: &mut Mirror, transaction_id: &str, category_id: Option<&str>) {
    // A change after everything the mirror read, as a write's own answer records it.
    let after = mirror.server_knowledge + 1;
    mirror.changed_at.insert(transaction_id.to_owned(), after);
    mirror
        .transactions
        .get_mut(transaction_id)
        .expect("a transaction of the fixture")
        .category_id = category_id.map(str::to_owned);
}
