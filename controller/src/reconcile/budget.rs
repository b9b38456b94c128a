//! The Budget reconciler: keeps the plan's mirror current with one delta request per sync and
//! reports it in the status.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{Controller, WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use sha2::{Digest, Sha256};

use super::summarize::{StatusWrite, summarize_and_patch};
use super::{Context, Error};
use crate::api::budget::Budget;
use crate::k8s::secrets;
use crate::k8s::watches::{self, OnEvent, Watches};
use crate::logic::budget::api_url::AllowedApiUrl;
use crate::logic::budget::status::{self as budget_status, SyncOutcome, SyncReport};
use crate::logic::budget::sync_due::{self, Due, SyncedFor};
use crate::logic::budget::token_exposure::{self, Place};
use crate::logic::runtime::pacing::Limits;
use crate::logic::runtime::request_priority::{self, Priority};
use crate::logic::runtime::request_window::{RequestWindow, budget_of};
use crate::logic::status::conditions::{self, Observed};
use crate::logic::values::duration;
use crate::logic::values::token::Token;
use crate::ynab::budget_links::{BudgetKey, Credentials, MirrorCell, MirrorSlot};
use crate::ynab::client::SharedWindow;
use crate::ynab::error::YnabError;
use crate::ynab::mirror_sync::{self, MirrorKey};

/// Retry delay after an error that needs a person (bad token, unknown plan): slow enough never
/// to storm YNAB, quick enough to notice a fixed Secret.
const NEEDS_A_PERSON: Duration = Duration::from_secs(300);
/// Retry delay after a transient failure.
const TRANSIENT: Duration = Duration::from_secs(60);

/// Subscribes to the shared Budget watch at once; the returned future runs the controller.
pub fn run(ctx: Arc<Context>, watches: &mut Watches) -> impl Future<Output = ()> + use<> {
    let reader = watches.budgets.store();
    watches
        .budgets
        .on_event(forgetting(ctx.clone(), reader.clone()));
    // Only spec and annotation changes wake a Budget: its own status writes must not.
    let stream = watches::spec_changes(watches.budgets.subscribe(), reader.clone());
    // Metadata only: the watch wakes the Budgets that name a token Secret when it changes, is
    // deleted or loses its label (the API server reports that as a deletion), without holding
    // any token in memory. The reconcile reads the Secret itself.
    // With --token-namespace, one watch per namespace: the chart then grants Secrets only there.
    let secret_apis: Vec<Api<PartialObjectMeta<Secret>>> = if ctx.token_namespaces.is_empty() {
        vec![Api::all(ctx.client.clone())]
    } else {
        ctx.token_namespaces
            .iter()
            .map(|ns| Api::namespaced(ctx.client.clone(), ns))
            .collect()
    };
    let secrets = futures::stream::select_all(secret_apis.into_iter().map(|api| {
        watcher(api, watcher::Config::default().labels(secrets::TOKEN_LABEL))
            .default_backoff()
            .touched_objects()
            .boxed()
    }));
    let naming = reader.clone();
    let controller = Controller::for_shared_stream(stream, reader)
        .watches_stream(secrets, move |secret| naming_secret(&naming, &secret))
        .graceful_shutdown_on(ctx.shutdown.requested());
    super::drain_forgetting(
        controller.run(reconcile, super::error_policy, ctx.clone()),
        ctx,
    )
}

/// Forgets what was kept for a deleted Budget; one deleted while the watch was down shows up
/// only as missing from the next full list.
fn forgetting(ctx: Arc<Context>, store: Store<Budget>) -> OnEvent<Budget> {
    Box::new(move |event| match event {
        watcher::Event::Delete(b) => {
            let key = BudgetKey {
                namespace: b.namespace().unwrap_or_default(),
                name: b.name_any(),
            };
            forget(&ctx, &key);
        }
        watcher::Event::InitDone => {
            for key in ctx.budget_links.budgets() {
                let known = ObjectRef::new(&key.name).within(&key.namespace);
                if store.get(&known).is_none() {
                    forget(&ctx, &key);
                }
            }
        }
        _ => {}
    })
}

/// Forgets a Budget that no longer exists: its mirror, token, request window and write queue.
fn forget(ctx: &Context, key: &BudgetKey) {
    ctx.budget_links.forget(&key.namespace, &key.name);
    ctx.batcher.forget(key);
}

