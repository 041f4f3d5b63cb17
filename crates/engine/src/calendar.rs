//! A calendar per GPU: which lease holds which slice range from when until
//! when. Reserved windows never overlap, an open-ended lease blocks its slice
//! indefinitely, and nothing is promised twice at any instant.

use serde::{Deserialize, Serialize};

use super::placement::{take, GpuFree, PartitionMode, Slot};
use super::types::{LeaseId, Priority, Ts};
use gpuex_wire::catalog::GpuModel;

/// One promise of a slice of a GPU to a lease over `[from, until)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Booking {
    pub lease: LeaseId,
    pub slot: Slot,
    pub from: Ts,
    /// `None`: open-ended, the slice is blocked indefinitely.
    pub until: Option<Ts>,
    pub priority: Priority,
}

impl Booking {
    /// Whether the booking holds its slice at some instant of `[from, until)`.
    pub fn overlaps(&self, from: Ts, until: Option<Ts>) -> bool {
        let starts_before_end = until.is_none_or(|u| self.from < u);
        let ends_after_start = self.until.is_none_or(|u| u > from);
        starts_before_end && ends_after_start && self.until.is_none_or(|u| u > self.from)
    }

    fn active_at(&self, t: Ts) -> bool {
        self.from <= t && self.until.is_none_or(|u| t < u)
    }
}

/// The bookings of one GPU.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuCalendar {
    pub bookings: Vec<Booking>,
}

/// An instant at which a GPU is promised more than it has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("GPU over-committed at {at}: leases {leases:?}")]
pub struct OverCommitted {
    pub at: Ts,
    pub leases: Vec<LeaseId>,
}

impl GpuCalendar {
    /// Free state for a lease that would hold its slice over `[from, until)`,
    /// counting every booking that overlaps that span (conservatively, as if
    /// they all held at once) except those `skip` says will make way.
    pub fn free_over(
        &self,
        model: &GpuModel,
        mode: PartitionMode,
        from: Ts,
        until: Option<Ts>,
        skip: impl Fn(&Booking) -> bool,
    ) -> GpuFree {
        let mut free = GpuFree::idle(model);
        for b in self
            .bookings
            .iter()
            .filter(|b| b.overlaps(from, until) && !skip(b))
        {
            free = take_saturating(free, mode, &b.slot, model);
        }
        free
    }

    /// Free state counting every booking: what an open-ended lease starting now may take.
    pub fn free_all(&self, model: &GpuModel, mode: PartitionMode) -> GpuFree {
        let mut free = GpuFree::idle(model);
        for b in &self.bookings {
            free = take_saturating(free, mode, &b.slot, model);
        }
        free
    }

    /// Checks that at no instant the bookings active together exceed the GPU.
    /// The load only rises at a booking's start, so those instants suffice.
    pub fn check(&self, model: &GpuModel, mode: PartitionMode) -> Result<(), OverCommitted> {
        for probe in &self.bookings {
            let t = probe.from;
            if probe.until.is_some_and(|u| u <= t) {
                continue;
            }
            let active: Vec<&Booking> = self.bookings.iter().filter(|b| b.active_at(t)).collect();
            let mut free = GpuFree::idle(model);
            for b in &active {
                match take(free, mode, &b.slot, model) {
                    Some(f) => free = f,
                    None => {
                        return Err(OverCommitted {
                            at: t,
                            leases: active.iter().map(|b| b.lease).collect(),
                        })
                    }
                }
            }
        }
        Ok(())
    }

    /// Removes a lease's bookings.
    pub fn remove(&mut self, lease: LeaseId) {
        self.bookings.retain(|b| b.lease != lease);
    }

    /// Moves a lease's bookings to `[from, until)` (a waiting lease that starts early).
    pub fn set_window(&mut self, lease: LeaseId, from: Ts, until: Option<Ts>) {
        for b in self.bookings.iter_mut().filter(|b| b.lease == lease) {
            b.from = from;
            b.until = until;
        }
    }

