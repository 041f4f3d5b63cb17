//! Ledger accounts: who an account belongs to and what it is for.
//!
//! An account's code is its text form (`wallet:{user}`, `holds:{user}`,
//! `payable:{user}`, `platform:revenue`, `external:funding`), as the
//! `accounts` and `postings` rows keep it.

use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// A ledger account.
///
/// The variants are declared in the order of their codes, so the derived
/// order is the codes' order: balances lock and report in the same order as
/// when accounts were strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Account {
    /// Money entering or leaving the exchange: top-ups and payouts.
    ExternalFunding,
    /// A user's money set aside for orders and leases.
    Holds(Uuid),
    /// What the exchange owes a provider.
    Payable(Uuid),
    /// The platform's revenue.
    PlatformRevenue,
    /// What rounding a posting to the money scale added or took away
    /// (ARCHITECTURE.md §19 "Money out"): every posting is rounded once, half-even,
    /// and the residue lands here so each entry still sums to exactly zero.
    /// Its code sorts between revenue's and the wallets', as the enum does.
    Rounding,
    /// A user's spendable money.
    Wallet(Uuid),
}

impl Account {
    /// The user the account belongs to; `None` for the platform's own.
    pub fn owner(self) -> Option<Uuid> {
        match self {
            Account::Wallet(user) | Account::Holds(user) | Account::Payable(user) => Some(user),
            Account::PlatformRevenue | Account::Rounding | Account::ExternalFunding => None,
        }
    }

    /// User accounts never go below zero.
    pub fn is_user(self) -> bool {
        self.owner().is_some()
    }

    /// The `kind` column of the account's row.
    pub fn kind(self) -> &'static str {
        match self {
            Account::Wallet(_) => "wallet",
            Account::Holds(_) => "holds",
            Account::Payable(_) => "payable",
            Account::PlatformRevenue => "platform_revenue",
            Account::Rounding => "rounding",
            Account::ExternalFunding => "external",
        }
    }
}

impl fmt::Display for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Account::Wallet(user) => write!(f, "wallet:{user}"),
            Account::Holds(user) => write!(f, "holds:{user}"),
            Account::Payable(user) => write!(f, "payable:{user}"),
            Account::PlatformRevenue => f.write_str("platform:revenue"),
            Account::Rounding => f.write_str("platform:rounding"),
            Account::ExternalFunding => f.write_str("external:funding"),
        }
    }
}

/// A code that names no account.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an account code")]
pub struct UnknownAccountCode(pub String);

impl FromStr for Account {
    type Err = UnknownAccountCode;
    fn from_str(code: &str) -> Result<Self, Self::Err> {
        let unknown = || UnknownAccountCode(code.to_owned());
        match code {
            "platform:revenue" => return Ok(Account::PlatformRevenue),
            "platform:rounding" => return Ok(Account::Rounding),
            "external:funding" => return Ok(Account::ExternalFunding),
            _ => {}
        }
        let (prefix, user) = code.split_once(':').ok_or_else(unknown)?;
        // Only the form `Display` writes, so a code reads back as itself.
        let canonical = user.len() == 36 && !user.bytes().any(|b| b.is_ascii_uppercase());
        let user = Uuid::try_parse(user)
            .ok()
            .filter(|_| canonical)
            .ok_or_else(unknown)?;
        match prefix {
            "wallet" => Ok(Account::Wallet(user)),
            "holds" => Ok(Account::Holds(user)),
            "payable" => Ok(Account::Payable(user)),
            _ => Err(unknown()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_account_reads_back_from_its_code() {
        let user = Uuid::now_v7();
        for account in [
            Account::Wallet(user),
            Account::Holds(user),
            Account::Payable(user),
            Account::PlatformRevenue,
            Account::Rounding,
            Account::ExternalFunding,
        ] {
            assert_eq!(account.to_string().parse::<Account>(), Ok(account));
        }
        assert_eq!(Account::Wallet(user).to_string(), format!("wallet:{user}"));
    }

    #[test]
    fn accounts_order_as_their_codes_do() {
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        let mut accounts = [
            Account::Wallet(b),
            Account::Rounding,
            Account::PlatformRevenue,
            Account::Holds(a),
            Account::Wallet(a),
            Account::ExternalFunding,
            Account::Payable(a),
            Account::Holds(b),
        ];
        let mut codes: Vec<String> = accounts.iter().map(Account::to_string).collect();
        accounts.sort();
        codes.sort();
        let sorted: Vec<String> = accounts.iter().map(Account::to_string).collect();
        assert_eq!(sorted, codes);
    }

    #[test]
    fn codes_that_name_no_account_are_refused() {
        let upper = Uuid::now_v7().to_string().to_uppercase();
        let wrong_case = format!("wallet:{upper}");
        for code in [
            "wallet:",
            "wallet:nope",
            "platform:other",
            "savings:0",
            "wallet",
            &wrong_case,
        ] {
            assert!(code.parse::<Account>().is_err(), "{code}");
        }
    }
}
