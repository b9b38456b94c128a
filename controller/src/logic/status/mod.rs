//! What every kind's status, Events and alerts share: conditions as API conventions want them,
//! kstatus's `Reconciling`/`Stalled`, the Events of a state change (and their form for a
//! notification hub), and the alert gauges.

pub mod alerts;
pub mod announce;
pub mod conditions;
pub mod hub;
pub mod kstatus;

/// Why an unsettled write waits: YNAB's changes since it was decided are not read back yet, and
/// nothing is settled on a doubt.
pub fn awaiting_read_back(attempt_id: &str) -> String {
    format!(
        "Waiting to read back what changed in YNAB since write {attempt_id} was decided, to settle it"
    )
}