/// The Budgets whose token is in `secret`.
fn naming_secret(
    store: &Store<Budget>,
    secret: &PartialObjectMeta<Secret>,
) -> Vec<ObjectRef<Budget>> {
    let namespace = secret.namespace();
    let name = secret.name_any();
    store
        .state()
        .iter()
        .filter(|b| {
            let own = b.namespace().unwrap_or_default();
            let r = &b.spec.token_secret_ref;
            namespace.as_deref() == Some(r.namespace_or(&own)) && r.name == name
        })
        .map(|b| ObjectRef::from_obj(b.as_ref()))
        .collect()
}

async fn reconcile(budget: Arc<Budget>, ctx: Arc<Context>) -> Result<Action, Error> {
    let _measure = super::measure::<Budget>(&ctx);
    let namespace = budget.namespace().unwrap_or_default();
    // Before waiting for the mirror: a write holding it must find its permit withdrawn before
    // it sends.
    let paired = pair(&budget, &ctx, &namespace).await;
    let cell = ctx.budget_links.mirror(&namespace, &budget.name_any());
    let paired = match paired {
        Ok(paired) => match due(&budget, &ctx, &cell, paired).await {
            Ok(attempt) => Ok(attempt),
            Err(wait) => return Ok(Action::requeue(wait)),
        },
        // The status is about to say why it cannot sync: the next reconcile that can, does.
        Err(e) => {
            cell.state.write().await.synced = None;
            Err(e)
        }
    };
    // Only a Budget that reads its token asks who else may: the answer is about that Secret.
    let exposure = match &paired {
        Ok(_) => Some(exposure(&budget, &ctx, &namespace).await),
        Err(_) => None,
    };
    let turn = cell.turn.lock().await;
    let (outcome, window, requeue) = match paired {
        Ok(attempt) => attempt.run(&budget, &ctx, &namespace, &cell).await,
        Err((outcome, requeue)) => (outcome, None, requeue),
    };
    let slot = cell.state.read().await;
    let now = Timestamp::now();
    let key = budget_of(&namespace, &budget.name_any());
    let requests = match &window {
        Some(w) => w.lock().expect("window lock").request_use(now, &key),
        None => RequestWindow::with(Limits::of(&budget.spec)).request_use(now, &key),
    };
    let previous = budget.status.clone().unwrap_or_default();
    let synced = outcome == SyncOutcome::Synced;
    let report = SyncReport {
        outcome,
        generation: budget.metadata.generation,
        mirror: (synced || slot.mirror.has_read()).then_some(&slot.mirror),
        requests,
        now,
    };
    let mut next = budget_status::next(&previous, &report);
    drop(slot);
    drop(turn);
    // A warning beside Ready, never instead of it: who may read the token does not stop a sync.
    let exposed = exposure.and_then(|observed| {
        let warning = token_exposure::announcement(&previous.conditions, &observed);
        next.conditions =
            conditions::set(&next.conditions, observed, budget.metadata.generation, now);
        warning
    });
    // Always written: the sync's time and request counts move on every pass.
    let announcement = budget_status::announcement(&previous, &next);
    summarize_and_patch(
        &ctx,
        budget.as_ref(),
        true,
        &next,
        StatusWrite::Apply,
        announcement,
        "Sync",
    )
    .await?;
    if let Some(a) = exposed {
        ctx.events
            .publish(
                budget.as_ref(),
                a.warning,
                &a.reason,
                "CheckTokenReaders",
                a.note,
            )
            .await;
    }
    Ok(requeue)
}

/// The sync `paired` makes possible, if one is due now; `Err` is how long until one is. A
/// person asking again and again is held to the window the Budget allows, with one unchanging
/// Event: an editor annotating in a loop adds to one Event's count.
async fn due(
    budget: &Budget,
    ctx: &Context,
    cell: &MirrorCell,
    paired: Paired,
) -> Result<SyncAttempt, Duration> {
    let asked = made_for(budget, &paired);
    let (last, ages) = {
        let mut state = cell.state.write().await;
        state
            .asked
            .retain(|at| at.elapsed() < sync_due::ASKED_WINDOW);
        let ages: Vec<Duration> = state.asked.iter().map(Instant::elapsed).collect();
        (state.synced.clone(), ages)
    };
    let last = last.as_ref().map(|(at, made_for)| (made_for, at.elapsed()));
    match sync_due::due(last, &asked, paired.interval, &ages) {
        Due::Now => {}
        Due::In(wait) => return Err(wait),
        Due::Held(wait) => {
            let note = budget_status::asked_too_often(budget.spec.requests_per_hour);
            ctx.events
                .publish(budget, false, "SyncAskedTooOften", "Sync", note)
                .await;
            return Err(wait);
        }
    }
    let by_person = last.is_some_and(|(before, _)| sync_due::asked_only(before, &asked));
    if by_person {
        cell.state.write().await.asked.push(Instant::now());
    }
    Ok(SyncAttempt {
        paired,
        asked,
        priority: request_priority::of_sync(by_person),
    })
}

