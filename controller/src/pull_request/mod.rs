//! What ledgerops says in the config repositories' pull requests and issues of its own accord,
//! outside any `/agent` command: what became of the plans a ConfigRepo applied
//! ([`feedback`]), learned rules proposed for blessing ([`proposals`]), each
//! ApprovalRequest that waits for a person, as an issue that follows it to its end ([`inbox`]),
//! and each Budget's morning queue ([`digest`]). Each is a controller of the agent's
//! namespace that speaks as the bot, only in the allowed repositories, on the leader.

pub mod context;
pub mod digest;
pub mod feedback;
pub mod inbox;
pub mod proposals;

use std::sync::Arc;

use tokio::sync::broadcast;
use tracing::{Instrument, info_span};

use crate::agent::options::AgentOptions;
use crate::gitea::GiteaClient;
use crate::k8s::watches::Watches;
use crate::logic::config_repo::push::Push;
use context::Context;

/// Subscribes to the shared watches and spawns the four controllers: on the leader only. The
/// handle resolves once all four have stopped, after shutdown.
pub fn start(
    options: &AgentOptions,
    gitea: GiteaClient,
    pushes: broadcast::Receiver<Push>,
    ctx: &crate::reconcile::Context,
    watches: &Watches,
) -> tokio::task::JoinHandle<()> {
    let feedback_watched = feedback::Watched::subscribe(watches);
    let proposals_watched = proposals::Watched::subscribe(watches, pushes);
    let inbox_watched = inbox::Watched::subscribe(watches);
    let digest_watched = digest::Watched::subscribe(watches);
    let ctx = Arc::new(Context::new(options, gitea, ctx));
    let feedback = tokio::spawn(
        feedback::run(ctx.clone(), feedback_watched).instrument(info_span!("feedback")),
    );
    let inbox =
        tokio::spawn(inbox::run(ctx.clone(), inbox_watched).instrument(info_span!("inbox")));
    let digest =
        tokio::spawn(digest::run(ctx.clone(), digest_watched).instrument(info_span!("digest")));
    let proposals =
        tokio::spawn(proposals::run(ctx, proposals_watched).instrument(info_span!("proposals")));
    tokio::spawn(async move {
        for task in [feedback, inbox, digest, proposals] {
            let _ = task.await;
        }
    })
}
