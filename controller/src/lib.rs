//! ledgerops keeps a YNAB budget in the state that a Git config repo and `kubectl` declare.

pub mod agent;
pub mod api;
pub mod backoff;
pub mod cli;
pub mod crdgen;
pub mod git;
pub mod gitea;
pub mod http;
pub mod hub;
pub mod k8s;
pub mod leadership;
pub mod logic;
pub mod metrics;
pub mod pull_request;
pub mod reconcile;
pub mod run;
pub mod shutdown;
pub mod webhook;
pub mod ynab;
pub mod ynab_model;