/// The Budget's `TokenProtected` condition: whether anyone but the controller and the Budget's
/// owners may read its token's Secret.
async fn exposure(budget: &Budget, ctx: &Context, namespace: &str) -> Observed {
    let r = &budget.spec.token_secret_ref;
    let place = Place {
        secret: &r.name,
        secret_namespace: r.namespace_or(namespace),
        budget_namespace: namespace,
    };
    match ctx
        .secret_readers
        .answers(&ctx.client, place.secret_namespace, namespace)
        .await
    {
        Ok(answers) => token_exposure::verdict(&place, &answers),
        Err(e) => token_exposure::unknown(&place, &e),
    }
}

/// What a sync of `budget` with `paired` is made for (see [`sync_due`]).
fn made_for(budget: &Budget, paired: &Paired) -> SyncedFor {
    let credentials = [
        paired.url.as_str().as_bytes(),
        b"\n",
        paired.token.expose().as_bytes(),
    ];
    SyncedFor {
        generation: budget.metadata.generation,
        annotations: annotations_digest(budget.annotations()),
        credentials: hex::encode(Sha256::digest(credentials.concat())),
    }
}

fn annotations_digest(annotations: &BTreeMap<String, String>) -> String {
    hex::encode(Sha256::digest(
        serde_json::to_vec(annotations).unwrap_or_default(),
    ))
}

/// What the read about to go out serves: `cached`, with the Budget's annotations as the API
/// server holds them now. A sync asked while this reconcile waited for its turn (a resolve, a
/// second `kubectl ledgerops sync`, an ask just after a spec change) is served by this read,
/// and its own reconcile finds nothing left to do instead of reading YNAB again a moment later.
/// Kept as it was if the Budget cannot be read, or changed more than its annotations.
async fn served_now(ctx: &Context, budget: &Budget, cached: SyncedFor) -> SyncedFor {
    let api =
        Api::<Budget>::namespaced(ctx.client.clone(), &budget.namespace().unwrap_or_default());
    match api.get_metadata_opt(&budget.name_any()).await {
        Ok(Some(now))
            if now.metadata.uid == budget.metadata.uid
                && now.metadata.generation == budget.metadata.generation =>
        {
            SyncedFor {
                annotations: annotations_digest(now.annotations()),
                ..cached
            }
        }
        _ => cached,
    }
}

/// What a sync reads with.
struct Paired {
    url: AllowedApiUrl,
    token: Token,
    interval: Duration,
}

/// Checks that the Budget may sync and write now, and pairs its URL and token; otherwise
/// forgets its token (withdrawing what is queued with it) and says why and when to look again.
async fn pair(
    budget: &Budget,
    ctx: &Context,
    namespace: &str,
) -> Result<Paired, (SyncOutcome, Action)> {
    let spec = &budget.spec;
    let name = budget.name_any();
    if spec.suspend {
        ctx.budget_links.forget_credentials(namespace, &name);
        return Err((SyncOutcome::Suspended, Action::await_change()));
    }
    let interval = duration::parse(&spec.sync_interval.0)
        .map_err(|e| (failed("InvalidSpec", e.to_string()), Action::await_change()))?;
    // The URL first: a token is not even read for a place it may not go.
    let url = ctx.api_urls.check(&spec.api_url).map_err(|e| {
        ctx.budget_links.forget_credentials(namespace, &name);
        (
            failed("ApiUrlNotAllowed", e.to_string()),
            Action::await_change(),
        )
    })?;
    let token = secrets::read_token(
        &ctx.client,
        &ctx.token_namespaces,
        namespace,
        &spec.token_secret_ref,
    )
    .await
    .map_err(|e| {
        ctx.budget_links.forget_credentials(namespace, &name);
        (
            failed(e.reason(), e.to_string()),
            Action::requeue(NEEDS_A_PERSON),
        )
    })?;
    ctx.budget_links.set_credentials(
        namespace,
        &name,
        Credentials {
            url: url.clone(),
            secret: spec.token_secret_ref.clone(),
            token: token.clone(),
        },
    );
    Ok(Paired {
        url,
        token,
        interval,
    })
}

