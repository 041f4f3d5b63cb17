//! Slurm accounting: `sacct --parsable2 --allocations` (or without
//! `--allocations`: job steps are skipped, their job holds the GPUs).
//!
//! The header names the columns, in any order; JobID, Start, End and
//! AllocTRES are required, Account or else User becomes the row's tag.
//! Times are Slurm's local time without a zone and are read as UTC.

use super::collect::{gpus_milli, Collector, FileError, RawJob};
use chrono::NaiveDateTime;
use std::io::BufRead;

struct Columns {
    job_id: usize,
    start: usize,
    end: usize,
    tres: usize,
    account: Option<usize>,
    user: Option<usize>,
    count: usize,
}

fn columns(header: &str) -> Result<Columns, FileError> {
    let names: Vec<&str> = header.trim_end_matches(['\r', '\n']).split('|').collect();
    let find = |name: &str| names.iter().position(|n| n.eq_ignore_ascii_case(name));
    let need = |name: &str| {
        find(name).ok_or_else(|| {
            FileError::Malformed(format!(
                "the header has no {name} column (run sacct with --parsable2 and \
                 --format=JobID,Start,End,AllocTRES,…)"
            ))
        })
    };
    Ok(Columns {
        job_id: need("JobID")?,
        start: need("Start")?,
        end: need("End")?,
        tres: need("AllocTRES")?,
        account: find("Account"),
        user: find("User"),
        count: names.len(),
    })
}

/// Slurm's times, or `None` for `Unknown`, `None` and empty.
fn time(text: &str) -> Result<Option<i64>, String> {
    if matches!(text, "" | "Unknown" | "None") {
        return Ok(None);
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
        .map(|t| Some(t.and_utc().timestamp()))
        .map_err(|_| format!("`{text}` is not a time like 2026-01-31T23:59:59"))
}

/// The GPUs in an AllocTRES value and the GRES type, if one is named:
/// `cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1`.
fn gpus(tres: &str) -> Result<(u32, Option<&str>), String> {
    let mut total = None;
    let mut typed: Option<(u32, &str)> = None;
    for item in tres.split(',') {
        let Some((key, value)) = item.split_once('=') else {
            continue;
        };
        if key == "gres/gpu" {
            total = Some(gpus_milli(value)?);
        } else if let Some(kind) = key.strip_prefix("gres/gpu:") {
            let count = gpus_milli(value)?;
            // Two types in one job: the larger names the job's model.
            if typed.is_none_or(|(c, _)| count > c) {
                typed = Some((count, kind));
            }
        }
    }
    Ok(match (total, typed) {
        (Some(total), kind) => (total, kind.map(|k| k.1)),
        (None, Some((count, kind))) => (count, Some(kind)),
        (None, None) => (0, None),
    })
}

pub fn read(mut reader: impl BufRead, sink: &mut Collector, limit: usize) -> Result<(), FileError> {
    let mut line = String::new();
    let header = loop {
        line.clear();
        if reader
            .read_line(&mut line)
            .map_err(|e| FileError::from_io(e, limit))?
            == 0
        {
            return Err(FileError::Malformed("the file is empty".to_owned()));
        }
        if !line.trim().is_empty() {
            break columns(&line)?;
        }
    };
    let mut number = 1u64;
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        if reader
            .read_until(b'\n', &mut bytes)
            .map_err(|e| FileError::from_io(e, limit))?
            == 0
        {
            return Ok(());
        }
        number += 1;
        let Ok(text) = std::str::from_utf8(&bytes) else {
            sink.reject(number, "not UTF-8");
            continue;
        };
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            continue;
        }
        row(text, number, &header, sink)?;
    }
}

fn row(text: &str, number: u64, c: &Columns, sink: &mut Collector) -> Result<(), FileError> {
    let fields: Vec<&str> = text.split('|').collect();
    if fields.len() != c.count {
        sink.reject(
            number,
            format!("{} fields where the header has {}", fields.len(), c.count),
        );
        return Ok(());
    }
    // Steps (`123.batch`, `123.0`, `123.extern`) run inside their job's allocation.
    if fields[c.job_id].contains('.') {
        sink.skip();
        return Ok(());
    }
    let parsed = (|| {
        let Some(start) = time(fields[c.start])? else {
            return Ok(None);
        };
        let end =
            time(fields[c.end])?.ok_or_else(|| "still running (End is Unknown)".to_owned())?;
        let (gpus, kind) = gpus(fields[c.tres])?;
        Ok::<_, String>(Some((start, end, gpus, kind)))
    })();
    match parsed {
        Err(reason) => sink.reject(number, reason),
        // Never started: it held nothing.
        Ok(None) => sink.skip(),
        Ok(Some((start, end, gpus_milli, model))) => {
            let tag = [("account", c.account), ("user", c.user)]
                .into_iter()
                .find_map(|(key, col)| {
                    let value = fields[col?].trim();
                    (!value.is_empty()).then(|| format!("{key}={value}"))
                });
            sink.job(
                number,
                RawJob {
                    start,
                    end,
                    gpus_milli,
                    model,
                    tag,
                },
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_tres_gives_gpus_and_their_type() {
        assert_eq!(
            gpus("billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1"),
            Ok((2000, Some("a100")))
        );
        assert_eq!(gpus("cpu=4,gres/gpu=1,mem=8G"), Ok((1000, None)));
        assert_eq!(gpus("cpu=4,mem=8G,node=1"), Ok((0, None)));
        assert_eq!(gpus("gres/gpu:h100=4"), Ok((4000, Some("h100"))));
        assert!(gpus("gres/gpu=x").is_err());
    }
}

#[cfg(test)]
mod million {
    use super::*;
    use crate::billing::imports::collect::Job;
    use std::io::{BufReader, Read};

    /// A sacct file of `rows` jobs made as it is read, so the test holds no file.
    struct Generated {
        rows: u64,
        next: u64,
        pending: Vec<u8>,
        at: usize,
    }

    impl Read for Generated {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.at == self.pending.len() {
                self.pending.clear();
                self.at = 0;
                if self.next == 0 {
                    self.pending
                        .extend_from_slice(b"JobID|Account|Start|End|AllocTRES\n");
                }
                while self.pending.len() < 64 * 1024 && self.next < self.rows {
                    let id = self.next;
                    let day = 1 + id % 28;
                    self.pending.extend_from_slice(
                        format!(
                            "{id}|acct{}|2026-11-{day:02}T01:00:00|2026-11-{day:02}T03:30:00|cpu=8,gres/gpu:h100={},mem=64G\n",
                            id % 50,
                            1 + id % 8
                        )
                        .as_bytes(),
                    );
                    self.next += 1;
                }
            }
            let n = buf.len().min(self.pending.len() - self.at);
            buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn a_million_jobs_take_32_bytes_each_whatever_the_file_weighs() {
        let rows = 1_000_000;
        let file = Generated {
            rows,
            next: 0,
            pending: Vec::new(),
            at: 0,
        };
        let h100 = crate::catalog::lookup("H100-SXM5-80GB").unwrap();
        let mut sink = Collector::new(h100);
        read(BufReader::new(file), &mut sink, usize::MAX).unwrap();
        assert_eq!((sink.jobs.len() as u64, sink.rejected_count), (rows, 0));
        assert_eq!(std::mem::size_of::<Job>(), 32);
        // About 80 bytes of file a row; what is kept is the jobs, grown by doubling.
        let kept = sink.jobs.capacity() * std::mem::size_of::<Job>();
        assert!(kept <= 2 * rows as usize * 32, "{kept} bytes kept");
        assert_eq!(sink.tags.len(), 50);
    }
}
