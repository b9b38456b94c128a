//! Delta requests: every record carries the server knowledge of its last change, and a list with
//! `last_knowledge_of_server` returns only records changed after it (deleted ones included);
//! without it, deleted records are left out.

use ledgerops::ynab_model::{Account, Category, CategoryGroup, Payee, TransactionDetail};
use serde::{Deserialize, Serialize};

/// A record and the knowledge at which it last changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamped<T> {
    pub knowledge: i64,
    pub record: T,
}

/// Records that can be soft-deleted.
pub trait Deletable {
    fn deleted(&self) -> bool;
}

macro_rules! deletable {
    ($($t:ty => |$r:ident| $e:expr),* $(,)?) => {
        $(impl Deletable for $t {
            fn deleted(&$r) -> bool { $e }
        })*
    };
}

deletable! {
    Account => |self| self.deleted,
    CategoryGroup => |self| self.deleted,
    Category => |self| self.deleted,
    Payee => |self| self.deleted,
    TransactionDetail => |self| self.summary.deleted,
}

/// Whether a record belongs in a list asked for with `since` (`last_knowledge_of_server`).
pub fn visible<T: Deletable>(item: &Stamped<T>, since: Option<i64>) -> bool {
    match since {
        Some(k) => item.knowledge > k,
        None => !item.record.deleted(),
    }
}

/// The records of a list response, in store order.
pub fn select<T: Deletable>(items: &[Stamped<T>], since: Option<i64>) -> impl Iterator<Item = &T> {
    items
        .iter()
        .filter(move |i| visible(i, since))
        .map(|i| &i.record)
}
