//! Transaction writes with YNAB's rules: transfers get a mirrored counterpart, splits must add
//! up and cannot be rewritten, tracking accounts and on-budget transfers carry no category, and
//! Credit Card Payment categories are ignored.

use jiff::civil::Date;
use ledgerops::ynab_model::{
    ClearedStatus, NewTransaction, Payee, SaveSubTransaction, SaveTransactionWithOptionalFields,
    SubTransaction, TransactionDetail, TransactionSummary,
};

use super::PlanState;
use crate::SimError;
use crate::clock::parse_date;
use crate::delta::Stamped;

fn bad(detail: impl Into<String>) -> SimError {
    SimError::BadRequest(detail.into())
}

fn check_len(field: &str, value: Option<&str>, max: usize) -> Result<(), SimError> {
    match value {
        Some(v) if v.chars().count() > max => Err(bad(format!(
            "{field} is too long (maximum is {max} characters)"
        ))),
        _ => Ok(()),
    }
}

fn check_lengths(fields: &SaveTransactionWithOptionalFields) -> Result<(), SimError> {
    check_len("memo", fields.memo.clone().flatten().as_deref(), 500)?;
    check_len(
        "payee_name",
        fields.payee_name.clone().flatten().as_deref(),
        200,
    )
}

/// A date a transaction may carry: valid and not in the future.
fn past_date(date: &str, today: Date) -> Result<String, SimError> {
    if parse_date(date)? > today {
        return Err(bad("date must not be in the future"));
    }
    Ok(date.to_string())
}

impl PlanState {
    fn live_account_on_budget(&self, id: &str) -> Result<bool, SimError> {
        match self.account(id) {
            Some(a) if !a.deleted => Ok(a.on_budget),
            _ => Err(bad(format!(
                "account_id {id} does not exist in this budget"
            ))),
        }
    }

    /// Resolves `payee_id` / `payee_name` as YNAB does: an id must exist; a name matches an
    /// existing payee or creates one. `None` = not sent; `Some(None)` = no payee.
    fn resolve_payee(
        &mut self,
        knowledge: i64,
        payee_id: Option<Option<String>>,
        payee_name: Option<Option<String>>,
    ) -> Result<Option<Option<String>>, SimError> {
        if let Some(Some(id)) = payee_id {
            return match self.payee(&id) {
                Some(p) if !p.deleted => Ok(Some(Some(id))),
                _ => Err(bad(format!("payee_id {id} does not exist in this budget"))),
            };
        }
        match payee_name {
            Some(Some(name)) => {
                if let Some(p) = self
                    .payees
                    .iter()
                    .find(|p| !p.record.deleted && p.record.name == name)
                {
                    return Ok(Some(Some(p.record.id.clone())));
                }
                let id = self.new_id();
                self.payees.push(Stamped {
                    knowledge,
                    record: Payee {
                        id: id.clone(),
                        name,
                        transfer_account_id: None,
                        deleted: false,
                    },
                });
                Ok(Some(Some(id)))
            }
            _ => Ok(payee_id),
        }
    }

    /// The account a payee transfers to, if it is a transfer payee.
    fn transfer_target(&self, payee_id: Option<&str>) -> Option<String> {
        payee_id
            .and_then(|id| self.payee(id))
            .and_then(|p| p.transfer_account_id.clone())
    }

    /// Whether transactions on `account_id` (transferring to `target`) may carry a category.
    pub fn categorizable(&self, account_id: &str, target: Option<&str>) -> Result<bool, SimError> {
        let on_budget = self.live_account_on_budget(account_id)?;
        let target_on_budget = match target {
            Some(t) => self.live_account_on_budget(t)?,
            None => false,
        };
        Ok(on_budget && !(target.is_some() && target_on_budget))
    }

