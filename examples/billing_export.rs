//! Writes a billing export through the same code `GET /v1/billing/export`
//! streams, for the FOCUS validator check and the export benchmark.
//!
//! ```text
//! billing_export scenario DB_URL OUT [FORMAT]   # fresh database: the realistic scenario, then export it
//! billing_export seed DB_URL N                   # write N lines for the benchmark
//! billing_export export DB_URL OUT [FORMAT] [EMAIL]  # every line (OUT `-` is stdout), or one user's
//! ```
//!
//! With EMAIL, the export is the one that user downloads (`Scope::Buyer`):
//! the validator checks the scenario's buyer and reseller on their own too.

use gpuex::billing::export::{self, Format};
use gpuex::billing::lines::Scope;
use gpuex::billing::scenario;
use gpuex::db::Db;
use std::io::Write;
use uuid::Uuid;

fn format_of(s: Option<&String>) -> anyhow::Result<Format> {
    Ok(match s.map(String::as_str).unwrap_or("focus-csv") {
        "focus-csv" => Format::FocusCsv,
        "focus-json" => Format::FocusJson,
        "csv" => Format::Csv,
        other => anyhow::bail!("unknown format {other}"),
    })
}

async fn write_to(db: &Db, out: &str, format: Format, scope: Scope) -> anyhow::Result<u64> {
    let w: Box<dyn Write + Send> = if out == "-" {
        Box::new(std::io::BufWriter::new(std::io::stdout()))
    } else {
        Box::new(std::io::BufWriter::new(std::fs::File::create(out)?))
    };
    export::write_all(
        db.clone(),
        scope,
        0,
        i64::from(i32::MAX) * 8,
        format,
        "USD".into(),
        w,
    )
    .await
}

async fn user_id(db: &Db, email: &str) -> anyhow::Result<Option<Uuid>> {
    Ok(gpuex::db::dispatch!(db, pool => {
        sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
            .bind(email)
            .fetch_optional(pool)
            .await
    })?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(cmd), Some(url)) = (args.first(), args.get(1)) else {
        anyhow::bail!("usage: billing_export scenario|seed|export DB_URL ...");
    };
    let db = Db::connect(url).await?;
    db.migrate().await?;
    match cmd.as_str() {
        "scenario" => {
            let out = args.get(2).map_or("-", String::as_str);
            scenario::build(&db, "").await?;
            let bytes = write_to(&db, out, format_of(args.get(3))?, Scope::All).await?;
            eprintln!("wrote {bytes} bytes");
        }
        "seed" => {
            let n: u64 = args.get(2).map_or(Ok(1_000_000), |s| s.parse())?;
            let buyer = scenario::user(&db, "bench@acme.test", gpuex::auth::Role::Buyer).await?;
            let provider =
                scenario::user(&db, "bench@provider.test", gpuex::auth::Role::Provider).await?;
            let started = std::time::Instant::now();
            scenario::bulk_lines(&db, buyer, provider, n).await?;
            eprintln!(
                "seeded {n} lines in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        "export" => {
            let out = args.get(2).map_or("-", String::as_str);
            let scope = match args.get(4) {
                None => Scope::All,
                Some(email) => match user_id(&db, email).await? {
                    Some(id) => Scope::Buyer(id),
                    None => anyhow::bail!("no user {email}"),
                },
            };
            let started = std::time::Instant::now();
            let bytes = write_to(&db, out, format_of(args.get(3))?, scope).await?;
            eprintln!(
                "exported {bytes} bytes in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        other => anyhow::bail!("unknown command {other}"),
    }
    db.close().await;
    Ok(())
}
