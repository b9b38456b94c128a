//! Naming who wrote what a ConfigRepo applies: the commits of the revision's range, read from
//! the Gitea the repository lives on, attributed to the documents they changed.

use crate::api::config_repo::InventoryEntry;
use crate::gitea::GiteaClient;
use crate::logic::config_repo::authorship::{self, MAX_COMMITS};
use crate::logic::config_repo::documents::Document;
use crate::logic::config_repo::status::Outcome;

/// The Gitea a ConfigRepo's repository may live on.
#[derive(Clone)]
pub struct Forge {
    pub url: String,
    pub client: GiteaClient,
}

/// The range a sync applies: the revision's commit and where its new commits begin.
pub struct Range<'a> {
    pub revision: &'a str,
    pub commit: &'a str,
    pub since: Option<&'a str>,
}

/// Adds to each document the revision changes the Gitea users who wrote it; the outcome that
/// stops the sync when Gitea cannot say (nothing is applied unattributed).
pub async fn attribute(
    forge: &Forge,
    repository: &str,
    range: Range<'_>,
    documents: &mut [Document],
    inventory: &[InventoryEntry],
) -> Result<(), Outcome> {
    if !authorship::brings_commits(range.commit, range.since) {
        return Ok(());
    }
    let history = forge
        .client
        .history(repository, range.commit, range.since, MAX_COMMITS)
        .await;
    let commits = match history {
        Ok(Some(c)) => c,
        Ok(None) => {
            return Err(Outcome::FetchFailed {
                reason: "TooManyCommits",
                message: authorship::too_long(range.revision, range.since.is_none()),
            });
        }
        Err(e) => {
            return Err(Outcome::FetchFailed {
                reason: "AuthorsUnknown",
                message: authorship::unknown(range.revision, repository, &e.to_string()),
            });
        }
    };
    authorship::attribute(documents, inventory, &authorship::by_file(&commits));
    Ok(())
}
