//! What a lease's workload leaves in `outputs/`, sent to the server
//! (ARCHITECTURE.md §21): the files that changed since the last upload, each streamed
//! to `PUT /v1/agent/assignments/{lease}/outputs/{name}`.
//!
//! The folder is the workload's: it may hold symbolic links to the agent's
//! secrets, FIFOs that block a reader, or swap a file for a link between
//! the walk and the open. So nothing is followed: each file is opened with
//! `O_NOFOLLOW | O_NONBLOCK`, must be a regular file, and the path the open
//! actually reached (read back from `/proc/self/fd`) must lie in the folder.

use crate::client::{ApiClient, ClientError};
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use uuid::Uuid;

/// The most files one lease's outputs may hold; past it the rest are not sent.
pub const MAX_FILES: usize = 10_000;
/// The deepest folder nesting walked.
const MAX_DEPTH: usize = 32;

/// What identifies one version of a file: its size and change time.
pub type Signature = (u64, i64, i64);

/// The versions already sent, by name.
pub type Sent = BTreeMap<String, Signature>;

/// One file found under the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its path under the folder, `/`-separated.
    pub name: String,
    pub path: PathBuf,
    pub signature: Signature,
}

/// The regular files under `dir` (not following links, not leaving its file
/// system), by name; names that are not UTF-8 are skipped.
pub fn walk(dir: &Path) -> Vec<Found> {
    let Ok(root) = std::fs::symlink_metadata(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), String::new(), 0usize)];
    while let Some((folder, prefix, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let name = format!("{prefix}{file_name}");
            if meta.dev() != root.dev() {
                continue;
            }
            if meta.is_dir() && depth + 1 < MAX_DEPTH {
                pending.push((entry.path(), format!("{name}/"), depth + 1));
            } else if meta.is_file() && found.len() < MAX_FILES {
                found.push(Found {
                    name,
                    path: entry.path(),
                    signature: (meta.size(), meta.mtime(), meta.mtime_nsec()),
                });
            }
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Open `path` for reading if it is a regular file that really lies under
/// `dir` (canonical): never through a link, never a FIFO or device.
pub fn open_checked(dir: &Path, path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let reached = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    if !reached.starts_with(dir) {
        return Err(std::io::Error::other(format!(
            "it leads out of the folder, to {}",
            reached.display()
        )));
    }
    Ok((file, meta.size()))
}

/// Why an upload round stopped.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// The server refuses more of this lease's outputs (quota, ended): no
    /// later round will do better.
    #[error("the server refuses the lease's outputs: {0}")]
    Refused(ClientError),
    /// Out of reach or failing for now: the next round tries again.
    #[error("{0}")]
    Later(ClientError),
}

/// Send every file under `dir` whose version `sent` does not hold; `sent`
/// records each one that arrived. Returns how many were sent.
pub async fn upload_changed(
    client: &ApiClient,
    lease: Uuid,
    dir: &Path,
    sent: &mut Sent,
) -> Result<usize, UploadError> {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return Ok(0);
    };
    let walked = {
        let dir = dir.clone();
        tokio::task::spawn_blocking(move || walk(&dir))
            .await
            .unwrap_or_default()
    };
    let mut count = 0;
    for file in walked {
        if sent.get(&file.name) == Some(&file.signature) {
            continue;
        }
        let (handle, size) = match open_checked(&dir, &file.path) {
            Ok(opened) => opened,
            Err(e) => {
                tracing::warn!(lease_id = %lease, name = %file.name, "not sending an output: {e}");
                continue;
            }
        };
        let path = format!(
            "/v1/agent/assignments/{lease}/outputs/{}",
            gpuex_wire::protocol::path_segment(&file.name)
        );
        match client
            .put_file(&path, tokio::fs::File::from_std(handle), size)
            .await
        {
            Ok(()) => {
                sent.insert(file.name, file.signature);
                count += 1;
            }
            Err(e) if e.is_permanent() => return Err(UploadError::Refused(e)),
            Err(e) => return Err(UploadError::Later(e)),
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_finds_files_and_never_follows_links_or_opens_fifos() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir(root.join("sub")).expect("mkdir");
        std::fs::write(root.join("a.txt"), b"a").expect("write");
        std::fs::write(root.join("sub/b.txt"), b"bb").expect("write");
        let secret = tempfile::NamedTempFile::new().expect("secret");
        std::os::unix::fs::symlink(secret.path(), root.join("link")).expect("symlink");
        std::os::unix::fs::symlink("/etc", root.join("etc")).expect("symlink");
        nix::unistd::mkfifo(&root.join("fifo"), nix::sys::stat::Mode::S_IRWXU).expect("fifo");
        let names: Vec<String> = walk(&root).into_iter().map(|f| f.name).collect();
        assert_eq!(names, ["a.txt", "sub/b.txt"]);
        assert!(
            open_checked(&root, &root.join("link")).is_err(),
            "a link is never opened"
        );
        assert!(
            open_checked(&root, &root.join("fifo")).is_err(),
            "a FIFO is never read"
        );
        let (_, size) = open_checked(&root, &root.join("sub/b.txt")).expect("a file opens");
        assert_eq!(size, 2);
        // A folder swapped for a link after the walk leads out: refused.
        assert!(open_checked(&root, &root.join("etc/hostname")).is_err());
    }
}
