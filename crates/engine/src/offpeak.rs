//! Regions' local time for follow-the-sun placement (ARCHITECTURE.md §6): a region is
//! off-peak from 22:00 to 08:00 local time, read from its IANA zone at the
//! engine's `now`. The zone rules are compiled in, so this stays pure: the
//! same `now` and zone give the same answer, daylight saving time included,
//! and a restored engine needs nothing but the zone's name.

use chrono::{DateTime, Timelike};
use chrono_tz::Tz;

use super::core::Engine;
use super::lease::Lease;
use super::types::{RegionChoice, Ts};

/// Local hour at which off-peak begins.
pub const OFFPEAK_FROM_HOUR: u32 = 22;
/// Local hour at which off-peak ends (exclusive).
pub const OFFPEAK_UNTIL_HOUR: u32 = 8;

/// A region's time zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RegionClock {
    /// The IANA name as configured (kept for snapshots, even when unknown).
    pub(super) timezone: String,
    /// `None`: this build's zone data does not know the name; it counts as UTC.
    /// The API refuses such names, so only a zone dropped from the data since
    /// the region was created lands here, and restore must not fail on it.
    zone: Option<Tz>,
}

/// Local wall-clock time of a region at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LocalTime {
    pub(super) hour: u32,
    pub(super) minute: u32,
    /// Offset from UTC, minutes (east positive).
    pub(super) utc_offset_min: i32,
}

impl LocalTime {
    /// Whether this is inside the off-peak hours.
    pub(super) fn is_offpeak(self) -> bool {
        self.hour >= OFFPEAK_FROM_HOUR || self.hour < OFFPEAK_UNTIL_HOUR
    }

    /// `23:14 UTC+01:00`: what the fill report tells the buyer.
    pub(super) fn describe(self) -> String {
        let sign = if self.utc_offset_min < 0 { '-' } else { '+' };
        let off = self.utc_offset_min.unsigned_abs();
        format!(
            "{:02}:{:02} UTC{sign}{:02}:{:02}",
            self.hour,
            self.minute,
            off / 60,
            off % 60
        )
    }
}

impl RegionClock {
    pub(super) fn new(timezone: &str) -> RegionClock {
        RegionClock {
            timezone: timezone.to_owned(),
            zone: timezone.parse::<Tz>().ok(),
        }
    }

    /// A region known only from its prices or nodes, before its zone is set.
    pub(super) fn utc() -> RegionClock {
        RegionClock::new("UTC")
    }

    /// Local time at `now` (unix seconds).
    pub(super) fn local(&self, now: Ts) -> LocalTime {
        let utc = DateTime::from_timestamp(now, 0).unwrap_or_default();
        let zone = self.zone.unwrap_or(Tz::UTC);
        let local = utc.with_timezone(&zone);
        let utc_offset_min =
            i32::try_from((local.naive_local() - utc.naive_utc()).num_minutes()).unwrap_or(0);
        LocalTime {
            hour: local.hour(),
            minute: local.minute(),
            utc_offset_min,
        }
    }
}

impl Engine {
    /// The fill report's words on local time: whether the lease's region is
    /// off-peak, its local time, and for `region: any` why it was chosen.
    pub(super) fn offpeak_clause(&self, lease: &Lease) -> String {
        let local = self.local_time(&lease.region);
        let any = lease.spec.region == RegionChoice::Any;
        let why = &lease.placement.why;
        let state = if why.offpeak {
            "off-peak"
        } else {
            "at peak hours"
        };
        let reason = match (any, why.offpeak, why.offpeak_over) {
            (false, _, _) => String::new(),
            (true, true, Some(cheaper)) => format!(
                ", preferred over a slice listed at {}/h in a region at peak hours \
                 (follow-the-sun: within 5 % of the cheapest)",
                cheaper.normalize()
            ),
            (true, true, None) => ", and the cheapest".to_owned(),
            (true, false, _) => {
                ": no off-peak region had a slice within 5 % of the cheapest".to_owned()
            }
        };
        format!(
            "; {} is {state} ({} local){reason}",
            lease.region,
            local.describe()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Ts {
        DateTime::parse_from_rfc3339(s).unwrap().timestamp()
    }

    #[test]
    fn berlin_follows_daylight_saving_time_in_march_and_october() {
        let berlin = RegionClock::new("Europe/Berlin");
        // 2026-03-29 is the last Sunday of March: clocks go 02:00 CET → 03:00 CEST.
        let before = berlin.local(at("2026-03-28T06:30:00Z"));
        assert_eq!((before.hour, before.utc_offset_min), (7, 60));
        assert!(before.is_offpeak());
        let after = berlin.local(at("2026-03-29T06:30:00Z"));
        assert_eq!((after.hour, after.utc_offset_min), (8, 120));
        assert!(!after.is_offpeak(), "06:30 UTC is 08:30 in summer: peak");
        // Off-peak starts at 22:00 local: 21:00 UTC in winter, 20:00 UTC in summer.
        assert!(!berlin.local(at("2026-03-28T20:59:00Z")).is_offpeak());
        assert!(berlin.local(at("2026-03-28T21:00:00Z")).is_offpeak());
        assert!(berlin.local(at("2026-03-29T20:00:00Z")).is_offpeak());
        assert!(!berlin.local(at("2026-03-29T19:59:00Z")).is_offpeak());
        // 2026-10-25 is the last Sunday of October: clocks go back 03:00 → 02:00.
        let summer = berlin.local(at("2026-10-24T06:30:00Z"));
        assert_eq!((summer.hour, summer.utc_offset_min), (8, 120));
        assert!(!summer.is_offpeak());
        let winter = berlin.local(at("2026-10-25T06:30:00Z"));
        assert_eq!((winter.hour, winter.utc_offset_min), (7, 60));
        assert!(
            winter.is_offpeak(),
            "06:30 UTC is 07:30 in winter: still off-peak"
        );
        assert_eq!(winter.describe(), "07:30 UTC+01:00");
    }

    #[test]
    fn half_hour_and_western_zones_and_unknown_names() {
        let india = RegionClock::new("Asia/Kolkata").local(at("2026-06-01T02:29:00Z"));
        assert_eq!((india.hour, india.minute), (7, 59));
        assert!(india.is_offpeak());
        let india = RegionClock::new("Asia/Kolkata").local(at("2026-06-01T02:30:00Z"));
        assert!(!india.is_offpeak(), "08:00 local ends off-peak");
        let ny = RegionClock::new("America/New_York").local(at("2026-01-15T03:00:00Z"));
        assert_eq!((ny.hour, ny.utc_offset_min), (22, -300));
        assert!(ny.is_offpeak());
        assert_eq!(ny.describe(), "22:00 UTC-05:00");
        let unknown = RegionClock::new("Mars/Olympus_Mons");
        assert_eq!(unknown.timezone, "Mars/Olympus_Mons");
        assert_eq!(unknown.local(at("2026-01-15T03:00:00Z")).hour, 3);
    }
}
