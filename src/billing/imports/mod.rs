//! `POST /v1/profile/imports`: a newcomer's job history, from Slurm,
//! Kubernetes or a CSV, as a capacity profile the TCO can price (DESIGN
//! §22, docs/IMPORTS.md).
//!
//! The file is the body, streamed: the route has its own size limit
//! (`import_body_limit`, 256 MiB) and time limit (`import_timeout_s`) in
//! place of the API's 1 MiB and 30 s, and the parsers read it a buffer at a
//! time on a blocking thread, so memory grows with the jobs taken (32 bytes
//! each), never with the file. Nothing is written until the whole file has
//! been read: the import is one row, inserted in one transaction with its
//! Idempotency-Key's answer, so a file refused or cut off leaves nothing.

mod collect;
mod csv_rows;
mod k8s;
mod slurm;
mod store;
pub mod sweep;

pub use collect::{resolve_model, Collector, FileError};
pub use gpuex_api::imports::{
    ConcurrencyPoint, ImportFormat, ProfileImport, ProfileImportDetail, ProfileImportList,
    RejectedRow,
};

use super::tco::DEFAULT_GPU_MODEL;
use super::BillingState;
use crate::auth::{Caller, Role, RouterState};
use crate::catalog::{self, GpuModel};
use crate::db::Db;
use crate::error::{ApiError, Json, Path, Problem, Query};
use crate::idempotency::{self, IdempotencyKey};
use axum::body::Body;
use axum::extract::{FromRef, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use gpuex_api::billing::CapacityProfile;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::io::BufReader;
use std::sync::{Arc, Mutex};
use tokio_util::io::{StreamReader, SyncIoBridge};
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

/// The route, as the request timeout middleware names it.
pub const PATH: &str = "/v1/profile/imports";
const IDEMPOTENCY_SCOPE: &str = "profile_import";
/// Bytes a parser asks of the body at a time.
const READ_BUFFER: usize = 256 * 1024;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    BillingState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(create_import, list_imports))
        .routes(routes!(get_import, delete_import))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ImportQuery {
    /// The file's format: `slurm` (`sacct --parsable2`), `k8s` (`kubectl get
    /// pods -o json`) or `csv` (start,end,gpus[,gpu_model][,tag]).
    #[param(inline)]
    pub format: ImportFormat,
    /// The catalog model of rows naming no model the catalog knows (default
    /// H100-SXM5-80GB).
    #[param(max_length = 64)]
    pub gpu_model: Option<String>,
}

/// A file's bytes as a body: `{type: string, format: binary}`, which
/// generated clients take as a file.
pub struct FileBytes;

impl utoipa::PartialSchema for FileBytes {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .into()
    }
}

impl utoipa::ToSchema for FileBytes {}

/// Something an import's body reader stopped with: the route's size limit.
#[derive(Debug, thiserror::Error)]
#[error("the file is over the import limit")]
struct OverLimit;

/// What reading and parsing a file made.
struct Parsed {
    collector: Collector,
    profile: Option<CapacityProfile>,
    concurrency: Vec<ConcurrencyPoint>,
    sha256: [u8; 32],
    bytes: u64,
}

/// Streams `body` through the format's parser on a blocking thread.
async fn parse(
    body: Body,
    format: ImportFormat,
    model: &'static GpuModel,
    limit: usize,
) -> Result<Parsed, ApiError> {
    let progress = Arc::new(Mutex::new((Sha256::new(), 0u64)));
    let seen = progress.clone();
    let stream = body.into_data_stream().map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        let mut seen = seen.lock().map_err(|_| std::io::Error::other("poisoned"))?;
        seen.1 += chunk.len() as u64;
        if seen.1 > limit as u64 {
            return Err(std::io::Error::other(OverLimit));
        }
        seen.0.update(&chunk);
        Ok(chunk)
    });
    let bridge = SyncIoBridge::new(StreamReader::new(stream));
    let parsed = tokio::task::spawn_blocking(move || {
        let mut collector = Collector::new(model);
        let reader = BufReader::with_capacity(READ_BUFFER, bridge);
        match format {
            ImportFormat::Slurm => slurm::read(reader, &mut collector, limit),
            ImportFormat::K8s => k8s::read(reader, &mut collector, limit),
            ImportFormat::Csv => csv_rows::read(reader, &mut collector, limit),
        }?;
        let profile = sweep::profile(&collector);
        let concurrency = sweep::series(&collector.jobs);
        Ok::<_, FileError>((collector, profile, concurrency))
    })
    .await
    .map_err(|e| ApiError::Internal(e.into()))?;
    let (collector, profile, concurrency) = parsed.map_err(|e| file_refused(e, limit))?;
    let (hasher, bytes) = {
        let mut seen = progress
            .lock()
            .map_err(|_| ApiError::Internal(anyhow::anyhow!("import progress poisoned")))?;
        (std::mem::take(&mut seen.0), seen.1)
    };
    Ok(Parsed {
        collector,
        profile,
        concurrency,
        sha256: hasher.finalize().into(),
        bytes,
    })
}

