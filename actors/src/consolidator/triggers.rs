//! When a path is due (pure; spec: "Consolidation"): the prefs path every
//! `prefs_every` messages past its offset, the history path once a session
//! with unconsolidated messages has been idle longer than
//! `history_idle_hours`. Idle time is measured from the session's last
//! recorded turn (the transcript metadata), so it survives a restart.

use chrono::{DateTime, Utc};

use crate::transcripts::SessionMeta;

/// Whether the prefs path is due: `turns - offset >= every`.
pub fn prefs_due(turns: u64, offset: u64, every: u64) -> bool {
    turns.saturating_sub(offset) >= every.max(1)
}

/// Seconds since the session's last turn (0 when the stamp is unreadable
/// or in the future).
pub fn idle_secs(meta: &SessionMeta, now: DateTime<Utc>) -> i64 {
    DateTime::parse_from_rfc3339(&meta.last_activity)
        .map(|t| (now - t.with_timezone(&Utc)).num_seconds().max(0))
        .unwrap_or(0)
}

/// Whether the history path is due: unconsolidated messages and idle for
/// longer than `idle_after`.
pub fn history_due(meta: &SessionMeta, now: DateTime<Utc>, idle_after: chrono::Duration) -> bool {
    if meta.turns <= meta.last_consolidated {
        return false;
    }
    let Ok(last) = DateTime::parse_from_rfc3339(&meta.last_activity) else {
        return false;
    };
    now - last.with_timezone(&Utc) > idle_after
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn meta(last: &str, turns: u64, done: u64) -> SessionMeta {
        SessionMeta {
            key: "s".into(),
            last_activity: last.into(),
            turns,
            last_consolidated: done,
            ..SessionMeta::default()
        }
    }

    #[test]
    fn prefs_every_thirty_messages_past_the_offset() {
        assert!(!prefs_due(29, 0, 30));
        assert!(prefs_due(30, 0, 30));
        assert!(!prefs_due(59, 30, 30));
        assert!(prefs_due(60, 30, 30));
        assert!(!prefs_due(10, 40, 30));
    }

    #[test]
    fn history_after_the_idle_threshold_with_new_messages() {
        let now = Utc.with_ymd_and_hms(2025, 1, 1, 12, 0, 0).unwrap();
        let three_h = chrono::Duration::hours(3);
        assert!(history_due(
            &meta("2025-01-01T08:59:00Z", 5, 0),
            now,
            three_h
        ));
        assert!(!history_due(
            &meta("2025-01-01T09:00:00Z", 5, 0),
            now,
            three_h
        ));
        assert!(!history_due(
            &meta("2025-01-01T10:00:00Z", 5, 0),
            now,
            three_h
        ));
        // Nothing new since the marker.
        assert!(!history_due(
            &meta("2025-01-01T01:00:00Z", 5, 5),
            now,
            three_h
        ));
        assert!(!history_due(&meta("garbage", 5, 0), now, three_h));
        assert_eq!(idle_secs(&meta("2025-01-01T11:59:00Z", 1, 0), now), 60);
        assert_eq!(idle_secs(&meta("2025-01-01T13:00:00Z", 1, 0), now), 0);
    }
}
