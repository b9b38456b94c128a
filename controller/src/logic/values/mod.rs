//! Values every kind shares: money in milliunits and decimal strings, payees normalised to their
//! merchant, durations as specs write them, URL prefixes, what of an outside answer may be
//! repeated, the YAML written for people, and the secrets the adapters pass each other (a YNAB
//! token, Git credentials) as plain values that never print.

pub mod duration;
pub mod git_credentials;
pub mod money;
pub mod outside_text;
pub mod payee;
pub mod token;
pub mod url_prefix;
pub mod yaml_text;
