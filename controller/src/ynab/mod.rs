//! The YNAB adapter: the HTTP client and its errors, tokens and permits, and the YNAB side of each
//! Budget: its links to YNAB ([`budget_links`]), the sync of its mirror ([`mirror_sync`]) and the
//! batching of its writes ([`batcher`]). The wire types it sends and receives are in
//! [`crate::ynab_model`].

pub mod batcher;
pub mod budget_links;
pub mod client;
pub mod error;
pub mod mirror_sync;
pub mod permit;
#[cfg(feature = "test-hooks")]
pub mod planted;
pub mod window_record;
