//! The live history settings and the tick schedule (pure).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The default tick interval.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);
/// Ticks between full-text index rebuilds.
pub const FTS_REBUILD_TICKS: u64 = 15;
/// Ticks between history prunes.
pub const PRUNE_TICKS: u64 = 1_440;

/// Largest accepted `history_idle_hours` (one year).
pub const MAX_IDLE_HOURS: f64 = 8_760.0;
/// Largest accepted `history_max_days` (a hundred years).
pub const MAX_HISTORY_DAYS: u32 = 36_500;

/// The settings behind `GET/PUT /api/memory/settings`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HistorySettings {
    /// A session idle this long gets its history consolidated.
    pub history_idle_hours: f64,
    /// Daily history files older than this are pruned.
    pub history_max_days: u32,
}

impl Default for HistorySettings {
    fn default() -> Self {
        Self {
            history_idle_hours: 3.0,
            history_max_days: 365,
        }
    }
}

impl HistorySettings {
    /// Range checks: idle hours in (0, 8760], max days in [1, 36500].
    pub fn validate(&self) -> Result<(), HeartbeatError> {
        let h = self.history_idle_hours;
        if !(h.is_finite() && h > 0.0 && h <= MAX_IDLE_HOURS) {
            return Err(HeartbeatError::InvalidSetting {
                key: "history_idle_hours",
                reason: format!("must be a number in (0, {MAX_IDLE_HOURS}], got {h}"),
            });
        }
        if !(1..=MAX_HISTORY_DAYS).contains(&self.history_max_days) {
            return Err(HeartbeatError::InvalidSetting {
                key: "history_max_days",
                reason: format!(
                    "must be between 1 and {MAX_HISTORY_DAYS}, got {}",
                    self.history_max_days
                ),
            });
        }
        Ok(())
    }

    /// The idle threshold as a duration.
    pub fn idle_after(&self) -> chrono::Duration {
        chrono::Duration::milliseconds((self.history_idle_hours * 3_600_000.0) as i64)
    }
}

/// What tick number `tick` (counted from 1) must do besides the idle check.
pub fn tick_duties(tick: u64) -> (bool, bool) {
    (
        tick > 0 && tick % FTS_REBUILD_TICKS == 0,
        tick > 0 && tick % PRUNE_TICKS == 0,
    )
}

/// Errors of the heartbeat.
#[derive(Debug, thiserror::Error)]
pub enum HeartbeatError {
    /// A setting is out of range.
    #[error("invalid {key}: {reason}")]
    InvalidSetting {
        /// The setting.
        key: &'static str,
        /// Why.
        reason: String,
    },
    /// The actor is not running.
    #[error("heartbeat unavailable: {0}")]
    Unavailable(String),
}

impl From<actix::MailboxError> for HeartbeatError {
    fn from(e: actix::MailboxError) -> Self {
        HeartbeatError::Unavailable(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duties_by_tick() {
        assert_eq!(tick_duties(1), (false, false));
        assert_eq!(tick_duties(14), (false, false));
        assert_eq!(tick_duties(15), (true, false));
        assert_eq!(tick_duties(30), (true, false));
        assert_eq!(tick_duties(1_439), (false, false));
        assert_eq!(tick_duties(1_440), (true, true));
        assert_eq!(tick_duties(2_880), (true, true));
    }

    #[test]
    fn settings_ranges() {
        assert!(HistorySettings::default().validate().is_ok());
        for (h, d) in [
            (0.0, 1),
            (-1.0, 1),
            (f64::NAN, 1),
            (8_761.0, 1),
            (1.0, 0),
            (1.0, 36_501),
        ] {
            let s = HistorySettings {
                history_idle_hours: h,
                history_max_days: d,
            };
            assert!(s.validate().is_err(), "{h} {d}");
        }
        let s = HistorySettings {
            history_idle_hours: 0.5,
            history_max_days: 30,
        };
        assert_eq!(s.idle_after(), chrono::Duration::minutes(30));
    }
}