    /// A requested category after YNAB's rules: must exist; Credit Card Payment categories are
    /// ignored (`None` = leave as is).
    fn requested_category(
        &self,
        requested: Option<&str>,
    ) -> Result<Option<Option<String>>, SimError> {
        match requested {
            None => Ok(Some(None)),
            Some(id) if self.is_credit_card_payment(id) => Ok(None),
            Some(id) => match self.category(id) {
                Some(c) if !c.deleted => Ok(Some(Some(id.to_string()))),
                _ => Err(bad(format!(
                    "category_id {id} does not exist in this budget"
                ))),
            },
        }
    }

    fn build_subtransactions(
        &mut self,
        knowledge: i64,
        parent_id: &str,
        parent_amount: i64,
        lines: Vec<SaveSubTransaction>,
    ) -> Result<Vec<SubTransaction>, SimError> {
        if lines.iter().map(|l| l.amount).sum::<i64>() != parent_amount {
            return Err(bad(
                "the sum of subtransaction amounts must equal the transaction amount",
            ));
        }
        let mut subs = Vec::with_capacity(lines.len());
        for line in lines {
            check_len("memo", line.memo.as_deref(), 500)?;
            let payee_id = self
                .resolve_payee(knowledge, Some(line.payee_id), Some(line.payee_name))?
                .flatten();
            let category_id = self
                .requested_category(line.category_id.as_deref())?
                .flatten();
            subs.push(SubTransaction {
                id: self.new_id(),
                transaction_id: parent_id.to_string(),
                amount: line.amount,
                memo: line.memo,
                payee_id,
                payee_name: None,
                category_id,
                category_name: None,
                transfer_account_id: None,
                transfer_transaction_id: None,
                deleted: false,
            });
        }
        Ok(subs)
    }

    /// Whether `import_id` is already held on `account_id` (deleted transactions keep theirs).
    pub fn import_id_taken(&self, account_id: &str, import_id: &str) -> bool {
        self.transactions.iter().any(|t| {
            t.record.summary.account_id == account_id
                && t.record.summary.import_id.as_deref() == Some(import_id)
        })
    }

    fn store_transaction(&mut self, knowledge: i64, tx: TransactionDetail) {
        self.touch_effects(knowledge, &tx);
        match self
            .transactions
            .iter_mut()
            .find(|t| t.record.summary.id == tx.summary.id)
        {
            Some(slot) => {
                *slot = Stamped {
                    knowledge,
                    record: tx,
                }
            }
            None => self.transactions.push(Stamped {
                knowledge,
                record: tx,
            }),
        }
    }

