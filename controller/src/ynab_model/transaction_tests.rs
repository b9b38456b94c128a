use serde_json::json;

use super::*;

fn detail(extra: serde_json::Value) -> serde_json::Value {
    let mut v = json!({
        "id": "tx-1", "date": "2026-09-16", "amount": -8400, "memo": null,
        "cleared": "cleared", "approved": false, "flag_color": null, "flag_name": null,
        "account_id": "a", "payee_id": null, "category_id": null,
        "transfer_account_id": null, "transfer_transaction_id": null,
        "matched_transaction_id": null, "import_id": null, "import_payee_name": null,
        "import_payee_name_original": null, "debt_transaction_type": null,
        "deleted": false, "account_name": "Checking", "payee_name": null,
        "category_name": null, "subtransactions": []
    });
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v
}

#[test]
fn nullable_fields_serialize_as_null_not_omitted() {
    let tx: TransactionDetail = serde_json::from_value(detail(json!({}))).unwrap();
    let out = serde_json::to_value(&tx).unwrap();
    assert_eq!(out, detail(json!({})));
    assert!(out.get("category_id").unwrap().is_null());
    // `*_formatted` extras that YNAB adds are accepted and dropped.
    let with_extra = detail(json!({"amount_formatted": "-€8.40"}));
    assert!(serde_json::from_value::<TransactionDetail>(with_extra).is_ok());
}

#[test]
fn flag_color_empty_string_and_null_are_distinct() {
    let empty: TransactionDetail =
        serde_json::from_value(detail(json!({"flag_color": ""}))).unwrap();
    assert_eq!(empty.summary.flag_color, Some(FlagColor::Empty));
    assert_eq!(
        serde_json::to_value(&empty).unwrap()["flag_color"],
        json!("")
    );
    let null: TransactionDetail = serde_json::from_value(detail(json!({}))).unwrap();
    assert_eq!(null.summary.flag_color, None);
    let red: TransactionDetail =
        serde_json::from_value(detail(json!({"flag_color": "red"}))).unwrap();
    assert_eq!(red.summary.flag_color, Some(FlagColor::Red));
}

#[test]
fn cleared_status_is_lowercase_and_closed() {
    for (s, c) in [
        ("cleared", ClearedStatus::Cleared),
        ("uncleared", ClearedStatus::Uncleared),
        ("reconciled", ClearedStatus::Reconciled),
    ] {
        assert_eq!(
            serde_json::from_value::<ClearedStatus>(json!(s)).unwrap(),
            c
        );
        assert_eq!(serde_json::to_value(c).unwrap(), json!(s));
    }
    assert!(serde_json::from_value::<ClearedStatus>(json!("Cleared")).is_err());
}

#[test]
fn save_fields_tell_missing_from_null() {
    let item: SaveTransactionWithIdOrImportId =
        serde_json::from_value(json!({"id": "tx-1", "category_id": null, "memo": "m"})).unwrap();
    assert_eq!(item.fields.category_id, Some(None));
    assert_eq!(item.fields.memo, Some(Some("m".to_string())));
    assert_eq!(item.fields.payee_id, None);
    assert_eq!(item.fields.flag_color, None);
    // Round trip keeps the explicit null and leaves the unsent fields out.
    let out = serde_json::to_value(&item).unwrap();
    assert_eq!(out, json!({"id": "tx-1", "category_id": null, "memo": "m"}));
}

#[test]
fn missing_required_field_is_an_error() {
    let mut v = detail(json!({}));
    v.as_object_mut().unwrap().remove("cleared");
    assert!(serde_json::from_value::<TransactionDetail>(v).is_err());
}
