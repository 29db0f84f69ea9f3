//! Injectable clocks: a wall clock and a monotonic one.
//!
//! Every time rule in the spec (decay tiers, TTLs, idle thresholds, recency
//! ordering) reads "now" through [`Clock`], so tests can pin or advance time
//! instead of sleeping. Rules the spec puts on a *monotonic* clock (the
//! channel history's mention-mode TTL, which must not jump when the wall
//! clock is set) read [`MonotonicClock`] instead.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// The current instant in UTC.
    fn now(&self) -> DateTime<Utc>;
}

/// A shared, cloneable clock.
pub type SharedClock = Arc<dyn Clock>;

/// The real system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// The system clock as a [`SharedClock`].
pub fn system_clock() -> SharedClock {
    Arc::new(SystemClock)
}

/// A clock that only moves when told to; for tests.
#[derive(Debug)]
pub struct ManualClock {
    micros: AtomicI64,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: DateTime<Utc>) -> Arc<Self> {
        Arc::new(Self {
            micros: AtomicI64::new(start.timestamp_micros()),
        })
    }

    /// Moves the clock forward (or back, with a negative duration).
    pub fn advance(&self, by: chrono::Duration) {
        let delta = by.num_microseconds().unwrap_or(i64::MAX);
        self.micros.fetch_add(delta, Ordering::SeqCst);
    }

    /// Sets the clock to `to`.
    pub fn set(&self, to: DateTime<Utc>) {
        self.micros.store(to.timestamp_micros(), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        Utc.timestamp_micros(self.micros.load(Ordering::SeqCst))
            .single()
            .unwrap_or_else(Utc::now)
    }
}

/// A monotonic time source: the time elapsed since a fixed origin. Never
/// goes backwards, unaffected by wall-clock changes; only differences
/// between two readings mean anything.
pub trait MonotonicClock: Send + Sync + 'static {
    /// Time since this clock's origin.
    fn elapsed(&self) -> Duration;
}

/// A shared, cloneable monotonic clock.
pub type SharedMonotonic = Arc<dyn MonotonicClock>;

/// The process's monotonic clock ([`Instant`]), counted from its creation.
#[derive(Debug, Clone, Copy)]
pub struct SystemMonotonic {
    origin: Instant,
}

impl MonotonicClock for SystemMonotonic {
    fn elapsed(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// The system monotonic clock as a [`SharedMonotonic`].
pub fn system_monotonic() -> SharedMonotonic {
    Arc::new(SystemMonotonic {
        origin: Instant::now(),
    })
}

/// A monotonic clock that only moves when told to; for tests.
#[derive(Debug, Default)]
pub struct ManualMonotonic {
    nanos: AtomicU64,
}

impl ManualMonotonic {
    /// A clock standing at its origin.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Moves the clock forward (it never goes back).
    pub fn advance(&self, by: Duration) {
        let delta = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        // Saturating: a test advancing by "forever" must not wrap around.
        let _ = self
            .nanos
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                Some(n.saturating_add(delta))
            });
    }
}

impl MonotonicClock for ManualMonotonic {
    fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }
}

/// Formats an instant the way every table stores it: RFC 3339, UTC, with
/// microseconds and a `Z` suffix. The fixed width makes the text sort in time
/// order, which the recency queries rely on.
pub fn format_ts(ts: DateTime<Utc>) -> String {
    ts.to_rfc3339_opts(SecondsFormat::Micros, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatted_timestamps_sort_chronologically() {
        let a = Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap();
        let b = a + chrono::Duration::microseconds(1);
        let c = a + chrono::Duration::days(400);
        assert!(format_ts(a) < format_ts(b));
        assert!(format_ts(b) < format_ts(c));
        assert_eq!(format_ts(a), "2026-01-02T03:04:05.000000Z");
    }

    #[test]
    fn manual_clock_advances() {
        let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let clock = ManualClock::new(start);
        clock.advance(chrono::Duration::hours(2));
        assert_eq!(clock.now(), start + chrono::Duration::hours(2));
    }

    #[test]
    fn manual_monotonic_only_moves_forward() {
        let mono = ManualMonotonic::new();
        assert_eq!(mono.elapsed(), Duration::ZERO);
        mono.advance(Duration::from_secs(300));
        assert_eq!(mono.elapsed(), Duration::from_secs(300));
        mono.advance(Duration::MAX);
        assert_eq!(mono.elapsed(), Duration::from_nanos(u64::MAX));
        let system = system_monotonic();
        let a = system.elapsed();
        assert!(system.elapsed() >= a);
    }
}
