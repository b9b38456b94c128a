//! The pre-1.79 `/v1/budgets/...` paths, which YNAB still serves: the request is rewritten to
//! `/v1/plans/...` before routing, and the response's member names get their old spelling
//! (`plans`→`budgets`, `plan`→`budget`, `default_plan`→`default_budget`).

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::Uri;
use axum::http::header::CONTENT_LENGTH;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

/// Marks a request that came in under `/v1/budgets`.
#[derive(Debug, Clone, Copy)]
pub struct Legacy;

const RENAMES: [(&str, &str); 3] = [
    ("plans", "budgets"),
    ("plan", "budget"),
    ("default_plan", "default_budget"),
];

impl Legacy {
    /// A `/v1/plans` route template as the old path spells it.
    pub fn spell(template: &str) -> String {
        template
            .replacen("/v1/plans", "/v1/budgets", 1)
            .replace("{plan_id}", "{budget_id}")
    }
}

fn rewrite(uri: &Uri) -> Option<Uri> {
    let rest = uri.path().strip_prefix("/v1/budgets")?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    format!("/v1/plans{rest}{query}").parse().ok()
}

pub async fn layer(mut req: Request, next: Next) -> Response {
    let Some(uri) = rewrite(req.uri()) else {
        return next.run(req).await;
    };
    *req.uri_mut() = uri;
    req.extensions_mut().insert(Legacy);
    let (mut parts, body) = next.run(req).await.into_parts();
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let Ok(mut json) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    if let Some(data) = json.get_mut("data").and_then(Value::as_object_mut) {
        for (new, old) in RENAMES {
            if let Some(v) = data.remove(new) {
                data.insert(old.to_string(), v);
            }
        }
    }
    parts.headers.remove(CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(json.to_string()))
}
