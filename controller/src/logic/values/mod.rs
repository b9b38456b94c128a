//! Values every kind shares: money in milliunits and decimal strings, payees normalised to their
//! merchant, durations as specs write them, URL prefixes, and what of an outside answer may be
//! repeated.

pub mod duration;
pub mod money;
pub mod outside_text;
pub mod payee;
pub mod url_prefix;
