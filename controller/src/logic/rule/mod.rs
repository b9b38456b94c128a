//! CategorizationRules as decisions: whether a rule is well formed and where it stands
//! ([`standing`]), whether it matches a transaction ([`matching`]), and which rules (if any)
//! speak for a transaction ([`book`]), what people's decisions teach about rules
//! ([`learn`]), and proposing a learned rule to a config repository ([`proposal`], [`vouch`]).
//!
//! Only a Blessed rule ever speaks; when Blessed rules disagree on a transaction, none does.

pub mod book;
pub mod decisions;
pub mod learn;
pub mod matching;
pub mod proposal;
pub mod standing;
pub mod vouch;

pub use book::{Blessed, RuleBook, Verdict, blessed};
pub use matching::{Facts, Matcher, RuleError};
pub use standing::{
    Standing, acting_since, announcement, demotion_in_force, is_demoted, reconciler_part, standing,
    status,
};

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests;