    /// Sets the end of a lease's bookings (a preemption or a shortened window).
    pub fn set_until(&mut self, lease: LeaseId, until: Option<Ts>) {
        for b in self.bookings.iter_mut().filter(|b| b.lease == lease) {
            b.until = until;
        }
    }
}

/// Takes a slot out of a free state, clamping at zero (conservative counting
/// may subtract two bookings that never hold at the same instant).
fn take_saturating(free: GpuFree, mode: PartitionMode, slot: &Slot, model: &GpuModel) -> GpuFree {
    if let Some(f) = take(free, mode, slot, model) {
        return f;
    }
    match slot {
        Slot::Whole => GpuFree {
            milli: 0,
            memory_mb: 0,
            mig_mask: 0,
            mig_compute: 0,
        },
        Slot::Mig { mask, compute, .. } => GpuFree {
            mig_mask: free.mig_mask & !mask,
            mig_compute: free.mig_compute.saturating_sub(*compute),
            ..free
        },
        Slot::Shared { milli, memory_mb } => GpuFree {
            milli: free.milli.saturating_sub(*milli),
            memory_mb: free.memory_mb.saturating_sub(*memory_mb),
            ..free
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuex_wire::catalog::lookup;
    use uuid::Uuid;

    fn b(n: u128, slot: Slot, from: Ts, until: Option<Ts>) -> Booking {
        Booking {
            lease: Uuid::from_u128(n),
            slot,
            from,
            until,
            priority: Priority::Reserved,
        }
    }

    fn mig(start: u8, size: u8, compute: u8) -> Slot {
        let mask = (((1u16 << size) - 1) << start) as u8;
        Slot::Mig {
            profile: "x".into(),
            start,
            mask,
            compute,
        }
    }

    #[test]
    fn disjoint_windows_on_the_same_slice_are_not_over_committed() {
        let model = lookup("A100-SXM4-40GB").unwrap();
        let cal = GpuCalendar {
            bookings: vec![
                b(1, mig(0, 4, 3), 0, Some(100)),
                b(2, mig(0, 4, 3), 100, Some(200)),
            ],
        };
        assert!(cal.check(model, PartitionMode::Mig).is_ok());
    }

    #[test]
    fn overlapping_windows_on_the_same_slice_are_over_committed() {
        let model = lookup("A100-SXM4-40GB").unwrap();
        let cal = GpuCalendar {
            bookings: vec![
                b(1, mig(0, 4, 3), 0, None),
                b(2, mig(2, 2, 2), 50, Some(60)),
            ],
        };
        assert!(cal.check(model, PartitionMode::Mig).is_err());
    }

    #[test]
    fn an_open_ended_lease_blocks_its_slice_indefinitely() {
        let model = lookup("A100-SXM4-40GB").unwrap();
        let cal = GpuCalendar {
            bookings: vec![b(
                1,
                Slot::Shared {
                    milli: 600,
                    memory_mb: 0,
                },
                0,
                None,
            )],
        };
        let later = cal.free_over(
            model,
            PartitionMode::Shared,
            1_000_000,
            Some(1_000_100),
            |_| false,
        );
        assert_eq!(later.milli, 400);
    }

    #[test]
    fn a_window_sees_only_the_bookings_that_overlap_it() {
        let model = lookup("A100-SXM4-40GB").unwrap();
        let cal = GpuCalendar {
            bookings: vec![b(1, Slot::Whole, 100, Some(200))],
        };
        assert_eq!(
            cal.free_over(model, PartitionMode::Whole, 200, Some(300), |_| false)
                .milli,
            1000
        );
        assert_eq!(
            cal.free_over(model, PartitionMode::Whole, 150, Some(300), |_| false)
                .milli,
            0
        );
        assert_eq!(cal.free_all(model, PartitionMode::Whole).milli, 0);
    }
}
