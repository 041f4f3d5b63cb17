//! Parsing an order into a placement request: the validation rejects that
//! need no capacity (model, precision, resources, region, node).

use rust_decimal::Decimal;

use super::core::Engine;
use super::placement::{model_idx, Compute, EndHint, ModelSet, PlacementRequest};
use super::pricing;
use super::reject::RejectReason;
use super::types::{Gang, Isolation, Mode, OrderSpec};
use gpuex_wire::catalog::{self, Precision};

impl Engine {
    /// Parses an order into a placement request, or says why it cannot be one.
    pub(super) fn resolve(&self, spec: &OrderSpec) -> Result<PlacementRequest, RejectReason> {
        let res = &spec.resources;
        let gpus = checked_shape(spec)?;
        let models = match &res.gpu_model {
            Some(name) => ModelSet::only(model_idx(name).ok_or(RejectReason::UnknownModel)?),
            None => ModelSet::ANY,
        };
        let precision = res.precision.unwrap_or(Precision::Fp16);
        let allowed = catalog::all_models()
            .iter()
            .filter(|m| model_idx(m.name).is_some_and(|i| models.contains(i)));
        if !allowed.clone().any(|m| m.peak(precision).is_some()) {
            return Err(RejectReason::UnknownPrecision);
        }
        let region = match spec.region.named() {
            Some(name) => Some(
                self.view
                    .region_idx(name)
                    .ok_or(RejectReason::UnknownRegion)?,
            ),
            None => None,
        };
        if let Some(node) = spec.node {
            if !self.nodes.contains_key(&node) {
                return Err(RejectReason::UnknownNode);
            }
        }
        let isolation = if spec.mode == Mode::Pooled {
            Isolation::Shared
        } else {
            res.isolation
        };
        let req = PlacementRequest {
            compute: Compute::Tflops {
                tflops: res.tflops,
                precision,
            },
            memory_mb: u64::from(res.vram_gb) * 1000,
            gpus,
            models,
            nvlink: res.nvlink,
            isolation,
            region,
            node: spec.node,
            cpu_milli: res.cpu_milli,
            memory_mib: res.memory_mib,
            ends: self.end_hint(spec),
            min_cuda: res.min_cuda,
        };
        // Some catalog model must be able to hold it at all.
        let holdable = allowed.clone().any(|m| {
            let whole_ok = gpus == 1 || matches!(isolation, Isolation::Any | Isolation::Whole);
            let mig_ok = isolation != Isolation::Mig || m.mig.is_some();
            whole_ok
                && mig_ok
                && req.milli_per_gpu(m).is_some_and(|x| x <= 1000)
                && req.memory_per_gpu() <= m.memory_mb()
        });
        if !holdable {
            return Err(RejectReason::UnsatisfiableResources);
        }
        Ok(req)
    }

    /// When a lease of `spec` placed now would end: its window, else its
    /// predicted duration from its start (`None` when neither is known or
    /// duration prediction is off).
    fn end_hint(&self, spec: &OrderSpec) -> Option<EndHint> {
        if !self.cfg.duration_prediction {
            return None;
        }
        let start = spec.start_at.unwrap_or(self.now).max(self.now);
        let seconds = spec.duration_prediction().seconds?;
        Some(EndHint {
            now: self.now,
            end: start.saturating_add(seconds.max(0)),
        })
    }
}

/// The GPU count of an order whose shape and figures are in range.
fn checked_shape(spec: &OrderSpec) -> Result<u8, RejectReason> {
    let res = &spec.resources;
    let gpus = match u8::try_from(res.gpus.unwrap_or(1)) {
        Ok(gpus @ 1..=32) => gpus,
        _ => return Err(RejectReason::InvalidResources),
    };
    if res.vram_gb % catalog::UNIT_VRAM_GB != 0
        || res.tflops < Decimal::ZERO
        || (res.tflops.is_zero() && res.vram_gb == 0)
    {
        return Err(RejectReason::InvalidResources);
    }
    let out_of_range = res.tflops > pricing::MAX_TFLOPS
        || spec
            .max_price
            .is_some_and(|p| p > pricing::MAX_PRICE_PER_HOUR)
        || spec
            .duration_s
            .is_some_and(|d| !(0..=pricing::MAX_WINDOW_S).contains(&d))
        || spec
            .max_wait_s
            .is_some_and(|w| !(0..=pricing::MAX_WINDOW_S).contains(&w))
        || spec.gang.is_some_and(|g| {
            // Gangs are placed on capacity free now: spot bids clear one by
            // one and reservations book windows ahead.
            !(1..=Gang::MAX_COUNT).contains(&g.count)
                || !(1..=g.count).contains(&g.min_count)
                || matches!(spec.mode, Mode::Spot | Mode::Reserved)
        });
    if out_of_range {
        return Err(RejectReason::OutOfRange);
    }
    Ok(gpus)
}
