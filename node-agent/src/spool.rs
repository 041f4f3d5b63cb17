//! The usage spool: every batch is written to disk before it is sent and
//! deleted only when the server acknowledged it, so no usage is lost to an
//! agent crash or a server outage.
//!
//! Layout of the spool directory:
//! - `seq`: the last sequence number handed out (decimal text);
//! - `usage-<seq, 20 digits>.json`: one unacknowledged [`UsageBatch`] each.
//!
//! Every file is written to a `.tmp` name, fsync'd, renamed into place, and the
//! directory fsync'd, so a crash leaves either the old or the new file whole.

use gpuex_wire::protocol::{UsageBatch, UsageRecord};
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use uuid::Uuid;

/// A directory of unacknowledged usage batches.
pub struct Spool {
    dir: PathBuf,
    last_seq: u64,
}

impl Spool {
    /// Open (or create) the spool in `dir`. The next seq continues after both the
    /// persisted counter and any batch still on disk.
    pub fn open(dir: &Path) -> io::Result<Spool> {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        fs::create_dir_all(dir)?;
        // The agent's alone, whatever the umask (ARCHITECTURE.md §19): no workload
        // reaches into it (their folders are under `--work-dir`, outside).
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
        // And so is every file in it, also one an older agent left wider.
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            if meta.is_file() && meta.mode() & 0o077 != 0 {
                fs::set_permissions(entry.path(), fs::Permissions::from_mode(0o600))?;
            }
        }
        let persisted = fs::read_to_string(dir.join("seq"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0);
        let mut spool = Spool {
            dir: dir.to_path_buf(),
            last_seq: persisted,
        };
        let on_disk = spool.pending()?.last().copied().unwrap_or(0);
        spool.last_seq = spool.last_seq.max(on_disk);
        Ok(spool)
    }

    /// The last seq handed out.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Make sure the next seq is above `seq` (the server's `last_usage_seq`), so
    /// a lost spool never reuses a number the server has applied.
    pub fn advance_past(&mut self, seq: u64) -> io::Result<()> {
        if seq > self.last_seq {
            self.last_seq = seq;
            self.write_seq()?;
        }
        Ok(())
    }

    /// Number `records` with the next seq and store them durably.
    pub fn push(&mut self, agent_id: Uuid, records: Vec<UsageRecord>) -> io::Result<UsageBatch> {
        let batch = UsageBatch {
            agent_id,
            seq: self.last_seq + 1,
            records,
        };
        // The counter first: a crash between the two never hands out the seq twice.
        self.last_seq = batch.seq;
        self.write_seq()?;
        let json = serde_json::to_vec_pretty(&batch).map_err(io::Error::other)?;
        self.write_atomic(&self.batch_path(batch.seq), &json)?;
        Ok(batch)
    }

    /// Seqs of the batches waiting for an acknowledgement, oldest first.
    pub fn pending(&self) -> io::Result<Vec<u64>> {
        let mut seqs: Vec<u64> = fs::read_dir(&self.dir)?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                name.strip_prefix("usage-")?
                    .strip_suffix(".json")?
                    .parse()
                    .ok()
            })
            .collect();
        seqs.sort_unstable();
        Ok(seqs)
    }

    /// Read one waiting batch.
    pub fn load(&self, seq: u64) -> io::Result<UsageBatch> {
        let bytes = fs::read(self.batch_path(seq))?;
        serde_json::from_slice(&bytes).map_err(io::Error::other)
    }

    /// The server acknowledged `seq`: forget it.
    pub fn ack(&mut self, seq: u64) -> io::Result<()> {
        match fs::remove_file(self.batch_path(seq)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => sync_dir(&self.dir),
        }
    }

    /// Drop every waiting batch at or below `seq` (the server has applied them).
    pub fn ack_through(&mut self, seq: u64) -> io::Result<()> {
        for s in self.pending()?.into_iter().filter(|&s| s <= seq) {
            self.ack(s)?;
        }
        Ok(())
    }

    fn batch_path(&self, seq: u64) -> PathBuf {
        self.dir.join(format!("usage-{seq:020}.json"))
    }

    fn write_seq(&self) -> io::Result<()> {
        self.write_atomic(&self.dir.join("seq"), self.last_seq.to_string().as_bytes())
    }

    fn write_atomic(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        write_atomic(&self.dir, path, bytes)
    }
}

