//! Status conditions as Kubernetes API conventions want them: one per type, the transition time
//! kept while the status holds, every one stamped with the generation it describes.

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

// The condition types more than one kind sets; a type only one kind sets is defined with that
// kind's status.
pub const READY: &str = "Ready";
pub const VALID: &str = "Valid";
pub const BLOCKED: &str = "Blocked";
pub const AWAITING_APPROVAL: &str = "AwaitingApproval";
pub const INTERRUPTED: &str = "Interrupted";

/// A condition's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    True,
    False,
    Unknown,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::True => "True",
            Status::False => "False",
            Status::Unknown => "Unknown",
        }
    }
}

impl From<bool> for Status {
    fn from(b: bool) -> Self {
        if b { Status::True } else { Status::False }
    }
}

/// What a reconcile found out for one condition type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    pub type_: &'static str,
    pub status: Status,
    /// Usually a literal; a reason quoted from another condition is owned.
    pub reason: Cow<'static, str>,
    pub message: String,
}

impl Observed {
    pub fn new(
        type_: &'static str,
        status: impl Into<Status>,
        reason: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            type_,
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
        }
    }
}

/// Replaces or adds the condition of `observed.type_` in `current`, keeping its
/// lastTransitionTime when the status did not change. Other types are left as they are.
pub fn set(
    current: &[Condition],
    observed: Observed,
    generation: Option<i64>,
    now: Timestamp,
) -> Vec<Condition> {
    let previous = current.iter().find(|c| c.type_ == observed.type_);
    let last_transition_time = match previous {
        Some(p) if p.status == observed.status.as_str() => p.last_transition_time.clone(),
        _ => Time(now),
    };
    let condition = Condition {
        type_: observed.type_.to_owned(),
        status: observed.status.as_str().to_owned(),
        reason: observed.reason.into_owned(),
        message: observed.message,
        observed_generation: generation,
        last_transition_time,
    };
    let mut out: Vec<Condition> = current
        .iter()
        .filter(|c| c.type_ != condition.type_)
        .cloned()
        .collect();
    out.push(condition);
    out.sort_by(|a, b| a.type_.cmp(&b.type_));
    out
}

/// Removes the condition of `type_`: abnormal-true conditions (Diverged, Blocked, …) are absent
/// rather than False once the problem is gone.
pub fn remove(current: &[Condition], type_: &str) -> Vec<Condition> {
    current
        .iter()
        .filter(|c| c.type_ != type_)
        .cloned()
        .collect()
}

/// Sets the abnormal-true conditions (Diverged, Blocked, …): each present and True with its
/// reason and message while it holds, absent otherwise.
pub fn set_flags(
    current: &[Condition],
    flags: &[(&'static str, Option<(&'static str, &str)>)],
    generation: Option<i64>,
    now: Timestamp,
) -> Vec<Condition> {
    flags
        .iter()
        .fold(current.to_vec(), |c, (type_, on)| match on {
            Some((reason, message)) => set(
                &c,
                Observed::new(type_, true, *reason, *message),
                generation,
                now,
            ),
            None => remove(&c, type_),
        })
}

/// The condition of `type_`, if present.
pub fn get<'a>(current: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    current.iter().find(|c| c.type_ == type_)
}

#[cfg(test)]
#[path = "conditions_tests.rs"]
mod tests;