/// One sync attempt, with what it is made for and why it goes out.
struct SyncAttempt {
    paired: Paired,
    asked: SyncedFor,
    priority: Priority,
}

impl SyncAttempt {
    /// The outcome, the token's request window, and when to look again.
    async fn run(
        self,
        budget: &Budget,
        ctx: &Context,
        namespace: &str,
        cell: &MirrorCell,
    ) -> (SyncOutcome, Option<SharedWindow>, Action) {
        let spec = &budget.spec;
        let SyncAttempt {
            paired:
                Paired {
                    url,
                    token,
                    interval,
                },
            asked,
            priority,
        } = self;
        let client =
            match ctx
                .budget_links
                .client(&url, &token, Limits::of(spec), ctx.metrics.clone())
            {
                Ok(c) => c
                    .led_by(ctx.leadership.clone())
                    .for_budget(namespace, &budget.name_any()),
                Err(e) => {
                    return (
                        failed(e.reason(), e.to_string()),
                        None,
                        Action::requeue(TRANSIENT),
                    );
                }
            };
        let window = client.window().clone();
        // A token YNAB refused is refused again: a Secret event or an edit that leaves the token as
        // it is must not cost a request.
        if let Some(refused) = ctx.budget_links.refusal(&url, &token, NEEDS_A_PERSON) {
            return (
                failed(refused.reason(), refused.to_string()),
                Some(window),
                Action::requeue(NEEDS_A_PERSON),
            );
        }
        let wanted = (spec.plan_id.clone(), url.as_str().to_owned());
        {
            let mut slot = cell.state.write().await;
            if slot.source != wanted {
                *slot = MirrorSlot {
                    source: wanted,
                    ..MirrorSlot::default()
                };
            }
        }
        let key = MirrorKey {
            namespace: namespace.to_owned(),
            budget: budget.name_any(),
            budget_links: ctx.budget_links.clone(),
        };
        let asked = served_now(ctx, budget, asked).await;
        let started = Instant::now();
        match mirror_sync::sync(&client, &spec.plan_id, cell, &key, priority, None).await {
            Ok(changes) => {
                ctx.budget_links.set_refusal(&url, &token, None);
                cell.state.write().await.synced = Some((started, asked));
                ctx.metrics
                    .sync_duration
                    .observe(started.elapsed().as_secs_f64());
                let server_knowledge = cell.state.read().await.mirror.server_knowledge;
                tracing::info!(budget = %budget.name_any(), server_knowledge, ?changes, "synced");
                (SyncOutcome::Synced, Some(window), Action::requeue(interval))
            }
            // The last sync still stands (a person's annotation meanwhile is still an asked
            // sync): nothing was read.
            Err(YnabError::Paced { until, .. }) => {
                let limits = window.lock().expect("window lock").limits();
                let message = budget_status::sync_paced(until, limits);
                // Looking again every interval costs YNAB nothing and keeps the status's count
                // of the hour current while the writes spend it.
                let wait = wait_until(until).min(interval);
                (
                    SyncOutcome::Paced { message },
                    Some(window),
                    Action::requeue(wait),
                )
            }
            Err(e) => {
                cell.state.write().await.synced = None;
                if matches!(e, YnabError::Unauthorized { .. }) {
                    ctx.budget_links.set_refusal(&url, &token, Some(e.clone()));
                }
                let requeue = retry_after(&e);
                (
                    failed(e.reason(), e.to_string()),
                    Some(window),
                    Action::requeue(requeue),
                )
            }
        }
    }
}

/// How long until `until`: at least a second, so a clock a little ahead never spins.
fn wait_until(until: Timestamp) -> Duration {
    Duration::try_from(until.duration_since(Timestamp::now()))
        .unwrap_or(TRANSIENT)
        .max(Duration::from_secs(1))
}

fn failed(reason: &'static str, message: String) -> SyncOutcome {
    SyncOutcome::Failed { reason, message }
}

fn retry_after(e: &YnabError) -> Duration {
    match e {
        YnabError::RateLimited { until }
        | YnabError::BudgetSpent { until, .. }
        | YnabError::Paced { until, .. } => wait_until(*until),
        e if e.is_transient() => TRANSIENT,
        _ => NEEDS_A_PERSON,
    }
}
