//! What kind of category a transaction would be put in, read from the mirror.

use crate::logic::budget::mirror::Mirror;
use crate::ynab_model::Category;

/// The group YNAB keeps one payment category per credit card in. YNAB flags neither the group
/// nor its categories as internal, so its fixed name is what tells them apart.
const CREDIT_CARD_PAYMENTS: &str = "Credit Card Payments";

/// YNAB's internal "Uncategorized": a transaction in it has no real category.
pub fn is_uncategorized(category: &Category) -> bool {
    category.internal && category.name == "Uncategorized"
}

/// One of YNAB's own categories ("Inflow: Ready to Assign", "Uncategorized", …).
pub(super) fn is_internal(category: &Category, mirror: &Mirror) -> bool {
    category.internal
        || mirror
            .category_groups
            .get(&category.category_group_id)
            .is_some_and(|g| g.internal)
}

/// A credit card's payment category: YNAB moves money into it itself and ignores it as a
/// transaction's category.
pub(super) fn is_credit_card_payment(category: &Category, mirror: &Mirror) -> bool {
    let group_name = mirror
        .category_groups
        .get(&category.category_group_id)
        .map(|g| g.name.as_str())
        .or(category.category_group_name.as_deref());
    group_name == Some(CREDIT_CARD_PAYMENTS)
}

/// Hidden itself, or in a hidden group (which hides all its categories in YNAB).
pub(super) fn is_hidden(category: &Category, mirror: &Mirror) -> bool {
    category.hidden
        || mirror
            .category_groups
            .get(&category.category_group_id)
            .is_some_and(|g| g.hidden)
}
