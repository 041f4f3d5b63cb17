//! How a value is written in an export's cell, and the writers: decimals
//! with a fraction always shown, UTC datetimes, JSON held as text, ASCII
//! JSON, and CSV through the `csv` crate with the header from the row type.

use super::period;
use rust_decimal::Decimal;
use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use std::io;

/// A decimal with a fraction always shown (`612.0`), so a column of whole
/// numbers still reads as decimal: text in CSV, a number in JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecimalCell(pub Decimal);

impl Serialize for DecimalCell {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // serde_json writes a raw value's text as it is, so the number goes
        // out digit for digit with no float between; csv writes the same text
        // as the field. The newtype keeps csv's header pass, which refuses a
        // struct inside a field, from looking into the raw value.
        let raw = serde_json::value::RawValue::from_string(decimal_text(self.0))
            .map_err(S::Error::custom)?;
        serializer.serialize_newtype_struct("DecimalCell", &raw)
    }
}

/// Seconds since the epoch, written as a UTC datetime.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimeCell(pub i64);

impl Serialize for TimeCell {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&period::rfc3339(self.0))
    }
}

/// A value held in one cell as ASCII JSON text (Tags, SkuPriceDetails).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonCell<T>(pub T);

impl<T: Serialize> Serialize for JsonCell<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut text = Vec::new();
        write_json(&mut text, &self.0).map_err(S::Error::custom)?;
        serializer.serialize_str(std::str::from_utf8(&text).map_err(S::Error::custom)?)
    }
}

/// A decimal with a fraction always shown (`612.0`).
pub fn decimal_text(d: Decimal) -> String {
    if d.is_zero() {
        return "0.0".to_owned();
    }
    let s = d.normalize().to_string();
    if s.contains('.') {
        s
    } else {
        s + ".0"
    }
}

/// serde_json's compact JSON with every non-ASCII character written as a
/// `\u` escape, so FOCUS JSON is ASCII like FOCUS CSV.
struct AsciiJson;

impl serde_json::ser::Formatter for AsciiJson {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut plain = 0;
        for (at, c) in fragment.char_indices() {
            if !c.is_ascii() {
                writer.write_all(&fragment.as_bytes()[plain..at])?;
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(writer, "\\u{unit:04x}")?;
                }
                plain = at + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[plain..])
    }
}

/// Appends `value` to `out` as ASCII JSON.
pub fn write_json(out: &mut Vec<u8>, value: &impl Serialize) -> serde_json::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(out, AsciiJson))
}

/// A CSV writer of records without a header (see [`csv_header`]).
pub fn csv_writer<W: io::Write>(out: W) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out)
}

/// The CSV header line of rows of type `R`: its serde field names.
pub fn csv_header<R: Serialize + Default>() -> csv::Result<Vec<u8>> {
    // csv writes a header only ahead of a first record, and an export with
    // no lines still has its header: the header of a blank record, alone.
    let mut w = csv::WriterBuilder::new()
        .has_headers(true)
        .from_writer(Vec::new());
    w.serialize(R::default())?;
    let mut text = w.into_inner().map_err(|e| e.into_error())?;
    let end = text
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |at| at + 1);
    text.truncate(end);
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn decimals_always_have_a_fraction() {
        assert_eq!(decimal_text(dec!(612)), "612.0");
        assert_eq!(decimal_text(dec!(-1.50)), "-1.5");
        assert_eq!(decimal_text(dec!(0.000)), "0.0");
    }

    #[test]
    fn json_escapes_every_character_beyond_ascii() {
        let mut out = Vec::new();
        write_json(
            &mut out,
            &serde_json::json!({"caf\u{e9}": "\u{1f600} \"q\"\n"}),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"caf\u00e9":"\ud83d\ude00 \"q\"\n"}"#
        );
    }

    #[test]
    fn csv_fields_with_commas_and_quotes_are_quoted() {
        let mut out = Vec::new();
        let mut w = csv_writer(&mut out);
        w.serialize(("a,b", "say \"hi\"", None::<&str>)).unwrap();
        drop(w);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a,b\",\"say \"\"hi\"\"\",\n"
        );
    }
}
