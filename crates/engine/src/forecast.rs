//! What the demand forecast (ARCHITECTURE.md §17) changes in the engine: idle capacity
//! that on-demand and reserved orders are expected to ask for within the
//! preemption notice is not sold to spot, so fewer spot leases start only to
//! be preempted minutes later; and MIG placement keeps room for the profiles
//! those orders are expected to take.
//!
//! The forecast itself is computed outside (floats, a time-series library)
//! and arrives as [`Command::SetForecast`](super::Command::SetForecast) in
//! standard TFLOPS units, so the engine stays pure and deterministic.

use std::collections::{BTreeMap, BTreeSet};

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::core::Engine;
use super::placement::{
    model_at, model_idx, DemandClass, ForecastClass, ModelIdx, Placement, RegionIdx,
};

/// Primary demand expected in one (model, region) within the notice period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DemandForecast {
    pub gpu_model: String,
    pub region: String,
    /// Standard TFLOPS that on-demand and reserved orders are expected to ask for.
    pub tflops: Decimal,
    /// The MIG instances among them, by profile.
    #[serde(default)]
    pub mig_profiles: Vec<ProfileDemand>,
}

/// MIG instances of one profile expected within the notice period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileDemand {
    /// A profile of the market's model, e.g. `3g.40gb`.
    pub profile: String,
    pub instances: u32,
}

/// Idle TFLOPS each forecast market may still sell to spot in one clearing.
pub(super) struct SpotRoom {
    room: BTreeMap<(RegionIdx, ModelIdx), Decimal>,
}

impl SpotRoom {
    /// Whether `p` fits in what its market may sell to spot; takes it if so.
    pub fn take(&mut self, p: &Placement) -> bool {
        let Some(room) = self.room.get_mut(&(p.region, p.model)) else {
            return true;
        };
        if *room < p.units.tflops_h {
            return false;
        }
        *room -= p.units.tflops_h;
        true
    }
}

impl Engine {
    /// Replaces the forecast; markets not named expect no primary demand.
    pub(super) fn set_forecast(&mut self, markets: Vec<DemandForecast>) {
        let mut classes: Vec<ForecastClass> = Vec::new();
        if self.cfg.forecast_mig_layout {
            for f in &markets {
                let Some(model) = model_idx(&f.gpu_model).map(model_at) else {
                    continue;
                };
                let Some(layout) = model.mig else {
                    continue;
                };
                for p in f.mig_profiles.iter().filter(|p| p.instances > 0) {
                    let Some(profile) = layout.profile(&p.profile) else {
                        continue;
                    };
                    let class = DemandClass::of_profile(profile);
                    match classes
                        .iter_mut()
                        .find(|c| c.model == model.name && c.class == class)
                    {
                        Some(c) => c.instances = c.instances.saturating_add(p.instances),
                        None => classes.push(ForecastClass {
                            model: model.name,
                            class,
                            instances: p.instances,
                        }),
                    }
                }
            }
        }
        self.mix.set_forecast(classes);
        self.spot.holdback = markets
            .into_iter()
            .filter(|f| f.tflops > Decimal::ZERO && model_idx(&f.gpu_model).is_some())
            .map(|f| ((f.gpu_model, f.region), f.tflops))
            .collect();
    }

    /// The expected primary demand per (model, region) the engine holds now.
    pub fn forecast(&self) -> &BTreeMap<(String, String), Decimal> {
        &self.spot.holdback
    }

    /// Each forecast market's idle TFLOPS less its expected primary demand:
    /// what one spot clearing may take there. Markets without a forecast are
    /// not limited, and neither is anything when the holdback is off.
    pub(super) fn spot_room(&self) -> SpotRoom {
        let mut room = BTreeMap::new();
        if !self.cfg.forecast_holdback {
            return SpotRoom { room };
        }
        for ((model, region), expected) in &self.spot.holdback {
            let (Some(m), Some(r)) = (model_idx(model), self.view.region_idx(region)) else {
                continue;
            };
            let idle = self.idle_tflops(m, r);
            room.insert((r, m), (idle - expected).max(Decimal::ZERO));
        }
        SpotRoom { room }
    }

    /// The forecast markets whose expected on-demand and reserved demand
    /// exceeds their idle capacity: that work would take spot capacity, so
    /// spot leases there are at elevated risk (ARCHITECTURE.md §3).
    pub(super) fn forecast_short(&self) -> BTreeSet<(String, String)> {
        self.spot
            .holdback
            .iter()
            .filter(|((model, region), expected)| {
                let (Some(m), Some(r)) = (model_idx(model), self.view.region_idx(region)) else {
                    return false;
                };
                self.idle_tflops(m, r) < **expected
            })
            .map(|(market, _)| market.clone())
            .collect()
    }

    /// Standard TFLOPS idle now in one market, on nodes not cordoned.
    fn idle_tflops(&self, m: ModelIdx, r: RegionIdx) -> Decimal {
        let per_gpu = model_at(m).fp16;
        let mut idle = Decimal::ZERO;
        for b in self.view.buckets() {
            if b.model != m || b.region != r {
                continue;
            }
            for node in b.nodes.iter().filter_map(|&pos| self.view.node_at(pos)) {
                if node.cordoned {
                    continue;
                }
                for gpu in node
                    .gpus
                    .iter()
                    .filter(|g| g.model == m && g.mode == b.mode)
                {
                    idle += per_gpu * Decimal::from(gpu.free.free_milli(gpu.mode))
                        / Decimal::ONE_THOUSAND;
                }
            }
        }
        idle
    }
}
