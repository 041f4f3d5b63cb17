//! The bounds of every decimal a caller sends: money and quantities.
//!
//! Each kind of decimal input has one [`Bounds`], which both checks the
//! value at the edge (a 422 naming the field) and describes it in the
//! OpenAPI schema, so the two cannot drift apart. With every input bounded,
//! no product the engine or the ledger forms from inputs comes near
//! `Decimal`'s range (about 7.9 × 10²⁸): the largest is an hourly price
//! below 10⁶ times a window below 10⁸ seconds.
#![deny(clippy::float_arithmetic)]

use crate::error::FieldError;
use rust_decimal::Decimal;
use utoipa::openapi::schema::{
    AllOfBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::RefOr;

pub use gpuex_api::money_out;

/// What one kind of decimal input may hold.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Digits before the point: the value is below 10^`integer_digits`.
    pub integer_digits: u32,
    /// Digits after the point.
    pub scale: u32,
    /// Whether `0` is allowed (a budget of 0 removes it); never below it.
    pub zero: bool,
    /// Money (ARCHITECTURE.md §19 "Money in"): a decimal string only, never a JSON
    /// number, kept at `scale` decimals once accepted.
    pub money: bool,
}

/// Credits and adjustments: below 10⁹, to the micro-unit.
pub const AMOUNT: Bounds = Bounds {
    integer_digits: 9,
    scale: 6,
    zero: false,
    money: true,
};
/// A monthly budget: like an amount, and `0` removes it.
pub const BUDGET: Bounds = Bounds {
    integer_digits: 9,
    scale: 6,
    zero: true,
    money: true,
};
/// What a whole order pays at most per hour (spot's bid): below 10⁶.
pub const PRICE_PER_HOUR: Bounds = Bounds {
    integer_digits: 6,
    scale: 6,
    zero: false,
    money: true,
};
/// A list price per unit-hour: below 10⁶.
pub const LIST_PRICE: Bounds = Bounds {
    integer_digits: 6,
    scale: 6,
    zero: false,
    money: true,
};
/// TFLOPS asked for: below 10⁵ (beyond any 8-GPU node), to 3 decimals like
/// the units a MIG profile holds, so at least 0.001.
pub const TFLOPS: Bounds = Bounds {
    integer_digits: 5,
    scale: 3,
    zero: false,
    money: false,
};

impl Bounds {
    /// The exclusive upper limit, 10^`integer_digits`.
    pub fn limit(&self) -> Decimal {
        Decimal::from(10_u64.pow(self.integer_digits))
    }

    /// The smallest positive value, 10^-`scale`.
    pub fn step(&self) -> Decimal {
        Decimal::new(1, self.scale)
    }

    pub fn contains(&self, value: Decimal) -> bool {
        let floor_ok = if self.zero {
            value >= Decimal::ZERO
        } else {
            value > Decimal::ZERO
        };
        floor_ok && value < self.limit() && value.normalize().scale() <= self.scale
    }

    /// What the field must be, in words, for the 422 and the schema.
    pub fn rule(&self) -> String {
        let floor = if self.zero { "0 or more" } else { "above 0" };
        format!(
            "must be {floor} and below {}, with at most {} decimals",
            self.limit(),
            self.scale
        )
    }

    /// `None` when `value` is within bounds, else the error naming `field`.
    pub fn check(&self, field: impl Into<String>, value: Decimal) -> Option<FieldError> {
        (!self.contains(value)).then(|| FieldError::new(field, self.rule()))
    }

    /// Like [`Bounds::check`], and an accepted value is put at this kind's
    /// scale: trailing zeros beyond it (`"5.000…0"`, 26 of them) go, so no
    /// answer echoes them and every figure of the kind has one scale at most.
    /// Exact: the check has refused any digit that is not zero beyond it.
    pub fn take(&self, field: impl Into<String>, value: &mut Decimal) -> Option<FieldError> {
        let error = self.check(field, *value);
        if error.is_none() && value.scale() > self.scale {
            value.rescale(self.scale);
        }
        error
    }

