//! The simulator against the official YNAB spec (1.86.0): every endpoint and error case is called
//! and its body validated against the schema the spec's `paths` entry names for that status; plus
//! functional checks of delta, bulk PATCH, out-of-band edits, faults, counters, rate limit and
//! the state file.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use reqwest::Method;
use serde_json::{Value, json};
use ynab_sim::demo::{self, CARD, CHECKING, PLAN_ID, TOKEN, TRACKING, uuid_for};
use ynab_sim::{
    DropFault, Fixture, RecordKind, RequestMatch, RunningSim, SimConfig, SimControl, Simulator,
    StatusFault,
};

/// The official YNAB OpenAPI spec 1.86.0, vendored byte for byte so the suite runs wherever the
/// repository is cloned.
const SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/spec/ynab-openapi-1.86.0.yaml");
const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/demo-budget.json"
);
/// The simulated "now" of every test, so the fixture's months stay inside the default window.
const NOW: &str = "2026-09-30T12:00:00Z";

// ---------- the spec as a validator ----------

struct Spec {
    doc: Value,
    validators: Mutex<HashMap<String, &'static jsonschema::Validator>>,
}

/// OpenAPI 3.0's `nullable: true` (left on `default_plan` in this 3.1 spec) as JSON Schema.
fn lift_nullable(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.values_mut().for_each(lift_nullable);
            if map.remove("nullable") == Some(Value::Bool(true)) {
                let inner = Value::Object(std::mem::take(map));
                map.insert("anyOf".into(), json!([{"type": "null"}, inner]));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(lift_nullable),
        _ => {}
    }
}

fn spec() -> &'static Spec {
    static SPEC_DOC: OnceLock<Spec> = OnceLock::new();
    SPEC_DOC.get_or_init(|| {
        let text = std::fs::read_to_string(SPEC).expect("the vendored YNAB spec");
        let mut doc: Value = serde_saphyr::from_str(&text).expect("spec parses");
        lift_nullable(&mut doc);
        Spec {
            doc,
            validators: Mutex::default(),
        }
    })
}

impl Spec {
    /// A validator for `#/components/schemas/<name>`: the whole spec with its root `$ref` set.
    fn validator(&self, name: &str) -> &'static jsonschema::Validator {
        let mut cache = self.validators.lock().unwrap();
        cache.entry(name.to_string()).or_insert_with(|| {
            let mut doc = self.doc.clone();
            doc["$ref"] = json!(format!("#/components/schemas/{name}"));
            let v = jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&doc)
                .unwrap_or_else(|e| panic!("schema {name} compiles: {e}"));
            Box::leak(Box::new(v))
        })
    }

    /// The schema the spec names for this operation and status; statuses the spec does not list
    /// for it (401, 429, …) and unknown URIs carry YNAB's common `ErrorResponse`.
    fn schema_for(&self, template: &str, method: &Method, status: u16) -> String {
        let reference = self.doc["paths"][template][method.as_str().to_lowercase()]["responses"]
            [status.to_string()]["content"]["application/json"]["schema"]["$ref"]
            .as_str();
        match reference {
            Some(r) => r.trim_start_matches("#/components/schemas/").to_string(),
            None if status >= 400 => "ErrorResponse".to_string(),
            None => panic!("the spec has no {status} for {method} {template}"),
        }
    }

    fn errors(&self, schema: &str, body: &Value) -> Vec<String> {
        self.validator(schema)
            .iter_errors(body)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    }
}

// ---------- a client that validates every answer ----------

struct Api {
    sim: RunningSim,
    http: reqwest::Client,
    token: Option<String>,
}

struct Answer {
    status: u16,
    body: Value,
}

impl Answer {
    fn data(&self) -> &Value {
        &self.body["data"]
    }

    fn error_id(&self) -> &str {
        self.body["error"]["id"].as_str().unwrap_or_default()
    }
}

async fn start_with(config: SimConfig) -> Api {
    let sim = Simulator::start(config).await.expect("simulator starts");
    sim.control()
        .set_now(NOW.parse().unwrap())
        .await
        .expect("clock set");
    Api {
        sim,
        http: reqwest::Client::new(),
        token: Some(TOKEN.to_string()),
    }
}

fn demo_fixture() -> Fixture {
    serde_json::from_slice(&std::fs::read(FIXTURE).expect("demo fixture")).expect("fixture parses")
}

async fn start() -> Api {
    start_with(SimConfig {
        fixture: Some(demo_fixture()),
        ..SimConfig::default()
    })
    .await
}

impl Api {
    fn control(&self) -> SimControl {
        self.sim.control()
    }

