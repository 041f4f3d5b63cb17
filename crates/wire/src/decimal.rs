//! Reading decimals from JSON without losing a digit.
//!
//! Quantities are accepted as JSON strings (`"12.50"`, exact) or as
//! numbers; money as strings only ([`money`]). A number arrives from serde_json as an `f64`; its shortest
//! round-trip form is the literal the client wrote (for up to 15 significant
//! digits), so it is parsed from that text, never converted numerically.
#![deny(clippy::float_arithmetic)]

use rust_decimal::Decimal;
use serde::de::{self, Deserializer, Visitor};
use std::fmt;
use std::str::FromStr;

struct DecimalVisitor;

impl Visitor<'_> for DecimalVisitor {
    type Value = Decimal;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a decimal number or a string holding one")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Decimal, E> {
        // Plain notation only (`-12.50`), the grammar the OpenAPI schema
        // publishes: no spaces, no exponent, no `+`, no bare point.
        let digits = v.strip_prefix('-').unwrap_or(v);
        let (int, frac) = digits.split_once('.').unwrap_or((digits, "0"));
        let plain = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        if !(plain(int) && plain(frac)) {
            return Err(E::custom(format!("`{v}` is not a decimal number")));
        }
        Decimal::from_str(v).map_err(|_| E::custom(format!("`{v}` is not a decimal number")))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Decimal, E> {
        Ok(Decimal::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Decimal, E> {
        Ok(Decimal::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Decimal, E> {
        if !v.is_finite() {
            return Err(E::custom("must be a finite number"));
        }
        self.visit_str(&v.to_string())
    }
}

/// `#[serde(deserialize_with = "crate::decimal::deserialize")]`
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
    d.deserialize_any(DecimalVisitor)
}

/// For `Option<Decimal>` fields (with `#[serde(default)]`).
pub fn deserialize_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decimal>, D::Error> {
    struct OptionVisitor;
    impl<'de> Visitor<'de> for OptionVisitor {
        type Value = Option<Decimal>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a decimal number, a string holding one, or null")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            deserialize(d).map(Some)
        }
    }
    d.deserialize_option(OptionVisitor)
}

/// Money in (ARCHITECTURE.md §19): a JSON string in plain decimal notation only. A
/// JSON number is refused, whatever digits it was written with: it has
/// passed through a binary float (`1E-2`, `100.00000000000000000000000001`
/// lose or change digits on the way), so it cannot be money. Text with more
/// digits than a `Decimal` holds is refused rather than rounded; each field's
/// range and scale are then checked by its `crate::bounds::Bounds`.
struct MoneyVisitor;

/// What a money field must be, in the 422.
pub const MONEY_RULE: &str =
    "must be a decimal string such as \"12.50\" (no JSON number, no exponent)";

impl Visitor<'_> for MoneyVisitor {
    type Value = Decimal;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(MONEY_RULE)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Decimal, E> {
        let value = DecimalVisitor
            .visit_str::<E>(v)
            .map_err(|_| E::custom(MONEY_RULE))?;
        // `from_str` rounds digits beyond 28 away; money is taken exactly or not at all.
        Decimal::from_str_exact(v).map_err(|_| {
            E::custom("has more digits than a decimal holds; send at most the field's decimals")
        })?;
        Ok(value)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Decimal, E> {
        Err(E::custom(MONEY_RULE))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Decimal, E> {
        Err(E::custom(MONEY_RULE))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Decimal, E> {
        Err(E::custom(MONEY_RULE))
    }
}

/// Money: `#[serde(deserialize_with = "crate::decimal::money")]`.
pub fn money<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
    d.deserialize_any(MoneyVisitor)
}

/// Optional money (with `#[serde(default)]`): absent or `null` is `None`.
pub fn money_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decimal>, D::Error> {
    struct OptionVisitor;
    impl<'de> Visitor<'de> for OptionVisitor {
        type Value = Option<Decimal>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(MONEY_RULE)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            money(d).map(Some)
        }
    }
    d.deserialize_option(OptionVisitor)
}

/// How a request writes a decimal, for the OpenAPI document: a string holding
/// one (`"12.50"`, exact; exponents and surrounding spaces allowed) or a JSON
/// number. Each field's range and scale are checked by the server.
#[cfg(feature = "openapi")]
pub struct DecimalInput;

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for DecimalInput {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        let text = ObjectBuilder::new().schema_type(Type::String).pattern(Some(
            r"^\s*[+-]?([0-9_]+\.?[0-9_]*|\.[0-9_]+)([eE][+-]?[0-9]+)?\s*$",
        ));
        let number = ObjectBuilder::new().schema_type(Type::Number);
        OneOfBuilder::new()
            .item(text)
            .item(number)
            .description(Some(
                "A decimal: a string (`\"12.50\"`, exact) or a number.",
            ))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for DecimalInput {}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[derive(serde::Deserialize)]
    struct Amount {
        #[serde(deserialize_with = "deserialize")]
        amount: Decimal,
    }

    fn parse(json: &str) -> Decimal {
        serde_json::from_str::<Amount>(json).unwrap().amount
    }

    #[test]
    fn numbers_keep_the_digits_the_client_wrote() {
        assert_eq!(parse(r#"{"amount": 0.1}"#), dec!(0.1));
        assert_eq!(parse(r#"{"amount": 12.345678}"#), dec!(12.345678));
        assert_eq!(parse(r#"{"amount": 100}"#), dec!(100));
        assert_eq!(parse(r#"{"amount": "0.000001"}"#), dec!(0.000001));
    }

    #[test]
    fn text_that_is_not_a_number_in_plain_notation_is_refused() {
        for text in ["ten", " 1", "1e3", "+1", ".5", "5.", "", "1.2.3", "0x10"] {
            let json = format!(r#"{{"amount": "{text}"}}"#);
            assert!(serde_json::from_str::<Amount>(&json).is_err(), "{text}");
        }
        assert_eq!(parse(r#"{"amount": "-0.25"}"#), dec!(-0.25));
    }

    #[derive(serde::Deserialize)]
    struct Price {
        #[serde(default, deserialize_with = "money_option")]
        price: Option<Decimal>,
    }

    fn price(json: &str) -> Result<Option<Decimal>, String> {
        serde_json::from_str::<Price>(json)
            .map(|p| p.price)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn money_is_a_plain_decimal_string_only() {
        assert_eq!(price(r#"{"price": "12.50"}"#), Ok(Some(dec!(12.50))));
        assert_eq!(price(r#"{"price": null}"#), Ok(None));
        assert_eq!(price("{}"), Ok(None));
        for json in [
            r#"{"price": 1E+1}"#,
            r#"{"price": 1E-2}"#,
            r#"{"price": 10}"#,
            r#"{"price": 0.5}"#,
            r#"{"price": 100.00000000000000000000000001}"#,
            r#"{"price": "1E+1"}"#,
            r#"{"price": "1e-2"}"#,
        ] {
            let e = price(json).expect_err(json);
            assert!(e.contains("decimal string"), "{json}: {e}");
        }
        // 29 significant digits fit, for the field's scale check to refuse;
        // 30 do not, and `from_str` would round them to 100.
        assert_eq!(
            price(r#"{"price": "100.00000000000000000000000001"}"#),
            Ok(Some(dec!(100.00000000000000000000000001)))
        );
        let e = price(r#"{"price": "100.000000000000000000000000001"}"#).unwrap_err();
        assert!(e.contains("more digits"), "{e}");
    }

    #[test]
    fn a_number_too_small_for_any_bound_keeps_its_digits_for_the_check_to_refuse() {
        assert_eq!(parse(r#"{"amount": 1e-28}"#), dec!(1e-28));
    }
}