    /// Decimal text within bounds: at most `integer_digits` digits after
    /// any leading zeros, then a point and at most `scale` more before any
    /// trailing zeros: exactly the values [`Bounds::contains`] accepts.
    pub fn pattern(&self) -> String {
        format!(
            "^0*[0-9]{{1,{}}}(\\.[0-9]{{1,{}}}0*)?$",
            self.integer_digits, self.scale
        )
    }

    /// Text that is not zero holds a digit that is not zero.
    const NONZERO: &'static str = "[1-9]";

    /// Like [`Bounds::pattern`], for values above zero, in one pattern: a
    /// whole part that is not zero, or a zero whole part and a fraction with
    /// a digit that is not zero (each place of the first such digit spelled
    /// out, so the fraction keeps at most `scale` places). One plain string
    /// schema, which every client generator reads as a string.
    pub fn positive_pattern(&self) -> String {
        let fractions: Vec<String> = (0..self.scale)
            .map(|zeros| {
                let rest = self.scale - 1 - zeros;
                format!("0{{{zeros}}}[1-9][0-9]{{0,{rest}}}")
            })
            .collect();
        format!(
            "^0*([1-9][0-9]{{0,{}}}(\\.[0-9]{{1,{}}}0*)?|0\\.({})0*)$",
            self.integer_digits - 1,
            self.scale,
            fractions.join("|")
        )
    }

    /// A string in decimal notation (exact), or a JSON number (read from the
    /// digits the client wrote) within the same bounds.
    #[allow(
        clippy::float_arithmetic,
        reason = "the schema's maximum is a JSON Schema number, a document's bound, never money"
    )]
    pub fn schema(&self, example: &str) -> RefOr<Schema> {
        let digits = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .pattern(Some(self.pattern()))
            .examples([serde_json::Value::String(example.to_owned())]);
        if self.money {
            // Money is a string only (ARCHITECTURE.md §19): a JSON number has been a binary float.
            let described = format!(
                "Money: a decimal string (no JSON number, no exponent), {}. \
                 Kept and answered at {} decimals at most.",
                self.rule().trim_start_matches("must be "),
                self.scale
            );
            let digits = if self.zero {
                digits
            } else {
                digits.pattern(Some(self.positive_pattern()))
            };
            return digits.description(Some(described)).into();
        }
        let text: RefOr<Schema> = if self.zero {
            digits.into()
        } else {
            AllOfBuilder::new()
                .item(digits)
                .item(
                    ObjectBuilder::new()
                        .schema_type(SchemaType::Type(Type::String))
                        .pattern(Some(Self::NONZERO)),
                )
                .into()
        };
        let limit = 10_f64.powi(self.integer_digits as i32);
        let step = 10_f64.powi(-(self.scale as i32));
        let number = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Number))
            .maximum(Some(limit - step))
            .multiple_of(Some(step));
        let number = if self.zero {
            number.minimum(Some(0))
        } else {
            number.exclusive_minimum(Some(0))
        };
        OneOfBuilder::new()
            .item(text)
            .item(number)
            .description(Some(format!(
                "A decimal: {}.",
                self.rule().trim_start_matches("must be ")
            )))
            .into()
    }
}

/// Adds `term` to `sum` unless that overflows `Decimal`; then `sum` stays as
/// it was and the skipped term is logged. For sums over stored figures, which
/// may predate the bounds on input (a node's usage before ARCHITECTURE.md §19's
/// bounds): a view shows what it can add up rather than failing for good.
pub fn add_stored(sum: &mut Decimal, term: Decimal, what: &str) {
    match sum.checked_add(term) {
        Some(total) => *sum = total,
        None => tracing::warn!(%term, what, "a stored figure overflows its sum; skipped"),
    }
}

/// The sum of stored figures, each overflowing term skipped (see [`add_stored`]).
pub fn sum_stored(terms: impl IntoIterator<Item = Decimal>, what: &str) -> Decimal {
    let mut sum = Decimal::ZERO;
    for term in terms {
        add_stored(&mut sum, term, what);
    }
    sum
}

/// Marker types whose OpenAPI schema is one of the bounds above:
/// `#[schema(value_type = crate::bounds::Amount)]`.
macro_rules! schema_types {
    ($($(#[$doc:meta])* $name:ident = $bounds:ident, $example:literal;)*) => {$(
        $(#[$doc])*
        pub struct $name;
        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                $bounds.schema($example)
            }
        }
        impl utoipa::ToSchema for $name {}
    )*};
}