    /// Calls `template` (a spec path) with its `{…}` parameters filled from `params`, and checks
    /// the body against the spec's schema for the answer's status.
    async fn call(
        &self,
        method: Method,
        template: &str,
        params: &[&str],
        query: &str,
        body: Option<Value>,
    ) -> Answer {
        let mut path = template.to_string();
        for value in params {
            let start = path.find('{').expect("a parameter per value");
            let end = path[start..].find('}').unwrap() + start;
            path.replace_range(start..=end, value);
        }
        let answer = self
            .raw(method.clone(), &format!("/v1{path}{query}"), body)
            .await;
        let schema = spec().schema_for(template, &method, answer.status);
        let errors = spec().errors(&schema, &answer.body);
        assert!(
            errors.is_empty(),
            "{method} {path}{query} → {} does not match {schema}:\n{}",
            answer.status,
            errors.join("\n")
        );
        answer
    }

    async fn get(&self, template: &str, params: &[&str], query: &str) -> Answer {
        self.call(Method::GET, template, params, query, None).await
    }

    /// A request without spec validation (for paths the spec does not have).
    async fn raw(&self, method: Method, path: &str, body: Option<Value>) -> Answer {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.sim.base_url()));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("an answer");
        let status = response.status().as_u16();
        let body = response.json().await.expect("a JSON body");
        Answer { status, body }
    }

    async fn transaction(&self, id: &str) -> Value {
        let a = self
            .get(
                "/plans/{plan_id}/transactions/{transaction_id}",
                &[PLAN_ID, id],
                "",
            )
            .await;
        assert_eq!(a.status, 200);
        a.data()["transaction"].clone()
    }
}

fn account(name: &str) -> String {
    uuid_for("account", name)
}

