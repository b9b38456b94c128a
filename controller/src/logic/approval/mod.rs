//! Approvals: who holds which power, who shaped a change (its lineage), the policy that runs,
//! asks or blocks a submission (and asks rather than run over an edit made since ledgerops
//! wrote), the gate that holds a write back, whether an ApprovalRequest authorizes a write and
//! what state it is in, whether the admission policies are in force, and escalation when nobody
//! answers.

pub mod admission;
pub mod authority;
pub mod digest;
pub mod edited;
pub mod escalation;
pub mod gate;
pub mod inbox;
pub mod inbox_body;
pub mod lineage;
pub mod policy;
pub mod powers;
pub mod request;
pub mod status;
