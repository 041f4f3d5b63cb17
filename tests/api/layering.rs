//! Imports run one way (DESIGN §14, §20): the engine stays pure, and billing
//! posts from what the market tells it without importing the market.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/<folder>`.
fn sources(folder: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(folder)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    assert!(!found.is_empty(), "no sources under src/{folder}");
    found
}

/// The `crate::<module>` paths `folder`'s sources name, with where.
fn crate_paths(folder: &str) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    for file in sources(folder) {
        let text = std::fs::read_to_string(&file).expect("a source file");
        for (n, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices("crate::") {
                let module: String = line[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                paths.push((module, format!("{}:{}", file.display(), n + 1)));
            }
        }
    }
    paths
}

#[test]
fn the_engine_imports_nothing_but_the_catalog() {
    let outside: Vec<_> = crate_paths("engine")
        .into_iter()
        .filter(|(module, _)| !["engine", "catalog"].contains(&module.as_str()))
        .collect();
    assert!(outside.is_empty(), "the engine reaches out: {outside:?}");
}

#[test]
fn billing_does_not_import_the_market_or_the_nodes() {
    let upward: Vec<_> = crate_paths("billing")
        .into_iter()
        .filter(|(module, _)| ["market", "nodes", "cluster"].contains(&module.as_str()))
        .collect();
    assert!(upward.is_empty(), "billing imports the market: {upward:?}");
}

#[test]
fn storage_imports_only_the_engine_and_the_catalog() {
    // `crate::{dispatch, …}` re-exports storage's own macros; `owner_only`
    // makes the SQLite file readable by its owner only.
    let allowed = ["", "db", "engine", "catalog", "owner_only"];
    let upward: Vec<_> = crate_paths("db")
        .into_iter()
        .filter(|(module, _)| !allowed.contains(&module.as_str()))
        .collect();
    assert!(upward.is_empty(), "storage reaches up: {upward:?}");
}

/// One module writes `leases` (DESIGN §20): the statements that change a
/// lease row are all in `src/db/leases.rs`.
#[test]
fn one_module_writes_the_leases_table() {
    let writes = ["UPDATE leases", "INSERT INTO leases", "DELETE FROM leases"];
    let owner = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/db/leases.rs");
    let mut elsewhere = Vec::new();
    for file in sources("") {
        if file == owner {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a source file");
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for statement in writes {
            if flat.to_ascii_uppercase().contains(statement) {
                elsewhere.push(format!("{}: {statement}", file.display()));
            }
        }
    }
    assert!(
        elsewhere.is_empty(),
        "leases written outside src/db/leases.rs: {elsewhere:?}"
    );
    let text = std::fs::read_to_string(&owner).expect("the leases module");
    assert!(
        writes[..2].iter().all(|s| text.contains(s)),
        "the module writes leases"
    );
}
