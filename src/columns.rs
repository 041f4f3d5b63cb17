//! How the domain's enums are stored: as their text names, in TEXT columns on
//! both backends, so rows read the same as the API and no migration changed data.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueRef};
use sqlx::sqlite::{SqliteArgumentValue, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Postgres, Sqlite, Type};

/// Implements `Type`, `Encode` and `Decode` on SQLite and PostgreSQL for
/// types that are `Display + FromStr`: written as their text, read back
/// through `FromStr` (an unknown name is a decode error, never a default).
macro_rules! text_column {
    ($($ty:ty),* $(,)?) => {$(
        impl Type<Sqlite> for $ty {
            fn type_info() -> SqliteTypeInfo {
                <str as Type<Sqlite>>::type_info()
            }
            fn compatible(ty: &SqliteTypeInfo) -> bool {
                <str as Type<Sqlite>>::compatible(ty)
            }
        }

        impl<'q> Encode<'q, Sqlite> for $ty {
            fn encode_by_ref(
                &self,
                buf: &mut Vec<SqliteArgumentValue<'q>>,
            ) -> Result<IsNull, BoxDynError> {
                <String as Encode<'q, Sqlite>>::encode(self.to_string(), buf)
            }
        }

        impl<'r> Decode<'r, Sqlite> for $ty {
            fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
                Ok(<&str as Decode<'r, Sqlite>>::decode(value)?.parse()?)
            }
        }

        impl Type<Postgres> for $ty {
            fn type_info() -> PgTypeInfo {
                <str as Type<Postgres>>::type_info()
            }
            fn compatible(ty: &PgTypeInfo) -> bool {
                <str as Type<Postgres>>::compatible(ty)
            }
        }

        impl Encode<'_, Postgres> for $ty {
            fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
                <&str as Encode<Postgres>>::encode(self.to_string().as_str(), buf)
            }
        }

        impl<'r> Decode<'r, Postgres> for $ty {
            fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
                Ok(<&str as Decode<'r, Postgres>>::decode(value)?.parse()?)
            }
        }
    )*};
}

text_column!(
    crate::billing::Account,
    crate::events::webhooks::DeliveryState,
);
