//! Exact decimal storage on both backends.
#![deny(clippy::float_arithmetic)]

use rust_decimal::Decimal;
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueRef};
use sqlx::sqlite::{SqliteArgumentValue, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Postgres, Sqlite, Type};

/// A decimal stored exactly: TEXT in SQLite (which has no decimal type and
/// would round through a double), NUMERIC in PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Money(pub Decimal);

impl Type<Sqlite> for Money {
    fn type_info() -> SqliteTypeInfo {
        <String as Type<Sqlite>>::type_info()
    }
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <String as Type<Sqlite>>::compatible(ty)
    }
}

impl<'q> Encode<'q, Sqlite> for Money {
    fn encode_by_ref(&self, buf: &mut Vec<SqliteArgumentValue<'q>>) -> Result<IsNull, BoxDynError> {
        <String as Encode<'q, Sqlite>>::encode(self.0.normalize().to_string(), buf)
    }
}

impl<'r> Decode<'r, Sqlite> for Money {
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        let text = <&str as Decode<'r, Sqlite>>::decode(value)?;
        Ok(Money(text.parse::<Decimal>()?))
    }
}

impl Type<Postgres> for Money {
    fn type_info() -> PgTypeInfo {
        <Decimal as Type<Postgres>>::type_info()
    }
    fn compatible(ty: &PgTypeInfo) -> bool {
        <Decimal as Type<Postgres>>::compatible(ty)
    }
}

impl Encode<'_, Postgres> for Money {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <Decimal as Encode<Postgres>>::encode_by_ref(&self.0, buf)
    }
}

impl<'r> Decode<'r, Postgres> for Money {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        // NUMERIC keeps the scale it was written with; normalising makes both
        // backends show the same digits for the same value.
        Ok(Money(
            <Decimal as Decode<'r, Postgres>>::decode(value)?.normalize(),
        ))
    }
}
