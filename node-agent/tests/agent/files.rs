//! Files around an agent under test: its log, its leases' folders, and
//! scratch files removed when dropped.

use std::path::{Path, PathBuf};

/// A file removed when dropped.
pub struct TempFile(pub PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Where the agent on `spool` puts its leases' folders by default.
pub fn work_root(spool: &Path) -> PathBuf {
    let mut name = spool.file_name().unwrap().to_os_string();
    name.push("-work");
    spool.with_file_name(name)
}

/// The agent's log so far (its stderr goes to `<spool>.log`), without
/// its colours.
pub fn agent_log(spool: &Path) -> String {
    let raw = std::fs::read_to_string(spool.with_extension("log")).unwrap_or_default();
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
