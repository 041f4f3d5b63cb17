//! The server's files on disk (ARCHITECTURE.md §19, "Files"): a workload running as
//! another local user once read `jwt_secret` out of a 0644 SQLite file. The
//! real `gpuex` process, started with an open umask over a data folder an
//! older version left open, makes the folder 0700 and the database, its WAL
//! and its shared-memory file 0600, and refuses a database it cannot protect.

use crate::durability::{free_port, wait_ready};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .mode()
        & 0o777
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpuex-modes-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir(&dir).expect("scratch folder");
    dir
}

/// `gpuex serve` under `umask 000`, so nothing comes out private by accident.
fn serve_with_open_umask(database: &Path, port: u16) -> Command {
    let mut command = Command::new("sh");
    command
        .args([
            "-c",
            "umask 000; exec \"$0\" serve --listen \"$1\" --database-url \"$2\"",
            env!("CARGO_BIN_EXE_gpuex"),
            &format!("127.0.0.1:{port}"),
            &format!("sqlite://{}", database.display()),
        ])
        .env("GPUEX_JWT_SECRET", crate::helpers::JWT_SECRET)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null());
    command
}

#[tokio::test]
async fn the_data_folder_and_database_files_are_private_whatever_the_umask_and_an_older_version_left(
) {
    let root = scratch();
    let data = root.join("data");
    std::fs::create_dir(&data).expect("mkdir");
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // What an older version left: a world-readable database.
    let database = data.join("gpuex.db");
    std::fs::write(&database, b"").expect("an empty database file");
    std::fs::set_permissions(&database, std::fs::Permissions::from_mode(0o644)).expect("chmod");

    let port = free_port();
    let mut child = serve_with_open_umask(&database, port)
        .stderr(Stdio::null())
        .spawn()
        .expect("start gpuex");
    let ready = wait_ready(&format!("http://127.0.0.1:{port}")).await;
    let modes = [
        (data.clone(), mode(&data)),
        (database.clone(), mode(&database)),
        (data.join("gpuex.db-wal"), mode(&data.join("gpuex.db-wal"))),
        (data.join("gpuex.db-shm"), mode(&data.join("gpuex.db-shm"))),
    ];
    child.kill().ok();
    child.wait().ok();
    std::fs::remove_dir_all(&root).ok();
    assert!(ready, "gpuex did not start");
    assert_eq!(modes[0].1, 0o700, "{}", modes[0].0.display());
    for (file, mode) in &modes[1..] {
        assert_eq!(*mode, 0o600, "{}", file.display());
    }
}

#[test]
fn a_database_of_another_user_that_others_can_read_is_refused_with_a_clear_message() {
    let root = scratch();
    let database = root.join("gpuex.db");
    std::fs::write(&database, b"").expect("an empty database file");
    std::fs::set_permissions(&database, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    // Only root can give a file away; elsewhere there is no other user to be.
    if crate::require::require("root", crate::require::root()).is_none() {
        std::fs::remove_dir_all(&root).ok();
        return;
    }
    std::os::unix::fs::chown(&database, Some(65534), Some(65534)).expect("chown to nobody");

    let out = serve_with_open_umask(&database, free_port())
        .stderr(Stdio::piped())
        .output()
        .expect("run gpuex");
    std::fs::remove_dir_all(&root).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "gpuex served a database others can read"
    );
    assert!(
        stderr.contains("belongs to another user and others may read it"),
        "no clear message: {stderr}"
    );
}
