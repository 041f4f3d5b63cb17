//! The documented CSV (docs/IMPORTS.md): a header with `start`, `end` and
//! `gpus`, and optionally `gpu_model` and `tag`, in any order; other
//! columns are ignored. Times are RFC 3339 (`2026-01-31T23:59:59Z`) or,
//! without a zone, UTC; `gpus` may be a share of one GPU to 3 decimals;
//! `tag` is `key=value` (a bare value becomes `tag=value`).

use super::collect::{gpus_milli, Collector, FileError, RawJob};
use chrono::{DateTime, NaiveDateTime};
use std::io::Read;

/// The longest tag kept.
const MAX_TAG_CHARS: usize = 128;

fn time(text: &str) -> Result<i64, String> {
    let text = text.trim();
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp())
        .or_else(|_| {
            NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
                .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S"))
                .map(|t| t.and_utc().timestamp())
        })
        .map_err(|_| format!("`{text}` is not a time like 2026-01-31T23:59:59Z"))
}

fn tag(text: &str) -> Result<Option<String>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if text.chars().count() > MAX_TAG_CHARS || text.chars().any(char::is_control) {
        return Err(format!(
            "tag must be at most {MAX_TAG_CHARS} printable characters"
        ));
    }
    Ok(Some(if text.contains('=') {
        text.to_owned()
    } else {
        format!("tag={text}")
    }))
}

pub fn read(reader: impl Read, sink: &mut Collector, limit: usize) -> Result<(), FileError> {
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(reader);
    let header = csv.headers().map_err(|e| file_error(e, limit))?.clone();
    let find = |name: &str| header.iter().position(|h| h.eq_ignore_ascii_case(name));
    let need = |name: &str| {
        find(name).ok_or_else(|| {
            FileError::Malformed(format!(
                "the header has no `{name}` column (start,end,gpus[,gpu_model][,tag])"
            ))
        })
    };
    let (start, end, gpus) = (need("start")?, need("end")?, need("gpus")?);
    let (model, tag_column) = (find("gpu_model"), find("tag"));
    let mut record = csv::StringRecord::new();
    loop {
        match csv.read_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => match e.kind() {
                csv::ErrorKind::Utf8 { pos, .. } => {
                    let line = pos.as_ref().map_or(0, |p| p.line());
                    sink.reject(line, "not UTF-8");
                    continue;
                }
                _ => return Err(file_error(e, limit)),
            },
        }
        let line = record.position().map_or(0, |p| p.line());
        if record.iter().all(str::is_empty) {
            continue;
        }
        let field = |i: usize| record.get(i).unwrap_or("");
        let parsed = (|| {
            Ok::<_, String>((
                time(field(start)).map_err(|e| format!("start: {e}"))?,
                time(field(end)).map_err(|e| format!("end: {e}"))?,
                gpus_milli(field(gpus))?,
                tag_column.map(|c| tag(field(c))).transpose()?.flatten(),
            ))
        })();
        match parsed {
            Err(reason) => sink.reject(line, reason),
            Ok((start, end, gpus_milli, tag)) => sink.job(
                line,
                RawJob {
                    start,
                    end,
                    gpus_milli,
                    model: model.map(field).filter(|m| !m.is_empty()),
                    tag,
                },
            )?,
        }
    }
}

fn file_error(e: csv::Error, limit: usize) -> FileError {
    match e.into_kind() {
        csv::ErrorKind::Io(io) => FileError::from_io(io, limit),
        other => FileError::Malformed(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_take_a_zone_or_mean_utc() {
        assert_eq!(time("1970-01-01T01:00:00Z"), Ok(3600));
        assert_eq!(time("1970-01-01T02:00:00+01:00"), Ok(3600));
        assert_eq!(time("1970-01-01 01:00:00"), Ok(3600));
        assert!(time("yesterday").is_err());
    }

    #[test]
    fn bare_tags_get_a_key() {
        assert_eq!(tag("team=risk"), Ok(Some("team=risk".to_owned())));
        assert_eq!(tag("risk"), Ok(Some("tag=risk".to_owned())));
        assert_eq!(tag(""), Ok(None));
        assert!(tag(&"x".repeat(200)).is_err());
    }
}
