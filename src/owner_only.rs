//! Files only the server's own user may read (ARCHITECTURE.md §19, "Files").
//!
//! A workload runs as another local user on the same host; if it can read the
//! SQLite database it can read `jwt_secret`, forge an admin token and credit
//! itself. So the data folder is 0700 and the database, its WAL and its
//! shared-memory file are 0600, whatever the umask and whatever an older
//! version left behind, and key files the server reads are 0600 too.
//!
//! The rule for what we find on disk: a path we own is tightened (and the
//! tightening logged); a path someone else owns that others can read, or a
//! folder that others can write without the sticky bit, cannot be made safe
//! by us, so the server refuses to start and says which path and why.

use anyhow::{bail, Context};
use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Bits that let anyone but the owner read, write or enter.
const OTHERS: u32 = 0o077;
const STICKY: u32 = 0o1000;
const OTHERS_WRITE: u32 = 0o022;

/// Makes `dir` (creating it and its missing parents) a folder only we can
/// enter. The current folder and shared sticky folders such as `/tmp` are
/// left as they are: the files inside are what must be private there, and
/// changing a folder the operator shares with others would break them.
pub fn private_dir(dir: &Path) -> anyhow::Result<()> {
    let meta = match std::fs::metadata(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("cannot create the data folder {}", dir.display()));
        }
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read the data folder {}", dir.display()))
        }
        Ok(meta) => meta,
    };
    let mode = meta.mode() & 0o7777;
    if mode & STICKY != 0 || is_current_dir(dir) || mode & OTHERS == 0 {
        return Ok(());
    }
    if meta.uid() == effective_uid() {
        std::fs::set_permissions(dir, Permissions::from_mode(mode & !OTHERS & 0o777))
            .with_context(|| format!("cannot make {} private (0700)", dir.display()))?;
        tracing::warn!(folder = %dir.display(), was = format!("{mode:o}"), "the data folder was open to other users: now 0700");
        return Ok(());
    }
    if mode & OTHERS_WRITE != 0 {
        bail!(
            "the data folder {} belongs to another user and others may write to it \
             (mode {mode:o}): move the database to a folder of the server's own user",
            dir.display()
        );
    }
    Ok(())
}

/// Makes `file` readable by us alone, creating it empty when `create` is set
/// and it does not exist. A missing file is fine when `create` is not set.
pub fn private_file(file: &Path, create: bool) -> anyhow::Result<()> {
    match std::fs::metadata(file) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            if !create {
                return Ok(());
            }
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(file)
            {
                // The mode given to open() passes through the umask, which
                // may only remove bits: 0600 stays 0600 or gets tighter.
                Ok(_) => Ok(()),
                // Another process made it in between: check that one instead.
                Err(e) if e.kind() == ErrorKind::AlreadyExists => private_file(file, false),
                Err(e) => Err(e).with_context(|| format!("cannot create {}", file.display())),
            }
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {}", file.display())),
        Ok(meta) => {
            let mode = meta.mode() & 0o7777;
            if mode & OTHERS == 0 {
                return Ok(());
            }
            if meta.uid() != effective_uid() {
                bail!(
                    "{} belongs to another user and others may read it (mode {mode:o}); \
                     the server will not use it: make it 0600 and owned by the server's user",
                    file.display()
                );
            }
            std::fs::set_permissions(file, Permissions::from_mode(mode & !OTHERS & 0o777))
                .with_context(|| format!("cannot make {} private (0600)", file.display()))?;
            tracing::warn!(file = %file.display(), was = format!("{mode:o}"), "a file of the server's was open to other users: now 0600");
            Ok(())
        }
    }
}

/// Reads a key file after making sure others cannot read it.
pub fn read_private_file(file: &Path) -> anyhow::Result<Vec<u8>> {
    private_file(file, false)?;
    std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))
}

/// The three files SQLite keeps for a database in WAL mode.
pub fn sqlite_files(db: &Path) -> [std::path::PathBuf; 3] {
    let with = |suffix: &str| {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        std::path::PathBuf::from(name)
    };
    [db.to_path_buf(), with("-wal"), with("-shm")]
}

/// Prepares a SQLite database's folder and files before it is opened: the
/// folder private, the database file created 0600 (SQLite gives its WAL and
/// shared-memory files the database file's mode) and any files an older
/// version left behind tightened.
pub fn prepare_sqlite(db: &Path) -> anyhow::Result<()> {
    if let Some(parent) = db.parent() {
        let folder = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        private_dir(folder)?;
    }
    let [main, wal, shm] = sqlite_files(db);
    private_file(&main, true)?;
    private_file(&wal, false)?;
    private_file(&shm, false)
}

/// Checks the WAL and shared-memory files again once SQLite has made them.
pub fn tighten_sqlite(db: &Path) -> anyhow::Result<()> {
    for file in sqlite_files(db) {
        private_file(&file, false)?;
    }
    Ok(())
}

fn is_current_dir(dir: &Path) -> bool {
    match (std::fs::canonicalize(dir), std::env::current_dir()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn effective_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("stat").mode() & 0o777
    }

    fn scratch() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("gpuex-owner-only-{}", uuid::Uuid::new_v4()));
        DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .expect("scratch folder");
        dir
    }

    #[test]
    fn a_new_data_folder_and_database_are_private_whatever_the_umask() {
        let root = scratch();
        let db = root.join("data/sub/gpuex.db");
        prepare_sqlite(&db).expect("prepare");
        assert_eq!(mode(&root.join("data/sub")), 0o700);
        assert_eq!(mode(&db), 0o600);
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn an_older_open_data_folder_and_its_files_are_tightened() {
        let root = scratch();
        let data = root.join("data");
        std::fs::create_dir(&data).expect("mkdir");
        std::fs::set_permissions(&data, Permissions::from_mode(0o755)).expect("chmod");
        let db = data.join("gpuex.db");
        for file in sqlite_files(&db) {
            std::fs::write(&file, b"").expect("write");
            std::fs::set_permissions(&file, Permissions::from_mode(0o644)).expect("chmod");
        }
        prepare_sqlite(&db).expect("prepare");
        assert_eq!(mode(&data), 0o700);
        for file in sqlite_files(&db) {
            assert_eq!(mode(&file), 0o600, "{}", file.display());
        }
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn a_key_file_open_to_others_is_tightened_before_it_is_read() {
        let root = scratch();
        let key = root.join("key.pem");
        std::fs::write(&key, b"secret").expect("write");
        std::fs::set_permissions(&key, Permissions::from_mode(0o644)).expect("chmod");
        assert_eq!(read_private_file(&key).expect("read"), b"secret");
        assert_eq!(mode(&key), 0o600);
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn a_shared_sticky_folder_is_left_alone() {
        // /tmp is the shared folder every Linux host has.
        let before = mode(Path::new("/tmp"));
        private_dir(Path::new("/tmp")).expect("a sticky folder is accepted");
        assert_eq!(mode(Path::new("/tmp")), before);
    }
}
