//! Columns holding a type from another crate as its text name.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueRef};
use sqlx::sqlite::{SqliteArgumentValue, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Postgres, Sqlite, Type};

/// A type from another crate (the engine's `Mode` and `LeaseState`, the
/// catalog's `Unit`) stored as its text name: the orphan rule keeps the
/// `sqlx` traits off those types themselves, and the pure crates build
/// without `sqlx`. Bind `Text(mode)`; read a column as `Text<Mode>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Text<T>(pub T);

impl<T> Type<Sqlite> for Text<T> {
    fn type_info() -> SqliteTypeInfo {
        <str as Type<Sqlite>>::type_info()
    }
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <str as Type<Sqlite>>::compatible(ty)
    }
}

impl<'q, T: std::fmt::Display> Encode<'q, Sqlite> for Text<T> {
    fn encode_by_ref(&self, buf: &mut Vec<SqliteArgumentValue<'q>>) -> Result<IsNull, BoxDynError> {
        <String as Encode<'q, Sqlite>>::encode(self.0.to_string(), buf)
    }
}

impl<'r, T> Decode<'r, Sqlite> for Text<T>
where
    T: std::str::FromStr,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Text(<&str as Decode<'r, Sqlite>>::decode(value)?.parse()?))
    }
}

impl<T> Type<Postgres> for Text<T> {
    fn type_info() -> PgTypeInfo {
        <str as Type<Postgres>>::type_info()
    }
    fn compatible(ty: &PgTypeInfo) -> bool {
        <str as Type<Postgres>>::compatible(ty)
    }
}

impl<T: std::fmt::Display> Encode<'_, Postgres> for Text<T> {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <&str as Encode<Postgres>>::encode(self.0.to_string().as_str(), buf)
    }
}

impl<'r, T> Decode<'r, Postgres> for Text<T>
where
    T: std::str::FromStr,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Text(
            <&str as Decode<'r, Postgres>>::decode(value)?.parse()?,
        ))
    }
}