/// Write `bytes` to `path` in `dir` durably: tmp file, fsync, rename, fsync dir.
pub fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(&tmp, path)?;
    sync_dir(dir)
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use rust_decimal_macros::dec;

    /// A scratch directory, removed when the test ends.
    struct TempDir(PathBuf);

    impl std::ops::Deref for TempDir {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn temp_dir() -> TempDir {
        let dir = std::env::temp_dir().join(format!("gpuex-spool-{}", Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn record() -> UsageRecord {
        UsageRecord {
            lease_id: Uuid::from_u128(7),
            interval_start: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
            interval_end: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 10).unwrap(),
            tflops_s: dec!(9890),
            vram_gb_s: dec!(800),
            mean_utilization: None,
            peak_memory_mb: None,
        }
    }

    #[test]
    fn pushed_batches_get_consecutive_seqs_and_wait_on_disk() {
        let dir = temp_dir();
        let mut spool = Spool::open(&dir).unwrap();
        let a = spool.push(Uuid::nil(), vec![record()]).unwrap();
        let b = spool.push(Uuid::nil(), vec![record()]).unwrap();
        assert_eq!((a.seq, b.seq), (1, 2));
        assert_eq!(spool.pending().unwrap(), vec![1, 2]);
        assert_eq!(spool.load(2).unwrap(), b);
    }

    #[test]
    fn a_restarted_spool_resends_what_was_not_acknowledged_and_keeps_counting() {
        let dir = temp_dir();
        {
            let mut spool = Spool::open(&dir).unwrap();
            for _ in 0..3 {
                spool.push(Uuid::nil(), vec![record()]).unwrap();
            }
            spool.ack(1).unwrap();
            // Dropped without any shutdown: as after kill -9.
        }
        let mut spool = Spool::open(&dir).unwrap();
        assert_eq!(spool.pending().unwrap(), vec![2, 3]);
        assert_eq!(spool.load(2).unwrap().records, vec![record()]);
        assert_eq!(spool.push(Uuid::nil(), vec![]).unwrap().seq, 4);
    }

    #[test]
    fn acknowledged_batches_leave_the_spool_but_their_seq_is_never_reused() {
        let dir = temp_dir();
        let mut spool = Spool::open(&dir).unwrap();
        spool.push(Uuid::nil(), vec![record()]).unwrap();
        spool.push(Uuid::nil(), vec![record()]).unwrap();
        spool.ack_through(2).unwrap();
        assert!(spool.pending().unwrap().is_empty());
        let reopened = Spool::open(&dir).unwrap();
        assert_eq!(reopened.last_seq(), 2);
    }

    #[test]
    fn the_servers_last_seq_moves_the_counter_forward_only() {
        let dir = temp_dir();
        let mut spool = Spool::open(&dir).unwrap();
        spool.advance_past(41).unwrap();
        assert_eq!(spool.push(Uuid::nil(), vec![]).unwrap().seq, 42);
        spool.advance_past(5).unwrap();
        assert_eq!(spool.push(Uuid::nil(), vec![]).unwrap().seq, 43);
    }

    #[test]
    fn the_spool_and_its_files_are_the_agents_alone_even_ones_left_wider() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir();
        fs::set_permissions(&*dir, fs::Permissions::from_mode(0o777)).unwrap();
        fs::write(dir.join("agent_id"), Uuid::nil().to_string()).unwrap();
        fs::set_permissions(dir.join("agent_id"), fs::Permissions::from_mode(0o644)).unwrap();
        let mut spool = Spool::open(&dir).unwrap();
        spool.push(Uuid::nil(), vec![record()]).unwrap();
        assert_eq!(
            fs::metadata(&*dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        for entry in fs::read_dir(&*dir).unwrap() {
            let mode = entry.unwrap().metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }

    #[test]
    fn a_torn_tmp_file_from_a_crash_is_ignored() {
        let dir = temp_dir();
        fs::write(dir.join("usage-00000000000000000009.tmp"), b"{half").unwrap();
        let spool = Spool::open(&dir).unwrap();
        assert!(spool.pending().unwrap().is_empty());
        assert_eq!(spool.last_seq(), 0);
    }
}
