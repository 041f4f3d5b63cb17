//! A lease's checkpoint folder as one tar archive (ARCHITECTURE.md §21): packed from
//! the workload's folder with the care [`crate::outputs`] takes (regular
//! files only, opened without following links, really inside the folder),
//! and unpacked into the next lease's fresh folder: regular files and
//! folders only, every path plain and relative, everything the lease user's.

use crate::outputs::{open_checked, walk, Found};
use std::io::Read;
use std::path::{Component, Path};

/// What one version of the folder looks like: its files' names and versions.
pub type Listing = Vec<(String, crate::outputs::Signature)>;

/// The folder's regular files, as a [`Listing`].
pub fn listing(dir: &Path) -> (Vec<Found>, Listing) {
    let found = walk(dir);
    let listing = found
        .iter()
        .map(|f| (f.name.clone(), f.signature))
        .collect();
    (found, listing)
}

/// Write `dir`'s regular files (canonical `dir`) as a tar archive to `out`.
/// A file that cannot be opened safely is left out. Returns how many went in.
pub fn pack(dir: &Path, found: &[Found], out: std::fs::File) -> std::io::Result<usize> {
    let mut builder = tar::Builder::new(std::io::BufWriter::new(out));
    builder.mode(tar::HeaderMode::Deterministic);
    let mut packed = 0;
    for file in found {
        let Ok((handle, size)) = open_checked(dir, &file.path) else {
            continue;
        };
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(size);
        header.set_mode(0o644);
        header.set_mtime(u64::try_from(file.signature.1).unwrap_or(0));
        // The size read at open: a file still growing is cut there.
        builder.append_data(&mut header, &file.name, handle.take(size))?;
        packed += 1;
    }
    builder
        .into_inner()?
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()?;
    Ok(packed)
}

/// Unpack `archive` into the fresh folder `dest`, owned by `owner`.
/// Anything but plain relative files and folders is refused.
pub fn unpack(archive: impl Read, dest: &Path, owner: (u32, u32)) -> Result<usize, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut archive = tar::Archive::new(archive);
    let mut count = 0;
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| format!("a bad archive: {e}"))?;
        let path = entry.path().map_err(|e| e.to_string())?.into_owned();
        if !path.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(format!("`{}` is not a plain relative path", path.display()));
        }
        let target = dest.join(&path);
        match entry.header().entry_type() {
            tar::EntryType::Directory => make_dirs(dest, &target, owner)?,
            tar::EntryType::Regular => {
                if let Some(parent) = target.parent() {
                    make_dirs(dest, parent, owner)?;
                }
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .custom_flags(nix::libc::O_NOFOLLOW)
                    .open(&target)
                    .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
                std::io::copy(&mut entry, &mut file)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                std::os::unix::fs::fchown(&file, Some(owner.0), Some(owner.1))
                    .map_err(|e| e.to_string())?;
                count += 1;
            }
            other => return Err(format!("`{}` is a {other:?}, not a file", path.display())),
        }
    }
    Ok(count)
}

/// `target` and the folders above it up to `root`, each the owner's.
fn make_dirs(root: &Path, target: &Path, owner: (u32, u32)) -> Result<(), String> {
    let relative = target.strip_prefix(root).map_err(|e| e.to_string())?;
    let mut at = root.to_path_buf();
    for part in relative.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => return Err(format!("{} is not a folder", at.display())),
            Err(_) => {
                std::fs::create_dir(&at).map_err(|e| e.to_string())?;
                std::os::unix::fs::chown(&at, Some(owner.0), Some(owner.1))
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_packs_and_unpacks_to_the_same_files_without_its_links() {
        let src = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(src.path()).expect("canonical");
        std::fs::create_dir(root.join("step")).expect("mkdir");
        std::fs::write(root.join("count"), b"41\n").expect("write");
        std::fs::write(root.join("step/state.bin"), vec![9u8; 100_000]).expect("write");
        std::os::unix::fs::symlink("/etc/hostname", root.join("stolen")).expect("symlink");
        let (found, listing) = listing(&root);
        assert_eq!(listing.len(), 2);
        let archive = tempfile::NamedTempFile::new().expect("archive");
        let file = archive.reopen().expect("reopen");
        assert_eq!(pack(&root, &found, file).expect("pack"), 2);
        let dest = tempfile::tempdir().expect("dest");
        let own = (
            nix::unistd::getuid().as_raw(),
            nix::unistd::getgid().as_raw(),
        );
        let n = unpack(
            std::fs::File::open(archive.path()).expect("open"),
            dest.path(),
            own,
        )
        .expect("unpack");
        assert_eq!(n, 2);
        assert_eq!(
            std::fs::read(dest.path().join("count")).expect("count"),
            b"41\n"
        );
        assert_eq!(
            std::fs::read(dest.path().join("step/state.bin"))
                .expect("state")
                .len(),
            100_000
        );
        assert!(!dest.path().join("stolen").exists());
    }

    #[test]
    fn an_archive_that_climbs_out_or_holds_a_link_is_refused() {
        let mut bytes = Vec::new();
        {
            let mut builder = tar::Builder::new(&mut bytes);
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Symlink);
            header.set_size(0);
            builder
                .append_link(&mut header, "evil", "/etc/shadow")
                .expect("link");
            builder.finish().expect("finish");
        }
        let dest = tempfile::tempdir().expect("dest");
        let own = (
            nix::unistd::getuid().as_raw(),
            nix::unistd::getgid().as_raw(),
        );
        let err = unpack(bytes.as_slice(), dest.path(), own).unwrap_err();
        assert!(err.contains("not a file"), "{err}");
        // `tar` refuses to write `..` into a header, so climbing out is built by hand.
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(1);
        header.as_old_mut().name[..5].copy_from_slice(b"../x\0");
        header.set_cksum();
        let mut climbing = header.as_bytes().to_vec();
        climbing.extend_from_slice(&[b'x'; 512]);
        climbing.extend_from_slice(&[0u8; 1024]);
        let err = unpack(climbing.as_slice(), dest.path(), own).unwrap_err();
        assert!(err.contains("not a plain relative path"), "{err}");
    }
}
