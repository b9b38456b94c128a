//! Attacks on the trust guarantees, each played by `alice` with an ordinary editor's rights and
//! more (see `ledgerops_e2e::attacker`), on the real API server, against `ledgerops run` and the
//! simulator. Every test asserts the refusal and that YNAB saw no write.

mod admission;
mod approvals;
mod authority;
mod config_repo;
mod gitea;
mod groups;
mod lineage;
mod proposals;
mod secrets;
mod tokens;