fn file_refused(e: FileError, limit: usize) -> ApiError {
    let over = |e: &std::io::Error| {
        e.get_ref()
            .is_some_and(|inner| inner.downcast_ref::<OverLimit>().is_some())
    };
    match e {
        FileError::TooLarge(_) => too_large(limit),
        FileError::Read(io) if over(&io) => too_large(limit),
        FileError::Read(io) => ApiError::Malformed {
            detail: format!("the upload stopped: {io}"),
            errors: Vec::new(),
        },
        FileError::Malformed(m) => ApiError::field("body", m),
        FileError::TooManyRows => ApiError::field("body", FileError::TooManyRows.to_string()),
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::Refused {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        code: "import_too_large",
        detail: format!("an import's file may be at most {limit} bytes"),
    }
}

/// Import a job history: the file is the body, as it came from `sacct`,
/// `kubectl` or a spreadsheet. Answers the rows taken and every row refused
/// with its line; the import's profile prices in `POST /v1/tco` with
/// `import_id`. An `Idempotency-Key` with the same file answers the first
/// import again.
#[utoipa::path(post, path = "/v1/profile/imports", tag = "billing", security(("bearer" = [])),
    params(ImportQuery,
        ("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "Retries with the same key, file, format and `gpu_model` answer the first import; another file with it is 422 `idempotency_key_reused`")),
    request_body(content = inline(FileBytes), content_type = "application/octet-stream",
        description = "The file (any content type is read as its bytes): `sacct --parsable2` output, `kubectl get pods -o json` output or the CSV (docs/IMPORTS.md); up to `import_body_limit` bytes (256 MiB)"),
    responses(
        (status = 201, description = "Imported", body = ProfileImport),
        (status = 403, description = "Node tokens have no profile", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "The file is over the import limit (`import_too_large`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A file that is not of its format, an unknown `gpu_model`, or an Idempotency-Key used with another file", body = Problem, content_type = "application/problem+json"),
    ))]
async fn create_import(
    State(state): State<BillingState>,
    caller: Caller,
    Query(q): Query<ImportQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    // Rows naming no model the catalog knows are priced as the TCO's default.
    let model_name = q.gpu_model.as_deref().unwrap_or(DEFAULT_GPU_MODEL);
    let model = catalog::lookup(model_name)
        .ok_or_else(|| ApiError::field("query.gpu_model", "not a catalog GPU model"))?;
    // The key is checked before the file is read, so a bad one costs nothing.
    let keyed = IdempotencyKey::from_headers(&headers, b"")?;
    let parsed = parse(body, q.format, model, state.settings.import_body_limit).await?;
    let key = keyed.map(|k| IdempotencyKey {
        request_hash: hex::encode(Sha256::digest(
            format!(
                "{}\n{}\n{}",
                q.format.as_str(),
                model.name,
                hex::encode(parsed.sha256)
            )
            .as_bytes(),
        )),
        ..k
    });
    let c = &parsed.collector;
    let window = sweep::window(&c.jobs);
    let now = state.settings.clock.now();
    let detail = ProfileImportDetail {
        import: ProfileImport {
            id: Uuid::new_v4(),
            format: q.format,
            created_at: now,
            rows: c.jobs.len() as u64,
            skipped: c.skipped,
            rejected_count: c.rejected_count,
            rejected: c.rejected.clone(),
            defaulted_model_rows: c.defaulted_model_rows,
            default_gpu_model: c.default_model().name.to_owned(),
            from: window.map(|w| sweep::at(w.0)),
            to: window.map(|w| sweep::at(w.1)),
            bytes: parsed.bytes,
        },
        profile: parsed.profile,
        concurrency: parsed.concurrency,
    };
    let mut tx = state.db.begin().await?;
    if let Some(key) = &key {
        if let Some(stored) =
            idempotency::lookup(&mut tx, caller.id, IDEMPOTENCY_SCOPE, key).await?
        {
            return Ok((stored.status, axum::Json(stored.body)).into_response());
        }
    }
    store::insert(&mut tx, caller.id, &detail).await?;
    let answer = serde_json::to_value(&detail.import).map_err(|e| ApiError::Internal(e.into()))?;
    if let Some(key) = &key {
        idempotency::store(
            &mut tx,
            caller.id,
            IDEMPOTENCY_SCOPE,
            key,
            StatusCode::CREATED,
            &answer,
            now,
        )
        .await?;
    }
    tx.commit().await?;
    Ok((StatusCode::CREATED, axum::Json(answer)).into_response())
}

/// The caller's imports, newest first (the latest 100).
#[utoipa::path(get, path = "/v1/profile/imports", tag = "billing", security(("bearer" = [])),
    responses(
        (status = 200, description = "The imports", body = ProfileImportList),
        (status = 403, description = "Node tokens have no profile", body = Problem, content_type = "application/problem+json"),
    ))]
async fn list_imports(
    State(state): State<BillingState>,
    caller: Caller,
) -> Result<Json<ProfileImportList>, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    Ok(Json(ProfileImportList {
        imports: store::list(&state.db, caller.id).await?,
    }))
}

fn import_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound("no such import".to_owned()))
}

/// One of the caller's imports, owner only: another caller's is 404.
pub async fn own(db: &Db, caller: &Caller, id: Uuid) -> Result<ProfileImportDetail, ApiError> {
    store::get(db, caller.id, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no import {id} of yours")))
}

/// An import with its capacity profile and its GPUs held over time.
#[utoipa::path(get, path = "/v1/profile/imports/{id}", tag = "billing", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Import id")),
    responses(
        (status = 200, description = "The import, its profile and concurrency", body = ProfileImportDetail),
        (status = 403, description = "Node tokens have no profile", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such import of yours", body = Problem, content_type = "application/problem+json"),
    ))]
async fn get_import(
    State(state): State<BillingState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<ProfileImportDetail>, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    Ok(Json(own(&state.db, &caller, import_id(&id)?).await?))
}

/// Delete an import (its profile goes with it).
#[utoipa::path(delete, path = "/v1/profile/imports/{id}", tag = "billing", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Import id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 403, description = "Node tokens have no profile", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such import of yours", body = Problem, content_type = "application/problem+json"),
    ))]
async fn delete_import(
    State(state): State<BillingState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    if store::delete(&state.db, caller.id, import_id(&id)?).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!("no import {id} of yours")))
    }
}