    /// Creates a transaction (and a transfer's counterpart); returns the new id.
    pub fn create_transaction(
        &mut self,
        knowledge: i64,
        new: NewTransaction,
        today: Date,
    ) -> Result<String, SimError> {
        let fields = new.fields;
        check_lengths(&fields)?;
        check_len("import_id", new.import_id.as_deref(), 36)?;
        let account_id = fields
            .account_id
            .ok_or_else(|| bad("account_id is required"))?;
        let date = past_date(
            fields
                .date
                .as_deref()
                .ok_or_else(|| bad("date is required"))?,
            today,
        )?;
        let amount = fields.amount.ok_or_else(|| bad("amount is required"))?;
        self.live_account_on_budget(&account_id)?;
        if let Some(import_id) = &new.import_id
            && self.import_id_taken(&account_id, import_id)
        {
            return Err(SimError::Conflict(
                "A transaction on the same account with the same import_id already exists"
                    .to_string(),
            ));
        }
        let payee_id = self
            .resolve_payee(knowledge, fields.payee_id, fields.payee_name)?
            .flatten();
        let target = self.transfer_target(payee_id.as_deref());
        if target.as_deref() == Some(account_id.as_str()) {
            return Err(bad("a transfer needs two different accounts"));
        }
        let categorizable = self.categorizable(&account_id, target.as_deref())?;
        let id = self.new_id();
        let lines = fields.subtransactions.unwrap_or_default();
        let subtransactions = if lines.is_empty() {
            Vec::new()
        } else if !categorizable {
            return Err(bad(
                "splits are not allowed on tracking accounts or on transfers between on-budget accounts",
            ));
        } else {
            self.build_subtransactions(knowledge, &id, amount, lines)?
        };
        let category_id = match fields.category_id.flatten() {
            Some(c) if categorizable && subtransactions.is_empty() => {
                self.requested_category(Some(&c))?.flatten()
            }
            _ => None,
        };
        let summary = TransactionSummary {
            id: id.clone(),
            date,
            amount,
            memo: fields.memo.flatten(),
            cleared: fields.cleared.unwrap_or(ClearedStatus::Uncleared),
            approved: fields.approved.unwrap_or(false),
            flag_color: fields.flag_color.flatten(),
            flag_name: None,
            account_id: account_id.clone(),
            payee_id,
            category_id,
            transfer_account_id: target.clone(),
            transfer_transaction_id: None,
            matched_transaction_id: None,
            import_id: new.import_id,
            import_payee_name: None,
            import_payee_name_original: None,
            debt_transaction_type: None,
            deleted: false,
        };
        let mut tx = TransactionDetail {
            summary,
            account_name: String::new(),
            payee_name: None,
            category_name: None,
            subtransactions,
        };
        if let Some(target) = target {
            let counterpart = self.transfer_counterpart(&tx, &target)?;
            tx.summary.transfer_transaction_id = Some(counterpart.summary.id.clone());
            self.store_transaction(knowledge, counterpart);
        }
        self.store_transaction(knowledge, tx);
        Ok(id)
    }

    /// The other side of a new transfer, on `target`.
    fn transfer_counterpart(
        &mut self,
        tx: &TransactionDetail,
        target: &str,
    ) -> Result<TransactionDetail, SimError> {
        let source = self
            .account(&tx.summary.account_id)
            .ok_or_else(|| bad("account not found"))?;
        let payee_id = source.transfer_payee_id.clone();
        let id = self.new_id();
        Ok(TransactionDetail {
            summary: TransactionSummary {
                id,
                amount: -tx.summary.amount,
                memo: tx.summary.memo.clone(),
                cleared: ClearedStatus::Uncleared,
                flag_color: None,
                account_id: target.to_string(),
                payee_id,
                category_id: None,
                transfer_account_id: Some(tx.summary.account_id.clone()),
                transfer_transaction_id: Some(tx.summary.id.clone()),
                import_id: None,
                ..tx.summary.clone()
            },
            account_name: String::new(),
            payee_name: None,
            category_name: None,
            subtransactions: Vec::new(),
        })
    }

    fn live_transaction(&self, id: &str) -> Result<TransactionDetail, SimError> {
        match self.transaction(id) {
            Some(t) if !t.summary.deleted => Ok(t.clone()),
            _ => Err(crate::error::not_found("transaction")),
        }
    }

