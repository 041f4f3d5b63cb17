//! Balances remembered from one market batch to the next, so a batch of
//! orders on SQLite need not read its buyers' balances again.

use super::Account;
use crate::db::{Tx, WriterMark};
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// The most balances carried from one batch to the next.
const MAX_BALANCES: usize = 4096;

/// The balances a journal left at its commit, and the SQLite writer's mark
/// just after it. While the mark holds nothing has committed since, so the
/// balances are exact. A journal's balances are exact at its commit because
/// every other balance write in the market's batch (charges, renewals, a
/// lease's end) first flushes the journal, which forgets what it knew.
/// PostgreSQL has no mark: other connections write beside the market, and
/// each batch reads (and locks) its balances.
#[derive(Debug, Default)]
pub struct BalanceCache {
    kept: Option<(WriterMark, BTreeMap<Account, Decimal>)>,
}

impl BalanceCache {
    /// The remembered balances, if nothing has committed since they were
    /// kept; either way the cache is emptied.
    pub fn take_current(&mut self, tx: &Tx<'_>) -> Option<BTreeMap<Account, Decimal>> {
        let (mark, balances) = self.kept.take()?;
        (tx.writer_mark() == Some(mark)).then_some(balances)
    }

    /// Keeps what a journal left, as of `mark` (its commit's).
    pub fn keep(&mut self, mark: Option<WriterMark>, balances: BTreeMap<Account, Decimal>) {
        self.kept = mark
            .filter(|_| balances.len() <= MAX_BALANCES)
            .map(|mark| (mark, balances));
    }

    pub fn forget(&mut self) {
        self.kept = None;
    }
}
