//! ledgerops keeps a YNAB budget in the state that a Git config repo and `kubectl` declare.

pub mod api;
pub mod crdgen;
