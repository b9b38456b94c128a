//! What the proposals controller keeps between reconciles (what it found on the branches it
//! looked at, and when), and the one write every path ends with: the proposal recorded in the
//! rule's status.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::runtime::reflector::Store;
use serde_json::json;

use super::error::ProposalError;
use super::looks::Looks;
use crate::api::config_repo::ConfigRepo;
use crate::api::rule::{CategorizationRule, Proposal};
use crate::k8s::status;
use crate::logic::rule::vouch::Foreign;
use crate::pull_request::context::Context;

/// How often the open pull requests are looked at again without a push.
pub(super) const RESYNC: Duration = Duration::from_secs(300);

/// What the controller keeps between reconciles.
pub(super) struct Proposals {
    pub(super) ctx: Arc<Context>,
    pub(super) repos: Store<ConfigRepo>,
    pub(super) rules: Store<CategorizationRule>,
    /// The recorded pull requests found closed (or not the bot's): never looked at again.
    pub(super) settled: Mutex<HashSet<String>>,
    /// When each proposal's branch was last looked at, and the pushes to it.
    pub(super) looks: Arc<Mutex<Looks>>,
    /// What was found on each span of commits looked at (by repository, the rule's file and
    /// key, first and last commit): a span never changes, so it is read once.
    pub(super) seen: Mutex<HashMap<String, Vec<Foreign>>>,
}

/// Records `proposal` in the rule's status, unless the rule changed since it was read.
pub(super) async fn record(
    p: &Proposals,
    rule: &CategorizationRule,
    proposal: &Proposal,
) -> Result<(), ProposalError> {
    status::apply_as(
        &p.ctx.client,
        rule,
        &json!({ "proposal": proposal }),
        status::PROPOSAL_FIELD_MANAGER,
        true,
    )
    .await?;
    Ok(())
}
