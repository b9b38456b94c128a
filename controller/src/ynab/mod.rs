//! YNAB API v1 wire types (spec 1.86.0), shared by the YNAB client and the test simulator.
//!
//! Money is always `i64` milliunits; the spec's `*_currency` doubles are deliberately not modelled.

pub mod client;
pub mod error;
pub mod model;
pub mod permit;
pub mod token;
