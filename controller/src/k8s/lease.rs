//! The leader Lease: acquiring it, renewing it, letting it go. Decisions are
//! [`crate::logic::runtime::lease`]'s; this reads and writes the Lease and keeps [`Leadership`] current.

use std::time::Instant;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

use crate::leadership::Leadership;
use crate::logic::runtime::lease::{self, Claim, Record, Seen, Step, Timing};

/// Where the lease is and who we are.
#[derive(Debug, Clone)]
pub struct Election {
    /// `None`: the namespace of the client's configuration (in a Pod, its own).
    pub namespace: Option<String>,
    pub name: String,
    pub identity: String,
    pub timing: Timing,
}

/// How one look at the lease ended.
enum Round {
    Held,
    HeldBy {
        holder: String,
        look_again: std::time::Duration,
    },
    /// Somebody else wrote between our read and our write.
    Raced,
}

/// Takes part in the election of one Lease.
pub struct Elector {
    api: Api<Lease>,
    namespace: String,
    election: Election,
    leadership: Leadership,
    seen: Option<Seen>,
    /// The Lease as last read, the base of our next write.
    last: Option<Lease>,
}

impl Elector {
    pub fn new(client: Client, mut election: Election, leadership: Leadership) -> Self {
        let namespace = election
            .namespace
            .get_or_insert_with(|| client.default_namespace().to_owned())
            .clone();
        Self {
            api: Api::namespaced(client, &namespace),
            namespace,
            election,
            leadership,
            seen: None,
            last: None,
        }
    }

    /// Returns once this process holds the lease.
    pub async fn acquire(&mut self) {
        let mut waiting_for: Option<String> = None;
        loop {
            let pause = match self.round().await {
                Ok(Round::Held) => {
                    tracing::info!(lease = %self.election.name, namespace = %self.namespace, identity = %self.election.identity, "holding the leader lease: this replica syncs, writes and runs jobs");
                    return;
                }
                Ok(Round::HeldBy { holder, look_again }) => {
                    if waiting_for.as_ref() != Some(&holder) {
                        tracing::info!(%holder, lease = %self.election.name, "another replica leads; this one serves webhooks and waits");
                        waiting_for = Some(holder);
                    }
                    look_again
                }
                Ok(Round::Raced) => self.election.timing.retry(),
                Err(e) => {
                    tracing::warn!(error = %e, lease = %self.election.name, "cannot read or write the leader lease; trying again");
                    self.election.timing.retry()
                }
            };
            tokio::time::sleep(pause).await;
        }
    }

    /// Renews the lease every retry period; returns when this process may no longer act: the
    /// renew deadline passed without a renewal, or somebody else holds the lease.
    pub async fn keep(&mut self) {
        loop {
            tokio::time::sleep(self.election.timing.retry()).await;
            let renewal =
                tokio::time::timeout(self.election.timing.renew_deadline(), self.round()).await;
            match renewal {
                Ok(Ok(Round::Held)) => {}
                Ok(Ok(Round::HeldBy { holder, .. })) => {
                    tracing::error!(%holder, "the leader lease was taken over");
                    self.leadership.lost();
                }
                Ok(Ok(Round::Raced)) => tracing::warn!("a write to the leader lease raced another"),
                Ok(Err(e)) => tracing::warn!(error = %e, "cannot renew the leader lease"),
                Err(_) => tracing::warn!("renewing the leader lease timed out"),
            }
            if !self.leadership.holds() {
                tracing::error!(lease = %self.election.name, "leadership lost: stopping, so that only the new holder acts");
                return;
            }
        }
    }

    /// Lets the lease go if it is ours, so the next replica takes over at once instead of after
    /// the lease duration (a rolling update).
    pub async fn release(&mut self) {
        let held = self.leadership.holds();
        self.leadership.lost();
        if !held {
            return;
        }
        let Some(mut lease) = self.last.clone() else {
            return;
        };
        lease.spec = Some(LeaseSpec {
            holder_identity: None,
            lease_duration_seconds: Some(1),
            renew_time: Some(MicroTime(Timestamp::now())),
            ..lease.spec.unwrap_or_default()
        });
        match self
            .api
            .replace(&self.election.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => tracing::info!(lease = %self.election.name, "released the leader lease"),
            Err(e) => {
                tracing::warn!(error = %e, "could not release the leader lease; it expires by itself")
            }
        }
    }

    async fn round(&mut self) -> Result<Round, kube::Error> {
        let current = self.api.get_opt(&self.election.name).await?;
        let now = Instant::now();
        self.seen = current
            .as_ref()
            .map(|l| lease::observe(self.seen.take(), record_of(l, &self.election.timing), now));
        self.last = current;
        let step = lease::next(
            self.seen.as_ref(),
            &self.election.identity,
            &self.election.timing,
            now,
        );
        let sent = Instant::now();
        let written = match step {
            Step::Wait {
                holder,
                for_at_most,
            } => {
                self.leadership.lost();
                return Ok(Round::HeldBy {
                    holder,
                    look_again: for_at_most,
                });
            }
            Step::Create(claim) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.election.name.clone()),
                        namespace: Some(self.namespace.clone()),
                        ..Default::default()
                    },
                    spec: Some(spec_of(&claim, None)),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
            Step::Write(claim) => {
                let mut lease = self.last.clone().expect("a Write follows a read Lease");
                lease.spec = Some(spec_of(&claim, lease.spec.take()));
                self.api
                    .replace(&self.election.name, &PostParams::default(), &lease)
                    .await
            }
        };
        match written {
            Ok(lease) => {
                self.leadership.renewed(sent);
                self.seen = Some(lease::observe(
                    None,
                    record_of(&lease, &self.election.timing),
                    sent,
                ));
                self.last = Some(lease);
                Ok(Round::Held)
            }
            Err(e) if crate::k8s::is_conflict(&e) => Ok(Round::Raced),
            Err(e) => Err(e),
        }
    }
}

fn record_of(lease: &Lease, timing: &Timing) -> Record {
    let spec = lease.spec.clone().unwrap_or_default();
    Record {
        version: lease.metadata.resource_version.clone().unwrap_or_default(),
        holder: spec.holder_identity,
        lease_seconds: spec
            .lease_duration_seconds
            .unwrap_or(timing.lease_seconds()),
        transitions: spec.lease_transitions.unwrap_or(0),
    }
}

fn spec_of(claim: &Claim, previous: Option<LeaseSpec>) -> LeaseSpec {
    let now = MicroTime(Timestamp::now());
    let previous = previous.unwrap_or_default();
    LeaseSpec {
        holder_identity: Some(claim.holder.clone()),
        lease_duration_seconds: Some(claim.lease_seconds),
        lease_transitions: Some(claim.transitions),
        acquire_time: if claim.new_term {
            Some(now.clone())
        } else {
            previous.acquire_time
        },
        renew_time: Some(now),
        ..previous
    }
}
