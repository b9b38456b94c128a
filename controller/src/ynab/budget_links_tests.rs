use super::*;
use crate::logic::budget::api_url::ApiUrlAllowlist;

fn secret(name: &str) -> SecretKeyRef {
    SecretKeyRef {
        name: name.into(),
        namespace: None,
        key: "token".into(),
    }
}

#[test]
fn a_token_is_reused_only_for_the_url_and_secret_it_was_checked_with() {
    let allowlist = ApiUrlAllowlist::parse(["http://127.0.0.1:*/v1"]).unwrap();
    let (here, there) = (
        allowlist.check("http://127.0.0.1:1000/v1").unwrap(),
        allowlist.check("http://127.0.0.1:2000/v1").unwrap(),
    );
    let links = BudgetLinks::default();
    links.set_credentials(
        "ns",
        "home",
        Credentials {
            url: here.clone(),
            secret: secret("ynab"),
            token: Token::new("t"),
        },
    );
    let cases = [
        ("ns", "home", &here, "ynab", true),
        ("ns", "home", &there, "ynab", false),
        ("ns", "home", &here, "db-creds", false),
        ("ns", "other", &here, "ynab", false),
        ("other", "home", &here, "ynab", false),
    ];
    for (ns, name, url, from, reused) in cases {
        let token = links.credentials_for(ns, name, url, &secret(from));
        assert_eq!(token.is_some(), reused, "{ns}/{name} {url} {from}");
    }
    links.forget_credentials("ns", "home");
    assert!(
        links
            .credentials_for("ns", "home", &here, &secret("ynab"))
            .is_none()
    );
}

fn pair(links: &BudgetLinks, name: &str, url: &AllowedApiUrl, token: &str) -> Permit {
    let credentials = Credentials {
        url: url.clone(),
        secret: secret("ynab"),
        token: Token::new(token),
    };
    links.set_credentials("ns", name, credentials);
    links
        .credentials_for("ns", name, url, &secret("ynab"))
        .expect("just paired")
        .1
}

#[test]
fn a_permit_is_withdrawn_by_suspension_deletion_and_another_token_only() {
    let url = ApiUrlAllowlist::default()
        .check("https://api.ynab.com/v1")
        .unwrap();
    let links = BudgetLinks::default();
    let first = pair(&links, "home", &url, "t1");
    // The same pairing again (every sync) keeps the permit queued writes hold.
    let again = pair(&links, "home", &url, "t1");
    assert!(!first.is_withdrawn() && !again.is_withdrawn());
    let rotated = pair(&links, "home", &url, "t2");
    assert!(
        first.is_withdrawn(),
        "a rotated token withdraws the old one"
    );
    assert!(!rotated.is_withdrawn());
    links.forget_credentials("ns", "home");
    assert!(rotated.is_withdrawn(), "suspension or a refused Secret");
    let other = pair(&links, "other", &url, "t3");
    links.forget("ns", "other");
    assert!(other.is_withdrawn(), "a deleted Budget");
}

#[test]
fn a_window_and_its_connections_live_while_a_budget_uses_them() {
    let url = ApiUrlAllowlist::default()
        .check("https://api.ynab.com/v1")
        .unwrap();
    let token = Token::new("shared");
    let links = BudgetLinks::default();
    pair(&links, "a", &url, "shared");
    pair(&links, "b", &url, "shared");
    let metrics = Arc::new(Metrics::default());
    let window_of = |links: &BudgetLinks| {
        let client = links.client(&url, &token, Limits::unreserved(180), metrics.clone());
        client.unwrap().window().clone()
    };
    let window = window_of(&links);
    let same = |links: &BudgetLinks| Arc::ptr_eq(&window, &window_of(links));
    // Suspending keeps the window: the hour's requests still count on resume.
    links.forget_credentials("ns", "a");
    links.forget("ns", "b");
    assert!(same(&links), "a still uses it");
    links.mirror("ns", "a");
    assert_eq!(links.budgets(), vec![BudgetKey::new("ns", "a")]);
    links.forget("ns", "a");
    assert!(links.budgets().is_empty());
    assert!(!same(&links), "nobody uses it: dropped, and made afresh");
}

#[test]
fn a_refused_token_is_remembered_until_it_is_accepted_or_the_wait_is_over() {
    let url = ApiUrlAllowlist::default()
        .check("https://api.ynab.com/v1")
        .unwrap();
    let links = BudgetLinks::default();
    let metrics = Arc::new(Metrics::default());
    let (bad, other) = (Token::new("bad"), Token::new("other"));
    for token in [&bad, &other] {
        links
            .client(&url, token, Limits::unreserved(180), metrics.clone())
            .unwrap();
    }
    let hour = Duration::from_secs(3600);
    assert!(links.refusal(&url, &bad, hour).is_none());
    let refused = YnabError::Unauthorized {
        answer: "401".into(),
    };
    links.set_refusal(&url, &bad, Some(refused.clone()));
    assert_eq!(links.refusal(&url, &bad, hour), Some(refused));
    assert!(links.refusal(&url, &other, hour).is_none(), "another token");
    assert!(
        links.refusal(&url, &bad, Duration::ZERO).is_none(),
        "the wait is over"
    );
    links.set_refusal(&url, &bad, None);
    assert!(links.refusal(&url, &bad, hour).is_none(), "accepted");
}

#[test]
fn request_use_is_shown_per_budget_while_the_budget_is_known() {
    let url = ApiUrlAllowlist::default()
        .check("https://api.ynab.com/v1")
        .unwrap();
    let links = BudgetLinks::default();
    pair(&links, "home", &url, "shared");
    pair(&links, "holiday", &url, "shared");
    let now = Timestamp::from_second(1_790_000_000).unwrap();
    assert!(
        links.request_use(now).is_empty(),
        "no window before a client"
    );
    links
        .client(
            &url,
            &Token::new("shared"),
            Limits::unreserved(150),
            Arc::new(Metrics::default()),
        )
        .unwrap();
    let window = RequestUse {
        used: 0,
        limit: 150,
    };
    let key = |name: &str| ("ns".to_owned(), name.to_owned());
    assert_eq!(
        links.request_use(now),
        BTreeMap::from([(key("holiday"), window), (key("home"), window)])
    );
    links.forget("ns", "holiday");
    assert_eq!(
        links.request_use(now),
        BTreeMap::from([(key("home"), window)])
    );
}
