use super::*;

fn args(dir: &std::path::Path, token: &str, secret: &str, repos: &[&str]) -> AgentArgs {
    let token_file = dir.join("token");
    let secret_file = dir.join("secret");
    std::fs::write(&token_file, token).unwrap();
    std::fs::write(&secret_file, secret).unwrap();
    AgentArgs {
        gitea_url: Some("http://gitea.local".into()),
        gitea_repositories: repos.iter().map(|r| (*r).to_owned()).collect(),
        gitea_bot_login: Some("ledgerops-bot".into()),
        gitea_token_file: Some(token_file),
        gitea_webhook_secret_file: Some(secret_file),
        agent_namespace: "ledgerops".into(),
        agent_plans_dir: "plans".into(),
        agent_comment_resync: "5m".into(),
        agent_job_retention: "168h".into(),
    }
}

#[test]
fn debug_never_shows_the_secrets() {
    let dir = std::env::temp_dir().join(format!("ledgerops-debug-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let options = args(&dir, "tok-123", "hook-456", &["org/config"])
        .resolve()
        .unwrap()
        .expect("Gitea is configured");
    let shown = format!("{options:?}");
    assert!(
        !shown.contains("tok-123") && !shown.contains("hook-456"),
        "{shown}"
    );
}

#[test]
fn empty_secrets_and_no_repository_are_refused_at_start() {
    let dir = std::env::temp_dir().join(format!("ledgerops-options-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &str, &[&str], Option<&str>); 5] = [
        ("tok", "sec", &["o/r"], None),
        (
            "tok",
            "",
            &["o/r"],
            Some("(--gitea-webhook-secret-file) is empty"),
        ),
        (
            "tok",
            " \n\t",
            &["o/r"],
            Some("(--gitea-webhook-secret-file) is empty"),
        ),
        ("\n", "sec", &["o/r"], Some("(--gitea-token-file) is empty")),
        ("tok", "sec", &[], Some("--gitea-repository owner/name")),
    ];
    for (token, secret, repos, want) in cases {
        let got = args(&dir, token, secret, repos).resolve();
        match want {
            None => {
                let o = got.unwrap().unwrap();
                assert_eq!(o.webhook_secret, b"sec");
                assert!(o.repositories.allows("O/R"));
            }
            Some(part) => {
                let e = got.expect_err("refused");
                assert!(e.contains(part), "{e}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