fn category(name: &str) -> String {
    uuid_for("category", name)
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

const TXS: &str = "/plans/{plan_id}/transactions";
const TX: &str = "/plans/{plan_id}/transactions/{transaction_id}";

// ---------- the fixture ----------

#[test]
fn demo_fixture_file_is_the_generators_output() {
    let file = std::fs::read_to_string(FIXTURE).unwrap();
    assert!(
        file == demo::render(),
        "examples/demo-budget.json is stale: run `cargo run -p ynab-sim --bin gen-demo`"
    );
}

// ---------- the validator is live ----------

#[tokio::test]
async fn validator_rejects_wrong_bodies() {
    let api = start().await;
    let good = api.get(TX, &[PLAN_ID, "tx-048"], "").await.body;
    let response = spec().schema_for(TX, &Method::GET, 200);
    assert_eq!(response, "TransactionResponse");
    assert!(spec().errors(&response, &good).is_empty());

    let mut amount_as_string = good.clone();
    amount_as_string["data"]["transaction"]["amount"] = json!("-8.40");
    assert!(!spec().errors(&response, &amount_as_string).is_empty());

    let mut missing_required = good.clone();
    missing_required["data"]["transaction"]
        .as_object_mut()
        .unwrap()
        .remove("account_name");
    assert!(!spec().errors(&response, &missing_required).is_empty());

    let mut bad_uuid = good.clone();
    bad_uuid["data"]["transaction"]["account_id"] = json!("not-a-uuid");
    assert!(
        !spec().errors(&response, &bad_uuid).is_empty(),
        "format validation is on"
    );

    let mut bad_enum = good;
    bad_enum["data"]["transaction"]["cleared"] = json!("Cleared");
    assert!(!spec().errors(&response, &bad_enum).is_empty());
    assert!(
        !spec()
            .errors("ErrorResponse", &json!({"error": {"id": "404"}}))
            .is_empty()
    );
}

// ---------- every endpoint ----------

#[tokio::test]
async fn read_endpoints_match_the_spec() {
    let api = start().await;
    let user = api.get("/user", &[], "").await;
    assert_eq!(user.status, 200);

    let plans = api.get("/plans", &[], "").await;
    assert_eq!(plans.data()["plans"][0]["id"], PLAN_ID);
    assert!(plans.data()["default_plan"].is_null());
    let with_accounts = api.get("/plans", &[], "?include_accounts=true").await;
    assert_eq!(
        with_accounts.data()["plans"][0]["accounts"]
            .as_array()
            .unwrap()
            .len(),
        4
    );

    for plan in [PLAN_ID, "last-used"] {
        let full = api.get("/plans/{plan_id}", &[plan], "").await;
        assert_eq!(full.status, 200);
        assert_eq!(
            full.data()["plan"]["transactions"]
                .as_array()
                .unwrap()
                .len(),
            283
        );
    }
    let settings = api.get("/plans/{plan_id}/settings", &[PLAN_ID], "").await;
    assert_eq!(
        settings.data()["settings"]["currency_format"]["iso_code"],
        "EUR"
    );

    let accounts = api.get("/plans/{plan_id}/accounts", &[PLAN_ID], "").await;
    let list = accounts.data()["accounts"].as_array().unwrap();
    assert_eq!(list.len(), 4);
    assert!(list.iter().any(|a| a["on_budget"] == false));
    let one = api
        .get(
            "/plans/{plan_id}/accounts/{account_id}",
            &[PLAN_ID, &account(CHECKING)],
            "",
        )
        .await;
    assert_eq!(one.data()["account"]["name"], CHECKING);

    let categories = api.get("/plans/{plan_id}/categories", &[PLAN_ID], "").await;
    let groups = categories.data()["category_groups"].as_array().unwrap();
    let internal = groups
        .iter()
        .find(|g| g["name"] == "Internal Master Category")
        .unwrap();
    assert_eq!(internal["internal"], true);
    assert_eq!(ids(&internal["categories"]).len(), 2);
    let groceries = category("Groceries");
    let one = api
        .get(
            "/plans/{plan_id}/categories/{category_id}",
            &[PLAN_ID, &groceries],
            "",
        )
        .await;
    assert_eq!(one.data()["category"]["name"], "Groceries");
    let month_category = "/plans/{plan_id}/months/{month}/categories/{category_id}";
    let in_july = api
        .get(month_category, &[PLAN_ID, "2026-07-01", &groceries], "")
        .await;
    assert_eq!(in_july.data()["category"]["budgeted"], 650_000);
    assert!(in_july.data()["category"]["activity"].as_i64().unwrap() < 0);

    let payees = api.get("/plans/{plan_id}/payees", &[PLAN_ID], "").await;
    let payee_id = payees.data()["payees"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let one = api
        .get(
            "/plans/{plan_id}/payees/{payee_id}",
            &[PLAN_ID, &payee_id],
            "",
        )
        .await;
    assert_eq!(one.status, 200);

    let months = api.get("/plans/{plan_id}/months", &[PLAN_ID], "").await;
    assert_eq!(months.data()["months"].as_array().unwrap().len(), 3);
    for month in ["2026-08-01", "current"] {
        let one = api
            .get("/plans/{plan_id}/months/{month}", &[PLAN_ID, month], "")
            .await;
        assert_eq!(one.status, 200);
        assert!(one.data()["month"]["categories"].as_array().unwrap().len() >= 20);
    }
    let september = api
        .get(
            "/plans/{plan_id}/months/{month}",
            &[PLAN_ID, "2026-09-01"],
            "",
        )
        .await;
    assert!(september.data()["month"]["income"].as_i64().unwrap() > 0);
}

#[tokio::test]
async fn transaction_lists_filter_like_ynab() {
    let api = start().await;
    let all = api.get(TXS, &[PLAN_ID], "").await;
    assert_eq!(all.data()["transactions"].as_array().unwrap().len(), 283);
    let september = api
        .get(
            TXS,
            &[PLAN_ID],
            "?since_date=2026-09-01&until_date=2026-09-15",
        )
        .await;
    for tx in september.data()["transactions"].as_array().unwrap() {
        let date = tx["date"].as_str().unwrap();
        assert!(("2026-09-01"..="2026-09-15").contains(&date), "{date}");
    }
    let uncategorized = api.get(TXS, &[PLAN_ID], "?type=uncategorized").await;
    let found = ids(&uncategorized.data()["transactions"]);
    assert!(found.contains(&"tx-048".to_string()) && found.contains(&"tx-049".to_string()));
    for tx in uncategorized.data()["transactions"].as_array().unwrap() {
        assert!(tx["category_id"].is_null() && tx["transfer_account_id"].is_null());
    }
    let unapproved = api.get(TXS, &[PLAN_ID], "?type=unapproved").await;
    assert!(
        unapproved.data()["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["approved"] == false)
    );
    // "today" one year on: the default since_date leaves every fixture transaction out.
    api.control()
        .set_now("2027-10-01T00:00:00Z".parse().unwrap())
        .await
        .unwrap();
    let later = api.get(TXS, &[PLAN_ID], "").await;
    let left = ids(&later.data()["transactions"]);
    assert!(left.is_empty(), "{left:?}");
    let bad = api.get(TXS, &[PLAN_ID], "?type=weird").await;
    assert_eq!((bad.status, bad.error_id()), (400, "400"));
}

#[tokio::test]
async fn transaction_writes_match_the_spec() {
    let api = start().await;
    let groceries = category("Groceries");
    let transport = category("Transport");
    // PUT one
    let put = api
        .call(
            Method::PUT,
            TX,
            &[PLAN_ID, "tx-048"],
            "",
            Some(json!({"transaction": {"category_id": groceries, "approved": true}})),
        )
        .await;
    assert_eq!(put.status, 200);
    assert_eq!(put.data()["transaction"]["category_name"], "Groceries");
    assert_eq!(
        put.data()["transaction"]["memo"],
        Value::Null,
        "unsent fields unchanged"
    );

    // bulk PATCH, by id and by import_id
    let patch = api
        .call(
            Method::PATCH,
            TXS,
            &[PLAN_ID],
            "",
            Some(json!({"transactions": [
                {"id": "tx-049", "category_id": transport},
                {"import_id": "YNAB:-8400:2026-09-16:1", "memo": "pain + croissants"},
            ]})),
        )
        .await;
    assert_eq!(patch.status, 200);
    assert_eq!(patch.data()["transaction_ids"], json!(["tx-049", "tx-048"]));

    let unknown = api
        .call(
            Method::PATCH,
            TXS,
            &[PLAN_ID],
            "",
            Some(json!({"transactions": [
            {"id": "tx-049", "memo": "never applied"}, {"id": "tx-999", "memo": "x"}]})),
        )
        .await;
    assert_eq!((unknown.status, unknown.error_id()), (400, "400"));
    assert_eq!(
        unknown.body["error"]["detail"],
        "transaction does not exist in this budget (index: 1)"
    );
    assert_eq!(
        api.transaction("tx-049").await["memo"],
        Value::Null,
        "nothing applied"
    );

    // POST one, then the same import_id again
    let new = json!({"account_id": account(CHECKING), "date": "2026-09-29", "amount": -12_340,
        "payee_name": "CARTE 29/09 MONOPRIX PARIS 11", "category_id": groceries,
        "import_id": "YNAB:-12340:2026-09-29:1"});
    let created = api
        .call(
            Method::POST,
            TXS,
            &[PLAN_ID],
            "",
            Some(json!({"transaction": new})),
        )
        .await;
    assert_eq!(created.status, 201);
    assert_eq!(created.data()["transaction"]["cleared"], "uncleared");
    assert_eq!(created.data()["transaction"]["approved"], false);
    let again = api
        .call(
            Method::POST,
            TXS,
            &[PLAN_ID],
            "",
            Some(json!({"transaction": new})),
        )
        .await;
    assert_eq!((again.status, again.error_id()), (409, "409"));

    // POST many: the duplicate is skipped and reported
    let second = json!({"account_id": account(CARD), "date": "2026-09-28", "amount": -5_000, "payee_name": "RAIL CO"});
    let many = api
        .call(
            Method::POST,
            TXS,
            &[PLAN_ID],
            "",
            Some(json!({"transactions": [new, second]})),
        )
        .await;
    assert_eq!(many.status, 201);
    assert_eq!(
        many.data()["duplicate_import_ids"],
        json!(["YNAB:-12340:2026-09-29:1"])
    );
    assert_eq!(many.data()["transaction_ids"].as_array().unwrap().len(), 1);

    // future dates are refused
    let future = json!({"transaction": {"account_id": account(CHECKING), "date": "2026-10-02", "amount": -1}});
    let refused = api
        .call(Method::POST, TXS, &[PLAN_ID], "", Some(future))
        .await;
    assert_eq!(refused.status, 400);

    // DELETE
    let deleted = api
        .call(Method::DELETE, TX, &[PLAN_ID, "tx-049"], "", None)
        .await;
    assert_eq!(deleted.data()["transaction"]["deleted"], true);
    let gone = api
        .call(
            Method::PUT,
            TX,
            &[PLAN_ID, "tx-049"],
            "",
            Some(json!({"transaction": {"memo": "x"}})),
        )
        .await;
    assert_eq!((gone.status, gone.error_id()), (404, "404.2"));

    // month category PATCH changes only budgeted
    let month_category = "/plans/{plan_id}/months/{month}/categories/{category_id}";
    let assigned = api
        .call(
            Method::PATCH,
            month_category,
            &[PLAN_ID, "2026-09-01", &groceries],
            "",
            Some(json!({"category": {"budgeted": 700_000, "name": "ignored"}})),
        )
        .await;
    assert_eq!(assigned.status, 200);
    assert_eq!(assigned.data()["category"]["budgeted"], 700_000);
    assert_eq!(assigned.data()["category"]["name"], "Groceries");
}

#[tokio::test]
async fn errors_match_the_spec() {
    let mut api = start().await;
    let unknown_plan = api
        .get(TXS, &["0f0f0f0f-0000-4000-8000-000000000000"], "")
        .await;
    assert_eq!(
        (unknown_plan.status, unknown_plan.error_id()),
        (404, "404.2")
    );
    assert_eq!(unknown_plan.body["error"]["name"], "resource_not_found");
    let unknown_tx = api.get(TX, &[PLAN_ID, "tx-999"], "").await;
    assert_eq!(unknown_tx.error_id(), "404.2");

    let unknown_uri = api.raw(Method::GET, "/v1/plans/x/nothing-here", None).await;
    assert_eq!((unknown_uri.status, unknown_uri.error_id()), (404, "404.1"));
    assert!(spec().errors("ErrorResponse", &unknown_uri.body).is_empty());
    let single_patch = api
        .raw(
            Method::PATCH,
            &format!("/v1/plans/{PLAN_ID}/transactions/tx-048"),
            Some(json!({"transaction": {}})),
        )
        .await;
    assert_eq!(
        (single_patch.status, single_patch.error_id()),
        (404, "404.1")
    );

    let bad_body = api
        .raw(
            Method::PUT,
            &format!("/v1/plans/{PLAN_ID}/transactions/tx-048"),
            Some(json!({"transaction": {"amount": "1.00"}})),
        )
        .await;
    assert_eq!((bad_body.status, bad_body.error_id()), (400, "400"));

    api.token = Some("wrong".to_string());
    let wrong = api.get("/user", &[], "").await;
    assert_eq!((wrong.status, wrong.error_id()), (401, "401"));
    assert_eq!(wrong.body["error"]["name"], "not_authorized");
    api.token = None;
    let missing = api.get("/plans", &[], "").await;
    assert_eq!(missing.status, 401);
}

#[tokio::test]
async fn rate_limit_is_a_rolling_hour_per_token() {
    let api = start().await;
    for _ in 0..200 {
        assert_eq!(api.raw(Method::GET, "/v1/user", None).await.status, 200);
    }
    let limited = api.get("/user", &[], "").await;
    assert_eq!((limited.status, limited.error_id()), (429, "429"));
    assert_eq!(limited.body["error"]["name"], "too_many_requests");
    // Controls are never limited nor counted.
    let counters = api.control().counters().await.unwrap();
    assert_eq!(counters.endpoint("GET /v1/user"), 201);
    assert_eq!(counters.status("429"), 1);
    api.control().advance_clock(3599).await.unwrap();
    assert_eq!(api.raw(Method::GET, "/v1/user", None).await.status, 429);
    api.control().advance_clock(2).await.unwrap();
    assert_eq!(api.raw(Method::GET, "/v1/user", None).await.status, 200);
}

// ---------- behaviour ----------

#[tokio::test]
async fn delta_returns_only_changes_including_deletions() {
    let api = start().await;
    let before = api.get(TXS, &[PLAN_ID], "").await;
    let knowledge = before.data()["server_knowledge"].as_i64().unwrap();
    api.call(
        Method::PUT,
        TX,
        &[PLAN_ID, "tx-048"],
        "",
        Some(json!({"transaction": {"memo": "edited"}})),
    )
    .await;
    api.call(Method::DELETE, TX, &[PLAN_ID, "tx-049"], "", None)
        .await;

    let delta = api
        .get(
            TXS,
            &[PLAN_ID],
            &format!("?last_knowledge_of_server={knowledge}"),
        )
        .await;
    assert_eq!(ids(&delta.data()["transactions"]), ["tx-048", "tx-049"]);
    assert_eq!(delta.data()["transactions"][1]["deleted"], true);
    assert_eq!(delta.data()["server_knowledge"], knowledge + 2);
    let plain = api.get(TXS, &[PLAN_ID], "").await;
    assert!(!ids(&plain.data()["transactions"]).contains(&"tx-049".to_string()));

    // The edit also moved the account and month in YNAB's eyes; untouched lists stay empty.
    let accounts = api
        .get(
            "/plans/{plan_id}/accounts",
            &[PLAN_ID],
            &format!("?last_knowledge_of_server={knowledge}"),
        )
        .await;
    assert_eq!(accounts.data()["accounts"].as_array().unwrap().len(), 1);
    let payees = api
        .get(
            "/plans/{plan_id}/payees",
            &[PLAN_ID],
            &format!("?last_knowledge_of_server={knowledge}"),
        )
        .await;
    assert!(payees.data()["payees"].as_array().unwrap().is_empty());
    let plan = api
        .get(
            "/plans/{plan_id}",
            &[PLAN_ID],
            &format!("?last_knowledge_of_server={knowledge}"),
        )
        .await;
    assert_eq!(
        plan.data()["plan"]["transactions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn bulk_patch_is_one_request_and_one_knowledge_step() {
    let api = start().await;
    let knowledge = api.get(TXS, &[PLAN_ID], "").await.data()["server_knowledge"]
        .as_i64()
        .unwrap();
    api.control().reset_counters().await.unwrap();
    let uncategorized = api.get(TXS, &[PLAN_ID], "?type=uncategorized").await;
    let items: Vec<Value> = ids(&uncategorized.data()["transactions"])
        .iter()
        .map(|id| json!({"id": id, "category_id": category("Groceries"), "approved": true}))
        .collect();
    assert!(items.len() >= 5);
    let patched = api
        .call(
            Method::PATCH,
            TXS,
            &[PLAN_ID],
            "",
            Some(json!({"transactions": items})),
        )
        .await;
    assert_eq!(patched.data()["server_knowledge"], knowledge + 1);
    assert_eq!(
        patched.data()["transactions"].as_array().unwrap().len(),
        items.len()
    );
    let left = api.get(TXS, &[PLAN_ID], "?type=uncategorized").await;
    assert!(left.data()["transactions"].as_array().unwrap().is_empty());
    let counters = api.control().counters().await.unwrap();
    assert_eq!(
        counters.endpoint("PATCH /v1/plans/{plan_id}/transactions"),
        1
    );
    assert_eq!(counters.endpoint("GET /v1/plans/{plan_id}/transactions"), 2);
    assert_eq!(counters.by_token.get(TOKEN), Some(&3));
    assert_eq!(counters.status("200"), 3);
}

#[tokio::test]
async fn out_of_band_edits_show_in_the_next_delta() {
    let api = start().await;
    let ctl = api.control();
    let knowledge = api.get(TXS, &[PLAN_ID], "").await.data()["server_knowledge"]
        .as_i64()
        .unwrap();
    let edited = ctl
        .edit(
            PLAN_ID,
            RecordKind::Transaction,
            "tx-049",
            &json!({"category_id": category("Transport"), "memo": "spouse"}),
        )
        .await
        .unwrap();
    assert_eq!(edited.server_knowledge, knowledge + 1);
    let delta = api
        .get(
            TXS,
            &[PLAN_ID],
            &format!("?last_knowledge_of_server={knowledge}"),
        )
        .await;
    assert_eq!(ids(&delta.data()["transactions"]), ["tx-049"]);
    assert_eq!(
        delta.data()["transactions"][0]["category_name"],
        "Transport"
    );

    ctl.edit(
        PLAN_ID,
        RecordKind::Category,
        &category("Groceries"),
        &json!({"name": "Courses"}),
    )
    .await
    .unwrap();
    let categories = api
        .get(
            "/plans/{plan_id}/categories",
            &[PLAN_ID],
            &format!("?last_knowledge_of_server={}", knowledge + 1),
        )
        .await;
    let changed: Vec<&Value> = categories.data()["category_groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["categories"].as_array().unwrap())
        .collect();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["name"], "Courses");

    let created = ctl
        .create_transaction(PLAN_ID, &serde_json::from_value(json!({"account_id": account(CHECKING), "date": "2026-09-30", "amount": -2500, "payee_name": "Marché"})).unwrap())
        .await
        .unwrap();
    ctl.delete_transaction(PLAN_ID, "tx-048").await.unwrap();
    let delta = api
        .get(
            TXS,
            &[PLAN_ID],
            &format!("?last_knowledge_of_server={}", knowledge + 2),
        )
        .await;
    let changed = ids(&delta.data()["transactions"]);
    assert!(
        changed.contains(&created.transaction.summary.id)
            && changed.contains(&"tx-048".to_string())
    );
    // Controls are not counted.
    assert_eq!(
        ctl.counters()
            .await
            .unwrap()
            .endpoint("PATCH /v1/plans/{plan_id}/transactions"),
        0
    );
}

#[tokio::test]
async fn ynab_rules_for_transfers_splits_and_tracking_accounts() {
    let api = start().await;
    let all = api.get(TXS, &[PLAN_ID], "").await;
    let list = all.data()["transactions"].as_array().unwrap();
    let find = |pred: &dyn Fn(&Value) -> bool| {
        list.iter().find(|t| pred(t)).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let on_budget_transfer = find(&|t| t["transfer_account_id"] == json!(account(CARD)));
    let split = find(&|t| !t["subtransactions"].as_array().unwrap().is_empty());
    let tracking = find(&|t| {
        t["account_id"] == json!(account(TRACKING)) && t["transfer_account_id"].is_null()
    });
    let reconciled = find(&|t| t["cleared"] == "reconciled");
    let groceries = category("Groceries");

    for id in [&on_budget_transfer, &tracking] {
        let put = api
            .call(
                Method::PUT,
                TX,
                &[PLAN_ID, id],
                "",
                Some(json!({"transaction": {"category_id": groceries}})),
            )
            .await;
        assert_eq!(put.status, 200);
        assert!(
            put.data()["transaction"]["category_id"].is_null(),
            "{id} keeps no category"
        );
    }
    let resplit = api
        .call(
            Method::PUT,
            TX,
            &[PLAN_ID, &split],
            "",
            Some(json!({"transaction": {"subtransactions": [{"amount": -1}]}})),
        )
        .await;
    assert_eq!(resplit.status, 400);
    let credit_card_payment = api
        .call(
            Method::PUT,
            TX,
            &[PLAN_ID, "tx-048"],
            "",
            Some(json!({"transaction": {"category_id": category(CARD)}})),
        )
        .await;
    assert!(
        credit_card_payment.data()["transaction"]["category_id"].is_null(),
        "CCP category ignored"
    );
    let split_new = api
        .call(Method::PUT, TX, &[PLAN_ID, "tx-049"], "", Some(json!({"transaction": {"category_id": null, "subtransactions": [
            {"amount": -40_000, "category_id": category("Transport")}, {"amount": -5_000, "category_id": category("Restaurants")}]}})))
        .await;
    assert_eq!(split_new.data()["transaction"]["category_name"], "Split");
    assert_eq!(
        split_new.data()["transaction"]["subtransactions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let reconciled_edit = api
        .call(
            Method::PUT,
            TX,
            &[PLAN_ID, &reconciled],
            "",
            Some(json!({"transaction": {"memo": "ok"}})),
        )
        .await;
    assert_eq!(
        reconciled_edit.data()["transaction"]["cleared"],
        "reconciled"
    );

    // A new transfer gets its mirrored other side.
    let savings_payee = api
        .get(
            "/plans/{plan_id}/accounts/{account_id}",
            &[PLAN_ID, &account(demo::SAVINGS)],
            "",
        )
        .await
        .data()["account"]["transfer_payee_id"]
        .clone();
    let created = api
        .call(Method::POST, TXS, &[PLAN_ID], "", Some(json!({"transaction": {"account_id": account(CHECKING), "date": "2026-09-30", "amount": -100_000, "payee_id": savings_payee, "category_id": groceries}})))
        .await;
    let tx = &created.data()["transaction"];
    assert!(tx["category_id"].is_null());
    let other = api
        .transaction(tx["transfer_transaction_id"].as_str().unwrap())
        .await;
    assert_eq!(other["amount"], 100_000);
    assert_eq!(other["account_id"], json!(account(demo::SAVINGS)));
}

#[tokio::test]
async fn faults_answer_statuses_and_drop_after_writing() {
    let api = start().await;
    let ctl = api.control();
    ctl.inject_status(&StatusFault {
        status: 503,
        count: 1,
        detail: None,
        only: RequestMatch {
            method: Some("GET".into()),
            path: Some("/v1/plans/{plan_id}/transactions".into()),
            body_contains: None,
        },
    })
    .await
    .unwrap();
    assert_eq!(
        api.get("/user", &[], "").await.status,
        200,
        "other requests unaffected"
    );
    let failed = api.get(TXS, &[PLAN_ID], "").await;
    assert_eq!((failed.status, failed.error_id()), (503, "503"));
    assert_eq!(failed.body["error"]["name"], "service_unavailable");
    assert_eq!(
        api.get(TXS, &[PLAN_ID], "").await.status,
        200,
        "only the next one"
    );

    ctl.inject_status(&StatusFault {
        status: 500,
        count: 2,
        detail: Some("boom".into()),
        only: RequestMatch::default(),
    })
    .await
    .unwrap();
    assert_eq!(api.get("/user", &[], "").await.error_id(), "500");
    assert_eq!(
        api.get("/user", &[], "").await.body["error"]["detail"],
        "boom"
    );
    assert_eq!(api.get("/user", &[], "").await.status, 200);

    ctl.drop_after_write(&DropFault {
        count: 1,
        hold_ms: 0,
        only: RequestMatch {
            method: Some("PUT".into()),
            path: None,
            body_contains: None,
        },
    })
    .await
    .unwrap();
    let sent = api
        .http
        .put(format!(
            "{}/v1/plans/{PLAN_ID}/transactions/tx-048",
            api.sim.base_url()
        ))
        .bearer_auth(TOKEN)
        .json(&json!({"transaction": {"memo": "landed"}}))
        .send()
        .await;
    let error = sent.expect_err("no HTTP answer, only a broken connection");
    assert!(error.status().is_none());
    assert_eq!(
        api.transaction("tx-048").await["memo"],
        "landed",
        "the write landed"
    );
    assert_eq!(ctl.counters().await.unwrap().status("dropped"), 1);

    ctl.set_latency(150).await.unwrap();
    let started = std::time::Instant::now();
    api.get("/user", &[], "").await;
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    ctl.clear_faults().await.unwrap();
    assert_eq!(ctl.faults().await.unwrap(), ynab_sim::Faults::default());
}

#[tokio::test]
async fn legacy_budget_paths_use_the_old_names() {
    let api = start().await;
    let list = api.raw(Method::GET, "/v1/budgets", None).await;
    assert_eq!(list.status, 200);
    assert!(list.data()["budgets"].is_array() && list.data().get("default_budget").is_some());
    assert!(list.data().get("plans").is_none());
    let one = api
        .raw(Method::GET, &format!("/v1/budgets/{PLAN_ID}"), None)
        .await;
    assert_eq!(one.data()["budget"]["id"], PLAN_ID);
    let txs = api
        .raw(
            Method::GET,
            &format!("/v1/budgets/{PLAN_ID}/transactions?type=uncategorized"),
            None,
        )
        .await;
    assert!(!txs.data()["transactions"].as_array().unwrap().is_empty());
    let counters = api.control().counters().await.unwrap();
    assert_eq!(
        counters.endpoint("GET /v1/budgets/{budget_id}/transactions"),
        1
    );
}

#[tokio::test]
async fn reset_goes_back_to_the_fixture() {
    let api = start().await;
    api.call(Method::DELETE, TX, &[PLAN_ID, "tx-048"], "", None)
        .await;
    api.control().reset().await.unwrap();
    assert_eq!(api.transaction("tx-048").await["deleted"], false);
    api.control().load_fixture(&demo_fixture()).await.unwrap();
    assert_eq!(
        api.get(TXS, &[PLAN_ID], "").await.data()["server_knowledge"],
        100
    );
}

#[tokio::test]
async fn state_file_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("state.json");
    let first = start_with(SimConfig {
        fixture: Some(demo_fixture()),
        state_file: Some(state_file.clone()),
        ..SimConfig::default()
    })
    .await;
    let put = first
        .call(
            Method::PUT,
            TX,
            &[PLAN_ID, "tx-048"],
            "",
            Some(json!({"transaction": {"memo": "kept"}})),
        )
        .await;
    let knowledge = put.data()["server_knowledge"].clone();
    first.sim.stop();

    let second = start_with(SimConfig {
        state_file: Some(state_file),
        ..SimConfig::default()
    })
    .await;
    let tx = second.transaction("tx-048").await;
    assert_eq!(tx["memo"], "kept");
    assert_eq!(
        second.get(TXS, &[PLAN_ID], "").await.data()["server_knowledge"],
        knowledge
    );
}

#[tokio::test]
async fn the_journal_tells_a_persons_edit_from_a_write_and_keeps_what_each_replaced() {
    let api = start().await;
    let ctl = api.control();
    let before = api.transaction("tx-047").await["category_id"].clone();
    ctl.edit(
        PLAN_ID,
        RecordKind::Transaction,
        "tx-047",
        &json!({"memo": "spouse"}),
    )
    .await
    .unwrap();
    let patched = api
        .http
        .patch(format!(
            "{}/v1/plans/{PLAN_ID}/transactions",
            api.sim.base_url()
        ))
        .bearer_auth(TOKEN)
        .json(&json!({"transactions": [{"id": "tx-047", "category_id": category("Transport")}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);

    let journal = ctl.journal_after(0).await.unwrap();
    let changes: Vec<(&ynab_sim::By, &ynab_sim::Touch)> = journal
        .iter()
        .filter_map(|e| match &e.event {
            ynab_sim::Event::Change { by, touched, .. } => Some((by, &touched[0])),
            ynab_sim::Event::Request { .. } => None,
        })
        .collect();
    assert_eq!(changes.len(), 2, "{journal:?}");
    let (by, edit) = changes[0];
    assert_eq!(*by, ynab_sim::By::Person);
    assert_eq!(edit.after.summary.memo.as_deref(), Some("spouse"));
    assert_eq!(
        edit.before.as_ref().unwrap().summary.category_id.as_deref(),
        before.as_str()
    );
    let (by, write) = changes[1];
    assert_eq!(*by, ynab_sim::By::Api);
    assert_eq!(write.before.as_ref(), Some(&edit.after));
    assert_eq!(write.after.summary.category_id, Some(category("Transport")));
    let requests: Vec<_> = journal
        .iter()
        .filter_map(|e| match &e.event {
            ynab_sim::Event::Request {
                endpoint, status, ..
            } => Some((endpoint.as_str(), status.as_str())),
            ynab_sim::Event::Change { .. } => None,
        })
        .collect();
    assert!(
        requests.contains(&("PATCH /v1/plans/{plan_id}/transactions", "200")),
        "{requests:?}"
    );
    let last = journal.last().unwrap().seq;
    assert!(ctl.journal_after(last).await.unwrap().is_empty());
}
