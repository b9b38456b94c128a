//! An AgentJob's state as its object holds it: the event a stored job stands for, the state
//! its status (or, before the first status, its spec) gives, and the status that persists a
//! state.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::command;
use super::event::{EventKind, JobEvent};
use super::state::{JobState, next_state};
use crate::api::agent_job::{AgentJobSpec, AgentJobStatus, LastError};

/// The event the webhook's store stands for: the job, stored, is the command received. Its id
/// and time come from the spec, so it is the same event whoever derives it.
pub fn received(spec: &AgentJobSpec, generation: Option<i64>) -> JobEvent {
    JobEvent::new(
        "received",
        spec.received_at.0,
        EventKind::CommandReceived {
            text: spec.command.clone(),
            truncated_from: spec.truncated_from,
            author: spec.author.clone(),
            sequence: spec.sequence,
            generation,
        },
    )
}

/// The state of an AgentJob. While no status is written (or one without a phase), it is the
/// state [`received`] gives, which follows from the spec alone: it is persisted together with
/// the job's next event, so receiving a job costs no status write of its own.
pub fn from_persisted(
    spec: &AgentJobSpec,
    status: Option<&AgentJobStatus>,
    generation: Option<i64>,
) -> JobState {
    match persisted(spec, status, generation) {
        Some(state) => state,
        None => {
            next_state(None, &received(spec, generation))
                .expect("CommandReceived applies to an absent job")
                .state
        }
    }
}

/// The state the status holds, if it holds one.
fn persisted(
    spec: &AgentJobSpec,
    status: Option<&AgentJobStatus>,
    generation: Option<i64>,
) -> Option<JobState> {
    let st = status?;
    let phase = st.phase?;
    // The command name is recorded once it parsed; parsing again gives the same command.
    let command = st
        .command_name
        .as_ref()
        .and_then(|_| command::parse(&spec.command).ok());
    Some(JobState {
        phase,
        text: spec.command.clone(),
        truncated_from: spec.truncated_from,
        author: spec.author.clone(),
        sequence: spec.sequence,
        generation: st.observed_generation.or(generation),
        command,
        stage: st.stage.clone().unwrap_or_default(),
        reason: st.reason.clone().unwrap_or_default(),
        error: st.error.clone(),
        last_error: st
            .last_error
            .as_ref()
            .map(|e| (e.message.clone(), e.time.0)),
        permission: st.permission.clone(),
        result: st.result.clone(),
        status_comment_id: st.status_comment_id,
        comment_hash: st.comment_hash.clone(),
        branch: st.branch.clone(),
        pull_request_url: st.pull_request_url.clone(),
        cleanup: st.cleanup.clone(),
        applied_events: st.applied_events.clone(),
        received_at: spec.received_at.0,
        started_at: st.started_at.as_ref().map(|t| t.0),
        finished_at: st.finished_at.as_ref().map(|t| t.0),
        conditions: st.conditions.clone(),
    })
}

/// The status that persists `state`.
pub fn to_status(state: &JobState) -> AgentJobStatus {
    AgentJobStatus {
        observed_generation: state.generation,
        conditions: state.conditions.clone(),
        phase: Some(state.phase),
        command_name: state.command.as_ref().map(|c| c.name().to_owned()),
        stage: Some(state.stage.clone()),
        error: state.error.clone(),
        last_error: state.last_error.as_ref().map(|(message, at)| LastError {
            message: message.clone(),
            time: Time(*at),
        }),
        status_comment_id: state.status_comment_id,
        result: state.result.clone(),
        applied_events: state.applied_events.clone(),
        started_at: state.started_at.map(Time),
        finished_at: state.finished_at.map(Time),
        reason: Some(state.reason.clone()),
        permission: state.permission.clone(),
        comment_hash: state.comment_hash.clone(),
        branch: state.branch.clone(),
        pull_request_url: state.pull_request_url.clone(),
        cleanup: state.cleanup.clone(),
    }
}