schema_types! {
    /// Money credited or adjusted.
    Amount = AMOUNT, "100.00";
    /// A monthly budget.
    BudgetLimit = BUDGET, "500.00";
    /// The most an order pays per hour.
    PricePerHour = PRICE_PER_HOUR, "0.50";
    /// A list price per unit-hour.
    ListPrice = LIST_PRICE, "0.0021";
    /// TFLOPS at the asked precision.
    Tflops = TFLOPS, "100";
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn an_amount_is_positive_below_a_billion_and_to_the_micro_unit() {
        assert!(AMOUNT.contains(dec!(0.000001)));
        assert!(AMOUNT.contains(dec!(999999999.999999)));
        assert!(!AMOUNT.contains(dec!(1000000000)));
        assert!(!AMOUNT.contains(Decimal::ZERO));
        assert!(!AMOUNT.contains(dec!(-1)));
        assert!(!AMOUNT.contains(dec!(0.0000001)));
        assert!(
            AMOUNT.contains(dec!(1.5000000)),
            "trailing zeros are not decimals"
        );
        assert!(BUDGET.contains(Decimal::ZERO));
    }

    #[test]
    fn the_schema_accepts_the_text_the_check_accepts() {
        let matches = |b: &Bounds, s: &str| {
            regex::Regex::new(&b.pattern()).unwrap().is_match(s)
                && (b.zero || regex::Regex::new(Bounds::NONZERO).unwrap().is_match(s))
        };
        for s in [
            "1",
            "0.5",
            "999999999.999999",
            "0000000000001",
            "0.000001",
            "1.5000000",
        ] {
            assert!(matches(&AMOUNT, s), "{s}");
            assert!(AMOUNT.contains(s.parse().unwrap()), "{s}");
        }
        for s in [
            "0",
            "0.000",
            "1000000000",
            "1.0000001",
            "-1",
            "1e3",
            " 1",
            "1.",
            ".5",
            "+1",
        ] {
            assert!(!matches(&AMOUNT, s), "{s}");
        }
        assert!(matches(&BUDGET, "0") && BUDGET.contains(Decimal::ZERO));
        assert!(!matches(&TFLOPS, "0.0004") && !TFLOPS.contains(dec!(0.0004)));
    }

    #[test]
    fn the_positive_pattern_accepts_exactly_the_positive_text_the_pattern_does() {
        let one = regex::Regex::new(&AMOUNT.positive_pattern()).unwrap();
        let (digits, nonzero) = (
            regex::Regex::new(&AMOUNT.pattern()).unwrap(),
            regex::Regex::new(Bounds::NONZERO).unwrap(),
        );
        for s in [
            "1",
            "0.5",
            "0.000001",
            "0.0000010",
            "00.1",
            "999999999.999999",
            "0000000000001",
            "1.5000000",
            "0",
            "0.000",
            "0.0000001",
            "1.0000001",
            "1000000000",
            "-1",
            "1e3",
            ".5",
            "1.",
            "0.100000",
            "0.010203",
            "10",
            "100.000000",
        ] {
            assert_eq!(
                one.is_match(s),
                digits.is_match(s) && nonzero.is_match(s),
                "{s}"
            );
        }
    }

    #[test]
    fn a_sum_of_stored_figures_skips_a_term_that_would_overflow() {
        assert_eq!(
            sum_stored([dec!(1), Decimal::MAX, dec!(2), Decimal::MAX], "test"),
            dec!(3)
        );
        assert_eq!(sum_stored([Decimal::MAX, dec!(1)], "test"), Decimal::MAX);
        assert_eq!(sum_stored([dec!(1.5), dec!(2)], "test"), dec!(3.5),);
        let mut sum = Decimal::MAX;
        add_stored(&mut sum, dec!(1), "test");
        assert_eq!(sum, Decimal::MAX);
    }

    #[test]
    fn the_rule_names_the_limit() {
        assert_eq!(
            TFLOPS.rule(),
            "must be above 0 and below 100000, with at most 3 decimals"
        );
    }
}