    /// Applies the sent fields to an existing transaction.
    pub fn update_transaction(
        &mut self,
        knowledge: i64,
        id: &str,
        fields: SaveTransactionWithOptionalFields,
        today: Date,
    ) -> Result<(), SimError> {
        check_lengths(&fields)?;
        let before = self.live_transaction(id)?;
        let mut tx = before.clone();
        let is_split = !tx.subtransactions.is_empty();
        if is_split && fields.subtransactions.is_some() {
            return Err(bad(
                "updating subtransactions on an existing split transaction is not supported",
            ));
        }
        if let Some(account_id) = fields.account_id
            && account_id != tx.summary.account_id
        {
            if tx.summary.transfer_account_id.is_some() {
                return Err(bad(
                    "the simulator cannot move a transfer to another account",
                ));
            }
            self.live_account_on_budget(&account_id)?;
            tx.summary.account_id = account_id;
        }
        // A split's date and amount cannot change: YNAB ignores them.
        if let (Some(date), false) = (fields.date, is_split) {
            tx.summary.date = past_date(&date, today)?;
        }
        if let (Some(amount), false) = (fields.amount, is_split) {
            tx.summary.amount = amount;
        }
        if let Some(payee_id) = self.resolve_payee(knowledge, fields.payee_id, fields.payee_name)? {
            if self.transfer_target(payee_id.as_deref()) != tx.summary.transfer_account_id {
                return Err(bad(
                    "the simulator cannot turn a transaction into a transfer or back",
                ));
            }
            tx.summary.payee_id = payee_id;
        }
        let categorizable = self.categorizable(
            &tx.summary.account_id,
            tx.summary.transfer_account_id.as_deref(),
        )?;
        if !categorizable {
            tx.summary.category_id = None;
        } else if let (Some(requested), false) = (fields.category_id, is_split)
            && let Some(category) = self.requested_category(requested.as_deref())?
        {
            tx.summary.category_id = category;
        }
        if let Some(memo) = fields.memo {
            tx.summary.memo = memo;
        }
        if let Some(cleared) = fields.cleared {
            tx.summary.cleared = cleared;
        }
        if let Some(approved) = fields.approved {
            tx.summary.approved = approved;
        }
        if let Some(flag) = fields.flag_color {
            tx.summary.flag_color = flag;
        }
        if let Some(lines) = fields.subtransactions.filter(|l| !l.is_empty()) {
            if !categorizable {
                return Err(bad(
                    "splits are not allowed on tracking accounts or on transfers between on-budget accounts",
                ));
            }
            tx.subtransactions =
                self.build_subtransactions(knowledge, id, tx.summary.amount, lines)?;
            tx.summary.category_id = None;
        }
        self.touch_effects(knowledge, &before);
        self.mirror_transfer(knowledge, &tx)?;
        self.store_transaction(knowledge, tx);
        Ok(())
    }

    /// Keeps a transfer's other side at the same date and the opposite amount.
    fn mirror_transfer(&mut self, knowledge: i64, tx: &TransactionDetail) -> Result<(), SimError> {
        let Some(other_id) = tx.summary.transfer_transaction_id.as_deref() else {
            return Ok(());
        };
        let before = self.live_transaction(other_id)?;
        let mut other = before.clone();
        other.summary.date = tx.summary.date.clone();
        other.summary.amount = -tx.summary.amount;
        if other != before {
            self.touch_effects(knowledge, &before);
            self.store_transaction(knowledge, other);
        }
        Ok(())
    }

    /// Soft-deletes a transaction (and a transfer's other side); the record stays, `deleted: true`.
    pub fn delete_transaction(&mut self, knowledge: i64, id: &str) -> Result<(), SimError> {
        let tx = self.live_transaction(id)?;
        let ids: Vec<String> = std::iter::once(tx.summary.id.clone())
            .chain(tx.summary.transfer_transaction_id.clone())
            .collect();
        for id in ids {
            let Ok(mut doomed) = self.live_transaction(&id) else {
                continue;
            };
            self.touch_effects(knowledge, &doomed);
            doomed.summary.deleted = true;
            for sub in &mut doomed.subtransactions {
                sub.deleted = true;
            }
            self.store_transaction(knowledge, doomed);
        }
        Ok(())
    }

    /// Finds a bulk-update item's transaction: by `id`, else by `import_id`.
    pub fn find_for_update(&self, id: Option<&str>, import_id: Option<&str>) -> Option<String> {
        let live = |t: &&Stamped<TransactionDetail>| !t.record.summary.deleted;
        match (id, import_id) {
            (Some(id), _) => self
                .transactions
                .iter()
                .filter(live)
                .find(|t| t.record.summary.id == id),
            (None, Some(import_id)) => self
                .transactions
                .iter()
                .filter(live)
                .find(|t| t.record.summary.import_id.as_deref() == Some(import_id)),
            (None, None) => None,
        }
        .map(|t| t.record.summary.id.clone())
    }
}
