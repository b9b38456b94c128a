//! What every kind's status, Events and alerts share: conditions as API conventions want them,
//! kstatus's `Reconciling`/`Stalled`, the Events of a state change (and their form for a
//! notification hub), and the alert gauges.

pub mod alerts;
pub mod announce;
pub mod conditions;
pub mod hub;
pub mod kstatus;
