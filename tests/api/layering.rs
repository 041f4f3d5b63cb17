//! Imports run one way (docs/ARCHITECTURE.md, "The layers"): the engine
//! and the wire types stay pure, the agent never builds the server, and
//! billing posts from what the market tells it without importing the market.

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

/// The names in a manifest's `[dependencies]` table.
fn dependencies(manifest: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(manifest);
    let text = std::fs::read_to_string(&path).expect("a manifest");
    text.lines()
        .skip_while(|line| line.trim() != "[dependencies]")
        .skip(1)
        .take_while(|line| !line.starts_with('['))
        .filter_map(|line| line.split_once('=').map(|(name, _)| name.trim()))
        .filter(|name| !name.is_empty() && !name.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// The engine is its own crate, so the compiler keeps it from the server's
/// modules; what it may still reach is what its manifest names: the wire
/// types and pure libraries, never a runtime, a database or HTTP.
#[test]
fn the_engine_depends_on_nothing_but_the_wire_types_and_pure_libraries() {
    let pure = [
        "gpuex-wire",
        "serde",
        "serde_json",
        "rust_decimal",
        "rust_decimal_macros",
        "thiserror",
        "uuid",
        "chrono",
        "chrono-tz",
        "utoipa",
    ];
    let engine = dependencies("crates/engine/Cargo.toml");
    assert!(engine.contains(&"gpuex-wire".to_owned()), "{engine:?}");
    let impure: Vec<_> = engine
        .iter()
        .filter(|d| !pure.contains(&d.as_str()))
        .collect();
    assert!(impure.is_empty(), "the engine depends on {impure:?}");
    let wire = dependencies("crates/wire/Cargo.toml");
    let impure: Vec<_> = wire
        .iter()
        .filter(|d| !pure.contains(&d.as_str()))
        .collect();
    assert!(impure.is_empty(), "the wire types depend on {impure:?}");
}

/// The API's answers are data: their crate builds on the wire types and the
/// engine's vocabulary, with no runtime, database or HTTP.
#[test]
fn the_api_bodies_are_pure_data() {
    let api = dependencies("crates/api/Cargo.toml");
    let allowed = [
        "gpuex-wire",
        "gpuex-engine",
        "serde",
        "serde_json",
        "rust_decimal",
        "uuid",
        "chrono",
        "utoipa",
    ];
    let impure: Vec<_> = api
        .iter()
        .filter(|d| !allowed.contains(&d.as_str()))
        .collect();
    assert!(impure.is_empty(), "the API bodies depend on {impure:?}");
}

/// The CLI speaks HTTP to a server and reads the API's own bodies: it never
/// builds the server, its database or its router.
#[test]
fn the_cli_does_not_build_the_server() {
    let cli = dependencies("crates/cli/Cargo.toml");
    assert!(cli.contains(&"gpuex-api".to_owned()), "{cli:?}");
    let server_side = [
        "gpuex",
        "sqlx",
        "axum",
        "tower",
        "tower-http",
        "utoipa-axum",
    ];
    let found: Vec<_> = cli
        .iter()
        .filter(|d| server_side.contains(&d.as_str()))
        .collect();
    assert!(found.is_empty(), "the CLI depends on {found:?}");
}

/// The agent shares the wire types, never the server crate.
#[test]
fn the_agent_does_not_build_the_server() {
    let agent = dependencies("node-agent/Cargo.toml");
    assert!(agent.contains(&"gpuex-wire".to_owned()), "{agent:?}");
    assert!(
        !agent.iter().any(|d| d == "gpuex" || d == "gpuex-engine"),
        "{agent:?}"
    );
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

/// One module writes `leases` (ARCHITECTURE.md §20): the statements that change a
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

/// The server's whole state is assembled in `src/app.rs` and handed to the
/// router in `src/api`: every other module takes a state of its own, drawn
/// from the whole by `FromRef`, so no domain depends on every other.
#[test]
fn only_the_composition_root_and_the_router_know_the_whole_state() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let knowing: Vec<_> = sources("")
        .into_iter()
        .filter(|file| file != &root.join("app.rs") && !file.starts_with(root.join("api")))
        .filter(|file| {
            let text = std::fs::read_to_string(file).expect("a source file");
            text.contains("AppState") || text.contains("crate::app")
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        knowing.is_empty(),
        "these know the whole state: {knowing:?}"
    );
}

/// Imports run one way, api → domains: only the composition root (`app.rs`)
/// and the command line above it (`command_line.rs`, which serves and
/// prints the OpenAPI document) name the router layer; a domain's routes are
/// merged there, never the other way round.
#[test]
fn no_module_below_the_router_imports_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let above = [root.join("app.rs"), root.join("command_line.rs")];
    let upward: Vec<_> = sources("")
        .into_iter()
        .filter(|file| !above.contains(file) && !file.starts_with(root.join("api")))
        .filter(|file| {
            let text = std::fs::read_to_string(file).expect("a source file");
            text.contains("crate::api::") || text.contains("crate::api;")
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        upward.is_empty(),
        "these import the router layer: {upward:?}"
    );
}
