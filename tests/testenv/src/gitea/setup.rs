//! Provisions a fresh Gitea: users with tokens, an org and a private repository.

use std::path::Path;

use reqwest::Method;
use serde_json::json;

use super::api::{Api, Auth, api_error};
use super::{Repo, User};
use crate::{Error, Result, io};

const ORG: &str = "household";
const REPO: &str = "ledger-config";
const TOKEN_NAME: &str = "ledgerops-tests";

/// Creates the site admin through the CLI (the API needs a first user to authenticate as), then
/// gives it a token.
pub(super) async fn admin(gitea: &Path, env: &[(&str, &Path)], api: &Api) -> Result<User> {
    let login = "ledgerops-admin";
    let password = password_of(login);
    let out = tokio::process::Command::new(gitea)
        .args([
            "admin",
            "user",
            "create",
            "--admin",
            "--must-change-password=false",
        ])
        .args(["--username", login, "--password", &password])
        .args(["--email", &email_of(login)])
        .envs(env.iter().copied())
        .output()
        .await
        .map_err(io("running `gitea admin user create`"))?;
    if !out.status.success() {
        return Err(Error::Command(
            "gitea admin user create".into(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        ));
    }
    token_for(api, login, password).await
}

/// Creates an ordinary user as `admin` and gives it a token.
pub(super) async fn user(api: &Api, admin: &User, login: &str) -> Result<User> {
    let password = password_of(login);
    // Without must_change_password=false every API call of the user answers 403.
    let body = json!({
        "username": login,
        "email": email_of(login),
        "password": password,
        "must_change_password": false,
    });
    api.call(Method::POST, "/admin/users", admin.auth(), Some(&body))
        .await?;
    token_for(api, login, password).await
}

/// Creates the org and its private repository (private, so collaborator permissions decide who
/// may read), with a README commit on `main`, and adds `collaborators` with their permission.
pub(super) async fn repo(api: &Api, admin: &User, collaborators: &[(&User, &str)]) -> Result<Repo> {
    api.call(
        Method::POST,
        "/orgs",
        admin.auth(),
        Some(&json!({"username": ORG, "visibility": "public"})),
    )
    .await?;
    let body = json!({
        "name": REPO,
        "private": true,
        "auto_init": true,
        "readme": "Default",
        "default_branch": "main",
    });
    let created = api
        .call(
            Method::POST,
            &format!("/orgs/{ORG}/repos"),
            admin.auth(),
            Some(&body),
        )
        .await?;
    let clone_url = created["clone_url"].as_str().ok_or_else(|| {
        api_error(
            "POST /orgs/{org}/repos",
            format!("no clone_url in {created}"),
        )
    })?;
    for (user, permission) in collaborators {
        let path = format!("/repos/{ORG}/{REPO}/collaborators/{}", user.login);
        let body = json!({ "permission": permission });
        api.call(Method::PUT, &path, admin.auth(), Some(&body))
            .await?;
    }
    Ok(Repo {
        owner: ORG.into(),
        name: REPO.into(),
        clone_url: clone_url.into(),
    })
}

/// Mints a token with every scope; only the user's own password may do that.
async fn token_for(api: &Api, login: &str, password: String) -> Result<User> {
    let path = format!("/users/{login}/tokens");
    let body = json!({"name": TOKEN_NAME, "scopes": ["all"]});
    let answer = api
        .call(
            Method::POST,
            &path,
            Auth::Basic(login, &password),
            Some(&body),
        )
        .await?;
    let token = answer["sha1"]
        .as_str()
        .ok_or_else(|| api_error(&path, format!("no sha1 in {answer}")))?;
    Ok(User {
        login: login.into(),
        email: email_of(login),
        password,
        token: token.into(),
    })
}

/// Test instances live on loopback only, so fixed passwords are fine (at least 8 characters).
fn password_of(login: &str) -> String {
    format!("{login}-password")
}

fn email_of(login: &str) -> String {
    format!("{login}@example.com")
}
