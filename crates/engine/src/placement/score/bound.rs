//! What a scan needs to bound a score before computing it: the weights of
//! the classes a GPU or host could at most leave unserved. See
//! `placement::bound` for how they bound a candidate's fragmentation step.

use super::{weight_above, Scorer};
use gpuex_wire::catalog::MigProfile;

impl Scorer {
    /// The most weight of classes that a shared GPU able to hold a share of
    /// `milli` and `memory_mb` can leave unserved: a class a GPU with that
    /// much free (and something taken) serves, every GPU with more serves too.
    pub fn unusable_share_at_most(&self, milli: u32, memory_mb: u64) -> u64 {
        self.classes
            .iter()
            .filter(|(_, c, _)| c.whole() || c.milli > milli || c.memory_mb > memory_mb)
            .map(|(w, _, _)| w)
            .sum()
    }

    /// The most weight of classes that a MIG GPU where `profile` is still
    /// placeable can leave unserved: the classes that profile cannot serve.
    pub fn unusable_mig_at_most(&self, profile: &MigProfile) -> u64 {
        let Some(bit) = self.layout.and_then(|l| {
            l.profiles
                .iter()
                .position(|p| std::ptr::eq(p, profile) || p.name == profile.name)
        }) else {
            return self.all_weight();
        };
        self.classes
            .iter()
            .filter(|(_, _, adequate)| {
                let mask = u32::try_from(bit).ok().and_then(|b| 1u8.checked_shl(b));
                // A profile past the eighth has no bit: count every class.
                mask.is_none_or(|m| adequate & m == 0)
            })
            .map(|(w, _, _)| w)
            .sum()
    }

    /// The weight of every class scored (forecast classes included).
    pub fn all_weight(&self) -> u64 {
        self.classes.iter().map(|(w, _, _)| w).sum()
    }

    /// The weight of the classes that need more host CPU than `cpu_free`
    /// ([`Scorer::host_frag`]'s factor).
    pub fn host_weight_above(&self, cpu_free: u64) -> u64 {
        weight_above(&self.by_cpu, cpu_free)
    }
}
