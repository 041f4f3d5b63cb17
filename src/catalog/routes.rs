//! `/v1/catalog/gpus`, `/v1/regions`, `/v1/admin/regions/{name}`.

use super::regions::{self, Region};
use super::{all_models, GpuModel, Precision};
use crate::audit;
use crate::auth::{Caller, Role, RouterState};
use crate::config::Settings;
use crate::db::Db;
use crate::error::responses::{MalformedJson, NotAnAdmin};
use crate::error::{ApiError, Json, Path, Problem};
use crate::market::MarketHandle;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// What the catalog's routes use: a region put is also the engine's.
#[derive(Clone)]
pub struct CatalogState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub market: MarketHandle,
}

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    CatalogState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_gpus))
        .routes(routes!(list_regions))
        .routes(routes!(put_region))
}

/// A MIG profile and the units it holds.
#[derive(Debug, Serialize, ToSchema)]
pub struct MigProfileView {
    pub name: String,
    pub compute_slices: u8,
    pub memory_slices: u8,
    /// Memory slices where an instance may start.
    pub starts: Vec<u8>,
    pub memory_gb: u32,
    #[schema(value_type = String)]
    pub tflops_units: Decimal,
    #[schema(value_type = String)]
    pub vram_units: Decimal,
}

/// A catalog GPU model.
#[derive(Debug, Serialize, ToSchema)]
pub struct GpuModelView {
    pub name: String,
    pub architecture: String,
    pub memory_gb: u32,
    /// Dense peak TFLOPS per precision; absent where the model cannot run it.
    #[schema(value_type = Object)]
    pub peak_tflops: serde_json::Map<String, serde_json::Value>,
    /// Standard TFLOPS the whole GPU sells (its dense FP16 peak).
    #[schema(value_type = String)]
    pub tflops_units: Decimal,
    /// `vram_h` units of the whole GPU (memory / 4 GB, rounded down).
    #[schema(value_type = String)]
    pub vram_units: Decimal,
    pub mig_capable: bool,
    pub mig_profiles: Vec<MigProfileView>,
}

impl From<&GpuModel> for GpuModelView {
    fn from(m: &GpuModel) -> Self {
        let peak_tflops = Precision::ALL
            .into_iter()
            .filter_map(|p| {
                Some((
                    p.as_str().to_owned(),
                    serde_json::json!(m.peak(p)?.to_string()),
                ))
            })
            .collect();
        let mig_profiles = m
            .mig
            .map(|layout| {
                layout
                    .profiles
                    .iter()
                    .map(|p| MigProfileView {
                        name: p.name.to_owned(),
                        compute_slices: p.compute_slices,
                        memory_slices: p.memory_slices,
                        starts: p.starts.to_vec(),
                        memory_gb: p.memory_gb,
                        tflops_units: p.tflops_units(m.fp16),
                        vram_units: p.vram_units(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        GpuModelView {
            name: m.name.to_owned(),
            architecture: m.architecture.to_owned(),
            memory_gb: m.memory_gb,
            peak_tflops,
            tflops_units: m.fp16,
            vram_units: m.vram_units(),
            mig_capable: m.mig_capable(),
            mig_profiles,
        }
    }
}

/// Every GPU model gpuex can sell, with peaks, units and MIG profiles.
#[utoipa::path(get, path = "/v1/catalog/gpus", tag = "catalog",
    responses((status = 200, description = "The catalog", body = [GpuModelView])))]
async fn list_gpus() -> Json<Vec<GpuModelView>> {
    Json(all_models().iter().map(GpuModelView::from).collect())
}

/// Every region.
#[utoipa::path(get, path = "/v1/regions", tag = "catalog",
    responses((status = 200, description = "Regions", body = [Region])))]
async fn list_regions(State(state): State<CatalogState>) -> Result<Json<Vec<Region>>, ApiError> {
    Ok(Json(regions::list(&state.db).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PutRegionRequest {
    /// IANA time zone, e.g. `America/New_York`.
    pub timezone: String,
}

/// Create or update a region (admin).
#[utoipa::path(put, path = "/v1/admin/regions/{name}", tag = "catalog", security(("bearer" = [])),
    params(("name" = String, Path, description = "Region name: a-z, 0-9 and -")),
    request_body = PutRegionRequest,
    responses(
        (status = 200, description = "Updated", body = Region),
        (status = 201, description = "Created", body = Region),
        MalformedJson,
        NotAnAdmin,
        (status = 422, description = "Invalid name or time zone", body = Problem, content_type = "application/problem+json"),
    ))]
async fn put_region(
    State(state): State<CatalogState>,
    caller: Caller,
    Path(name): Path<String>,
    Json(req): Json<PutRegionRequest>,
) -> Result<(StatusCode, Json<Region>), ApiError> {
    caller.require(&[Role::Admin])?;
    let name = regions::parse_name(&name).map_err(|m| ApiError::field("path.name", m))?;
    let timezone = req.timezone.trim();
    if timezone.parse::<chrono_tz::Tz>().is_err() {
        return Err(ApiError::field(
            "timezone",
            "must be an IANA time zone, e.g. Europe/Paris",
        ));
    }
    let now = state.settings.clock.now();
    let mut tx = state.db.begin().await?;
    let (region, created) = regions::upsert(&mut tx, &name, timezone, now).await?;
    audit::record(
        &mut tx,
        caller.id,
        audit::Action::PutRegion,
        &format!("region:{name}"),
        serde_json::json!({ "timezone": timezone }),
        now,
    )
    .await?;
    tx.commit().await?;
    state
        .market
        .command(crate::engine::Command::SetRegion {
            name: name.clone(),
            timezone: timezone.to_owned(),
        })
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(region)))
}
